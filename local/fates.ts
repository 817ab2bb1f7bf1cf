import type { Definition } from '../shared/engine/definition.ts';
import { hasRecipientDeadlines, type RecipientFate, recipientFates } from '../shared/engine/responders.ts';
import type { AggregateRecords, StateStore } from '../shared/ports.ts';
import { aggregateHistory, readAggregateRecords } from '../shared/use-cases/history.ts';

/**
 * Each recipient's fate (engine/responders.ts) for `fanin show` and the dashboard, for a
 * definition with `responders`. A sealed aggregate's (completing or closed) are those its result
 * carries: the result is not stored, but its `recipients` are a function of the sealed header,
 * the member set and the seal's time (complete.ts builds them so), which the table keeps. An open
 * aggregate's are computed now, from its header and the replies recorded on time: the fates so far.
 */

/** One recipient's fate, with the label its sub-request had and, when known, how often it was sent again. */
export type RecipientRow = RecipientFate & {
  /** The recipient list's queue, or the item label the request gave it. */
  readonly label?: string;
  /** Times the sub-request was sent again (set once retries exist; shown when present). */
  readonly retries?: number;
};

/** The recipients of one aggregate, and when their fates were judged. */
export interface RecipientsView {
  /** Epoch ms the fates are judged at: the seal's time (the result's), or now for an open aggregate. */
  readonly at: number;
  /** True for an open aggregate: the fates so far, not a result's. */
  readonly soFar: boolean;
  readonly recipients: readonly RecipientRow[];
}

/** The records a view reads (`StateStore.readHistory`'s). */
export type FateRecords = Pick<AggregateRecords, 'header' | 'kept' | 'request' | 'copies' | 'marks'>;

/**
 * The recipients' fates of an aggregate, or `undefined` when its definition has no `responders`
 * (nothing changes for it) or nothing of it is stored. Without the definition (a stack's CLI that
 * does not know it), an aggregate whose parameters give recipients deadlines is taken to have them.
 */
export function recipientsView(
  records: FateRecords,
  definition: Definition | undefined,
  now: number,
): RecipientsView | undefined {
  const header = records.header;
  if (!header) return undefined;
  // The close removes `params`; the seal kept a copy of them, which the deadlines are computed from.
  const params =
    Object.keys(header.params ?? {}).length > 0
      ? header.params
      : (records.kept?.params ?? header.params ?? {});
  const responders = definition ? definition.responders !== undefined : hasRecipientDeadlines({ params });
  if (!responders) return undefined;
  const sealed = header.status !== 'open';
  const at = sealed ? (header.completingAt ?? now) : now;
  // Members: the sealed set; while open, every reply recorded on time (a marked one is late or unknown).
  const marked = new Set(records.marks.map((m) => m.replyId));
  const sealedSet = sealed && header.members ? new Set(header.members) : undefined;
  const members = records.copies.filter((c) =>
    sealedSet ? sealedSet.has(c.replyId) : !marked.has(c.replyId),
  );
  const labels = labelsOf(records, definition);
  const recipients = recipientFates({ ...header, params }, members, at).map((fate): RecipientRow => {
    const label = labels[Number(fate.replyId)];
    return label ? { ...fate, label } : fate;
  });
  return { at, soFar: !sealed, recipients };
}

/** The sub-requests' labels by reply id: those the request kept, else a recipient list's queues. */
function labelsOf(
  records: FateRecords,
  definition: Definition | undefined,
): readonly (string | null | undefined)[] {
  const kept = records.request?.labels;
  if (kept?.some((l) => l)) return kept;
  const fanOut = definition?.fanOut;
  return fanOut?.type === 'recipient-list' && fanOut.recipients ? fanOut.recipients : [];
}

/**
 * The fields `fanin show --json` and the dashboard's `/api/history` add: `recipients` (in the
 * result's form, each with its label), `recipientsAt` and `recipientsSoFar`. Nothing without a view.
 */
export function recipientsFields(view: RecipientsView | undefined): {
  recipients?: readonly RecipientRow[];
  recipientsAt?: number;
  recipientsSoFar?: boolean;
} {
  return view ? { recipients: view.recipients, recipientsAt: view.at, recipientsSoFar: view.soFar } : {};
}

/**
 * The dashboard's view of one aggregate: its history (shared/use-cases/history.ts) and, for a
 * definition with `responders`, its recipients' fates, from one read of its items.
 */
export async function aggregateView(
  store: Pick<StateStore, 'readHistory' | 'readAggregate' | 'listHeld'>,
  aggregateId: string,
  options: { readonly definitions?: ReadonlyMap<string, Definition>; readonly now?: number } = {},
) {
  const records = await readAggregateRecords(store, aggregateId);
  const history = await aggregateHistory(store, aggregateId, { ...options, records });
  const definition = records.header ? options.definitions?.get(records.header.definition) : undefined;
  return {
    ...history,
    ...recipientsFields(recipientsView(records, definition, options.now ?? Date.now())),
  };
}
