import type { AggregateStatus, Outcome } from './constants.ts';
import type { Definition, EffectiveParameters } from './definition.ts';
import { encodeMembers } from './members.ts';
import { replyOutputId, resultId, snapshotId } from './output-ids.ts';
import { hasRecipientDeadlines, recipientFates } from './responders.ts';

/**
 * The history of one aggregate, assembled from the items the state table keeps of it: its header
 * (a tombstone once closed), every recorded copy of its replies, its late and unknown marks, its
 * held replies. Pure: the same items always give the same timeline; what the items do not say
 * is named in {@link History.cannotTell} instead of guessed. docs/observability.md, "The history
 * of one aggregate", says where each event comes from and what it costs.
 */

/** The header's fields a history reads (the port's `AggregateHeader` has them all). */
export interface HistoryHeader {
  readonly aggregateId: string;
  readonly definition: string;
  readonly status: AggregateStatus;
  readonly outcome?: Outcome;
  readonly reason?: string;
  readonly completedBy?: string;
  readonly expected?: number;
  readonly openedAt: number;
  readonly deadline?: number;
  readonly closeBy?: number;
  readonly params: EffectiveParameters;
  readonly openedBy?: string;
  readonly shards?: number;
  readonly askedUpTo?: number;
  readonly dispatchedUpTo?: number;
  readonly completingAt?: number;
  readonly members?: readonly string[];
  readonly sources?: Readonly<Record<string, readonly string[]>>;
  readonly emitted?: readonly string[];
  readonly expiresAt?: number;
  /** Looking after the responders (engine/responders.ts, retries.ts): last heartbeats, retries, failed attempts asked again. */
  readonly beats?: Readonly<Record<string, number>>;
  readonly retried?: Readonly<Record<string, number>>;
  readonly failedAttempts?: Readonly<Record<string, number>>;
}

/** What a history is assembled from (the port's `AggregateRecords`, and what the caller knows). */
export interface HistoryInput {
  readonly aggregateId: string;
  readonly header?: HistoryHeader;
  /** The opening request's id (the header keeps it with its plan's digests). */
  readonly requestId?: string;
  readonly kept?: {
    readonly params?: EffectiveParameters;
    readonly firstDeadline?: number;
    readonly deadlineMoves?: number;
    readonly lastSnapshot?: number;
  };
  readonly request?: { readonly labels?: readonly (string | null)[]; readonly inS3?: boolean };
  readonly copies: readonly {
    readonly replyId: string;
    readonly receivedAt: number;
    readonly messageId?: string;
    readonly failure?: string;
    readonly pack?: string;
  }[];
  readonly marks: readonly { readonly replyId: string; readonly owes?: string }[];
  readonly held: readonly {
    readonly replyId: string;
    readonly messageId: string;
    readonly receivedAt: number;
    readonly dueAt: number;
    readonly claimed?: string;
  }[];
  /** The definition, when the caller knows it (the local runtime does; a stack's are in its functions). */
  readonly definition?: Definition;
  /** The output a result of each outcome goes to (complete.ts). */
  readonly resultOutputs?: Readonly<Record<string, string>>;
  /** Whether the items were read whole (every copy and mark), or from the aggregate's reply set only. */
  readonly whole?: boolean;
}

/** The kinds of events, in the order events of the same time are listed. */
export const HISTORY_EVENT_KINDS = [
  'opened',
  'asked',
  'held',
  'reply',
  'deadline-moved',
  'snapshot',
  'sealed',
  'recipients',
  'published',
  'closed',
  'late',
  'unknown',
] as const;
export type HistoryEventKind = (typeof HISTORY_EVENT_KINDS)[number];

/** One event of the timeline. `occurredAt` is absent when the table keeps no time for it. */
export interface HistoryEvent {
  readonly kind: HistoryEventKind;
  /** Epoch ms; absent when no time is stored (the text says what bounds it). */
  readonly occurredAt?: number;
  /** The event in words: what the CLI prints and the dashboard shows. */
  readonly text: string;
  readonly replyId?: string;
  /** Who the sub-request went to, or who the reply answered for (its sub-request's recipient or label). */
  readonly recipient?: string;
  /** Recorded copies of the reply (more than one: a pack's and another, after a redelivery). */
  readonly copies?: number;
  readonly failure?: string;
  readonly messageId?: string;
  /** Whether the reply is in the sealed member set (absent before the seal). */
  readonly member?: boolean;
  /** An output: its id, the output (queue role) it goes to, and whether it is known sent. */
  readonly output?: { readonly id: string; readonly to: string; readonly sent: boolean | 'unknown' };
  readonly [field: string]: unknown;
}

/** An aggregate's story. */
export interface History {
  readonly aggregateId: string;
  /** `not found`: nothing of it is stored (never opened, or its tombstone expired). */
  readonly status: AggregateStatus | 'not opened' | 'not found';
  readonly definition?: string;
  readonly outcome?: Outcome;
  readonly completedBy?: string;
  readonly expected?: number;
  /** Distinct replies recorded (late ones included). */
  readonly replies: number;
  readonly late: number;
  /** Epoch seconds (DynamoDB's TTL) after which the tombstone, and with it this history, may be gone. */
  readonly expiresAt?: number;
  readonly events: readonly HistoryEvent[];
  /** What the stored items cannot tell about this aggregate. */
  readonly cannotTell: readonly string[];
}

const iso = (at: number) => new Date(at).toISOString();

/** How many recipients a text names before it says "and N more". */
const NAMED_IN_TEXT = 10;

/**
 * Assembles the timeline of one aggregate from its stored items.
 *
 * @example
 * assembleHistory({ aggregateId: 'a', copies: [], marks: [], held: [] }).status; // 'not found'
 */
export function assembleHistory(input: HistoryInput): History {
  const { aggregateId, header } = input;
  const events: (HistoryEvent & { readonly order: number })[] = [];
  const push = (event: HistoryEvent, order = event.occurredAt ?? Number.POSITIVE_INFINITY) =>
    events.push({ ...event, order });
  const cannotTell = new Set<string>();
  const definition = input.definition?.name === header?.definition ? input.definition : undefined;

  for (const held of input.held) {
    const fate =
      held.claimed === 'counted'
        ? 'counted into the aggregate'
        : held.claimed === 'unknown'
          ? `reported unknown (unknown output ${replyOutputId(aggregateId, 'unknown', held.replyId)})`
          : `waiting for its aggregate until ${iso(held.dueAt)}`;
    push({
      kind: 'held',
      occurredAt: held.receivedAt,
      replyId: held.replyId,
      messageId: held.messageId,
      dueAt: held.dueAt,
      ...(held.claimed ? { claimed: held.claimed } : {}),
      text: `reply ${held.replyId} held before its aggregate opened (message ${held.messageId}): ${fate}`,
    });
  }

  if (!header) {
    const unknown = unknownEvents(input, new Map());
    for (const event of unknown) push(event);
    return finish(input, events, cannotTell, {
      status: input.held.length > 0 || unknown.length > 0 ? 'not opened' : 'not found',
      replies: 0,
      late: 0,
    });
  }

  // Opened.
  const params =
    Object.keys(header.params ?? {}).length > 0 ? header.params : (input.kept?.params ?? header.params ?? {});
  const firstDeadline = input.kept?.firstDeadline ?? header.deadline;
  const opening = header.openedBy
    ? `opened by reply ${header.openedBy} (self-starting)`
    : `opened by request ${input.requestId ?? '(id not kept)'}`;
  const paramText = Object.keys(params).length > 0 ? `, parameters ${JSON.stringify(params)}` : '';
  push(
    {
      kind: 'opened',
      occurredAt: header.openedAt,
      definition: header.definition,
      ...(input.requestId ? { requestId: input.requestId } : {}),
      ...(header.openedBy ? { openedBy: header.openedBy } : {}),
      params,
      ...(header.expected !== undefined ? { expected: header.expected } : {}),
      ...(firstDeadline !== undefined ? { deadline: firstDeadline } : {}),
      ...(header.closeBy !== undefined ? { closeByAt: header.closeBy } : {}),
      ...(header.shards !== undefined && header.shards > 1 ? { shards: header.shards } : {}),
      text: `${opening}: definition ${header.definition}${paramText}${
        header.expected !== undefined ? `, expecting ${header.expected} replies` : ''
      }${firstDeadline !== undefined ? `, deadline ${iso(firstDeadline)}` : ''}`,
    },
    header.openedAt - 0.5,
  );
  if (Object.keys(params).length === 0 && header.status === 'closed' && !input.kept?.params) {
    cannotTell.add('the parameters it was opened with: this tombstone was closed before they were kept');
  }

  // Sub-requests.
  const recipients = recipientsOf(input, definition);
  if (header.askedUpTo !== undefined && header.askedUpTo > 0) {
    const count = header.askedUpTo;
    const targets = Array.from({ length: count }, (_, i) => ({
      replyId: String(i),
      ...(recipients[i] ? { to: recipients[i] } : {}),
    }));
    const named = targets.filter((t) => t.to !== undefined);
    const list = named
      .slice(0, NAMED_IN_TEXT)
      .map((t) => `${t.replyId} → ${t.to}`)
      .join(', ');
    const more = named.length > NAMED_IN_TEXT ? ` and ${named.length - NAMED_IN_TEXT} more` : '';
    push(
      {
        kind: 'asked',
        count,
        ...(header.expected !== undefined ? { of: header.expected } : {}),
        subRequests: targets,
        text: `${count === header.expected ? 'sub-requests' : `${count} of ${header.expected ?? '?'} sub-requests`} sent${
          list ? `: ${list}${more}` : ' (recipients not stored)'
        }`,
      },
      header.openedAt - 0.25,
    );
    if (named.length < count) {
      cannotTell.add(
        input.request?.inS3
          ? 'the recipients of its sub-requests: the request naming them is kept in S3, which the history does not read'
          : 'the recipients of its sub-requests: the request named them and the definition does not keep the request',
      );
    }
    if (header.expected !== undefined && count < header.expected) {
      cannotTell.add(
        `whether sub-requests ${count} … ${header.expected - 1} were ever sent: none was sent when the fan-out stopped (their replies are missing, asked: false)`,
      );
    }
  }

  // Replies: every copy by reply id.
  const byId = new Map<string, HistoryInput['copies'][number][]>();
  for (const copy of input.copies) byId.set(copy.replyId, [...(byId.get(copy.replyId) ?? []), copy]);
  const sealed = header.members !== undefined;
  const members = new Set(header.members ?? []);
  const markOf = new Map(input.marks.map((m) => [m.replyId, m]));
  const unknownIds = new Set(
    input.marks.filter((m) => m.owes === 'unknown' || m.owes === 'sent').map((m) => m.replyId),
  );
  const lateIds = new Set<string>();
  for (const [replyId, copies] of byId) {
    if (unknownIds.has(replyId)) continue;
    const sorted = [...copies].sort((a, b) => a.receivedAt - b.receivedAt);
    const first = sorted[0] as (typeof sorted)[number];
    const failure = sorted.find((c) => c.failure !== undefined)?.failure;
    const member = sealed ? members.has(replyId) : undefined;
    const late = (sealed && !member) || markOf.has(replyId);
    if (late) lateIds.add(replyId);
    const recipient = /^\d+$/.test(replyId) ? recipients[Number(replyId)] : undefined;
    const wasHeld = first.receivedAt < header.openedAt;
    const afterDeadline = header.deadline !== undefined && first.receivedAt >= header.deadline;
    const parts = [
      `reply ${replyId}${recipient ? ` from ${recipient}` : ''} recorded`,
      first.messageId ? `(message ${first.messageId})` : '',
      failure !== undefined ? `— failed: ${failure}` : '',
      sorted.length > 1
        ? `— recorded ${sorted.length} times (${sorted.map(copyWhere).join(', ')}), counted once`
        : '',
      wasHeld ? '— held before its aggregate opened, counted at the open' : '',
      member === true ? '— a member' : '',
      late ? `— late${afterDeadline ? ' (after the deadline)' : ''}` : '',
    ];
    push({
      kind: 'reply',
      occurredAt: first.receivedAt,
      replyId,
      ...(recipient ? { recipient } : {}),
      copies: sorted.length,
      ...(first.messageId ? { messageId: first.messageId } : {}),
      ...(failure !== undefined ? { failure } : {}),
      ...(member !== undefined ? { member } : {}),
      ...(wasHeld ? { held: true } : {}),
      late,
      text: parts.filter(Boolean).join(' '),
    });
  }
  // A late mark with no recorded copy: a reply judged by the sealed header or the tombstone.
  for (const mark of input.marks) {
    if (!unknownIds.has(mark.replyId) && !byId.has(mark.replyId)) lateIds.add(mark.replyId);
  }

  // Deadline moves (the inactivity timeout).
  const moves = input.kept?.deadlineMoves ?? 0;
  if (moves > 0 && input.kept?.firstDeadline !== undefined) {
    push({
      kind: 'deadline-moved',
      occurredAt: input.kept.firstDeadline,
      moves,
      firstDeadlineAt: input.kept.firstDeadline,
      ...(header.deadline !== undefined ? { deadline: header.deadline } : {}),
      text: `deadline moved ${moves} ${moves === 1 ? 'time' : 'times'} by the inactivity timeout, from ${iso(input.kept.firstDeadline)}${
        header.deadline !== undefined ? ` to ${iso(header.deadline)}` : ''
      }`,
    });
    if (moves > 1)
      cannotTell.add(
        'when each move of the deadline after the first happened (only the first deadline and the count are kept)',
      );
  }

  // Snapshots.
  const snapshots = input.kept?.lastSnapshot ?? 0;
  const interval = definition?.snapshotIntervalSeconds;
  for (let period = 1; period <= snapshots; period += 1) {
    push({
      kind: 'snapshot',
      ...(interval !== undefined ? { occurredAt: header.openedAt + period * interval * 1000 } : {}),
      period,
      output: { id: snapshotId(aggregateId, period), to: 'status', sent: 'unknown' },
      text: `snapshot ${period} taken (output ${snapshotId(aggregateId, period)} on the status output)`,
    });
  }

  // The seal.
  if (header.completingAt !== undefined) {
    const memberList = header.members ?? [];
    push({
      kind: 'sealed',
      occurredAt: header.completingAt,
      ...(header.outcome ? { outcome: header.outcome } : {}),
      ...(header.completedBy ? { completedBy: header.completedBy } : {}),
      ...(header.reason !== undefined ? { reason: header.reason } : {}),
      members: memberList.length,
      memberSet: encodeMembers(memberList),
      ...(header.sources ? { packs: Object.keys(header.sources).length } : {}),
      text: `sealed ${header.outcome ?? ''} by ${header.completedBy ?? 'an unnamed rule'} with ${memberList.length} ${
        memberList.length === 1 ? 'member' : 'members'
      } ${encodeMembers(memberList)}${header.reason !== undefined ? `: ${header.reason}` : ''}`.replace(
        '  ',
        ' ',
      ),
    });
    const recipients = recipientsEvent(header, input.copies, header.completingAt);
    if (recipients) push(recipients);
    // The result.
    const to = (header.outcome && input.resultOutputs?.[header.outcome]) ?? header.outcome ?? 'result';
    const eventBridge = definition?.outputs.eventBridge;
    const channels = eventBridge
      ? 'its queue and the EventBridge bus'
      : eventBridge === false
        ? 'its queue'
        : undefined;
    const closed = header.status === 'closed';
    const partial = !closed && (header.emitted?.length ?? 0) > 0;
    push(
      {
        kind: 'published',
        output: { id: resultId(aggregateId), to, sent: closed ? true : partial ? 'unknown' : false },
        ...(header.emitted ? { emitted: header.emitted } : {}),
        text: closed
          ? `result ${resultId(aggregateId)} published on the ${to} output${channels ? ` (${channels})` : ''}, after the seal and before the close`
          : partial
            ? `result ${resultId(aggregateId)}: delivered on ${header.emitted?.join(' and ')} only, another channel failed (retried under the lease)`
            : `result ${resultId(aggregateId)} not published yet (the completer holds the lease)`,
      },
      header.completingAt + 0.25,
    );
    if (closed) {
      push(
        {
          kind: 'closed',
          ...(header.expiresAt !== undefined ? { expiresAt: header.expiresAt } : {}),
          text: `closed: the header is its tombstone${
            header.expiresAt !== undefined ? `, kept until ${iso(header.expiresAt * 1000)}` : ''
          }`,
        },
        header.completingAt + 0.5,
      );
      cannotTell.add(
        'when the result was published and the aggregate closed: the table keeps the seal time only',
      );
    }
  }

  // Late replies.
  for (const replyId of lateIds) {
    const copy = byId.get(replyId)?.sort((a, b) => a.receivedAt - b.receivedAt)[0];
    const mark = markOf.get(replyId);
    const id = replyOutputId(aggregateId, 'late', replyId);
    const policy = definition?.latePolicy;
    // A completer's mark says whether its output is owed; the reply handler's publishes with its message.
    const sent: boolean | 'unknown' =
      policy === 'discard' || mark?.owes === 'late' ? false : mark ? true : 'unknown';
    const what =
      policy === 'discard'
        ? 'discarded (latePolicy discard)'
        : mark?.owes === 'late'
          ? `late output ${id} owed, not known sent (a resumed completer sends it)`
          : mark
            ? `late output ${id} published`
            : `late output ${id} (being routed)`;
    const recipient = /^\d+$/.test(replyId) ? recipients[Number(replyId)] : undefined;
    push(
      {
        kind: 'late',
        ...(copy ? { occurredAt: copy.receivedAt } : {}),
        replyId,
        ...(recipient ? { recipient } : {}),
        output: { id, to: 'late', sent },
        text: `reply ${replyId}${recipient ? ` from ${recipient}` : ''} late: ${what}${
          copy ? '' : " — it came after the seal and was not recorded (its time is the late output's `at`)"
        }`,
      },
      copy ? copy.receivedAt + 0.1 : (header.completingAt ?? header.openedAt) + 0.75,
    );
    if (!copy)
      cannotTell.add(
        'when a reply judged late by the sealed header or the tombstone arrived (only its mark is kept)',
      );
  }
  for (const event of unknownEvents(input, byId)) push(event, header.openedAt - 0.75);

  if (!input.whole) {
    cannotTell.add(
      'duplicate copies and late marks without a recorded copy: this store gave one copy per reply',
    );
  }
  cannotTell.add(
    'deliveries that found a reply already recorded, and messages refused to the error output (bad input): they write nothing',
  );
  if (header.askedUpTo !== undefined && header.askedUpTo > 0) {
    cannotTell.add(
      header.params.retry !== undefined
        ? 'when each sub-request and each retry was sent: sends are not recorded (how many times each recipient was asked again is, under recipients)'
        : 'when each sub-request was sent: sends are not recorded',
    );
  }
  if (definition?.cancelOutstanding === true && header.completingAt !== undefined) {
    cannotTell.add(
      'which recipients were sent a cancellation notice: notices are not recorded (each recipient asked and without a reply at the seal is sent one)',
    );
  }
  return finish(input, events, cannotTell, {
    status: header.status,
    definition: header.definition,
    ...(header.outcome ? { outcome: header.outcome } : {}),
    ...(header.completedBy ? { completedBy: header.completedBy } : {}),
    ...(header.expected !== undefined ? { expected: header.expected } : {}),
    replies: [...byId.keys()].filter((id) => !unknownIds.has(id)).length,
    late: lateIds.size,
    ...(header.status === 'closed' && header.expiresAt !== undefined ? { expiresAt: header.expiresAt } : {}),
  });
}

/** Replies reported unknown (no aggregate when they came): their marks. */
function unknownEvents(input: HistoryInput, recorded: ReadonlyMap<string, unknown>): HistoryEvent[] {
  return input.marks
    .filter((m) => m.owes === 'unknown' || m.owes === 'sent')
    .map((m) => {
      const id = replyOutputId(input.aggregateId, 'unknown', m.replyId);
      const sent = m.owes === 'sent';
      return {
        kind: 'unknown' as const,
        replyId: m.replyId,
        output: { id, to: 'unknown', sent },
        text: `reply ${m.replyId} reported unknown before its aggregate opened: unknown output ${id} ${
          sent ? 'published' : 'owed, not known sent'
        }${recorded.has(m.replyId) ? '; a copy recorded after the open is never counted' : ''}`,
      };
    });
}

/** Who each index reply id's sub-request went to: the definition's recipients or target, or the kept labels. */
function recipientsOf(input: HistoryInput, definition: Definition | undefined): (string | undefined)[] {
  const count = input.header?.askedUpTo ?? input.header?.expected ?? 0;
  const labels = input.request?.labels;
  const fanOut = definition?.fanOut;
  return Array.from({ length: count }, (_, i) => {
    if (fanOut?.type === 'recipient-list' && fanOut.recipients) return fanOut.recipients[i];
    const label = labels?.[i];
    if (fanOut?.type === 'splitter') return label ? `${fanOut.target} (${label})` : fanOut.target;
    return label ?? undefined;
  });
}

/** Where a copy was recorded, for the text. */
function copyWhere(copy: HistoryInput['copies'][number]): string {
  return copy.pack
    ? `in pack ${copy.pack.slice(2)} at ${iso(copy.receivedAt)}`
    : `alone at ${iso(copy.receivedAt)}`;
}

function finish(
  input: HistoryInput,
  events: readonly (HistoryEvent & { readonly order: number })[],
  cannotTell: ReadonlySet<string>,
  summary: Omit<History, 'aggregateId' | 'events' | 'cannotTell'>,
): History {
  const rank = (kind: HistoryEventKind) => HISTORY_EVENT_KINDS.indexOf(kind);
  const sorted = [...events]
    .sort((a, b) => a.order - b.order || rank(a.kind) - rank(b.kind))
    .map(({ order: _, ...event }) => event);
  return { aggregateId: input.aggregateId, ...summary, events: sorted, cannotTell: [...cannotTell] };
}

/**
 * The seal's word on each recipient of a definition that looks after its responders: its fate
 * (engine/responders.ts, recipientFates, at the seal's time as the result gives it), its own
 * deadline, last heartbeat, retries and last failed attempt asked again. None for an aggregate
 * without `responders`.
 */
function recipientsEvent(
  header: HistoryHeader,
  copies: HistoryInput['copies'],
  sealedAt: number,
): HistoryEvent | undefined {
  const params = header.params;
  const looked =
    hasRecipientDeadlines(header) || params.retry !== undefined || params.heartbeatSeconds !== undefined;
  if (!looked || header.expected === undefined) return undefined;
  const members = new Set(header.members ?? []);
  const failures = new Map(copies.filter((c) => members.has(c.replyId)).map((c) => [c.replyId, c.failure]));
  const fates = recipientFates(
    header,
    [...members].map((replyId) => ({ replyId, failure: failures.get(replyId) })),
    sealedAt,
  );
  const said = fates.map((f) => {
    const parts = [`${f.replyId} ${f.fate}`];
    if (f.deadline !== undefined) parts.push(`own deadline ${iso(f.deadline)}`);
    if (f.heartbeatAt !== undefined) parts.push(`last heartbeat ${iso(f.heartbeatAt)}`);
    if (f.retries !== undefined) parts.push(`asked again ${f.retries} ${f.retries === 1 ? 'time' : 'times'}`);
    if (f.failedAttempt !== undefined) parts.push(`attempt ${f.failedAttempt} failed and was asked again`);
    return parts.join(', ');
  });
  const shown = said.slice(0, NAMED_IN_TEXT).join('; ');
  const more = said.length > NAMED_IN_TEXT ? ` and ${said.length - NAMED_IN_TEXT} more` : '';
  return {
    kind: 'recipients',
    occurredAt: sealedAt,
    fates,
    text: `recipients at the seal: ${shown}${more}`,
  };
}
