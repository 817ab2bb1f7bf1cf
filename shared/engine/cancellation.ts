import type { Definition } from './definition.ts';
import { MAX_FAN_OUT } from './limits.ts';
import { type RecipientPolicy, recipientListTargets } from './recipients.ts';

/** The attributes a cancellation notice carries besides the aggregate id, reply id and definition. */
export const CancellationAttribute = {
  /** Present on a cancellation notice only: the aggregate's outcome (`completed`, `timed-out`, `purged`, `failed`). */
  CANCELLED: 'fanin-cancelled',
  /** What ended the aggregate (`first`, `count`, `deadline`, `purge`, …: the result's `completedBy`). */
  COMPLETED_BY: 'fanin-completed-by',
} as const;

/** The `type` of a cancellation notice's JSON body. */
export const CANCELLATION_TYPE = 'fanin.cancellation';

/** One cancellation notice to send: the recipient's reply id and the queue its sub-request went to. */
export interface Cancellation {
  readonly replyId: string;
  readonly target: string;
}

/** What of an aggregate's sealed header decides who is cancelled. */
export interface CancellationHeader {
  /** Replies expected: one per sub-request. */
  readonly expected?: number | undefined;
  /** No sub-request at or past this index was ever sent. */
  readonly askedUpTo?: number | undefined;
}

/** Whether a definition sends cancellation notices when its aggregates end (the opt-in). */
export function cancels(definition: Definition | undefined): boolean {
  return definition?.cancelOutstanding === true;
}

/**
 * The cancellation notices an ended aggregate sends: one for each recipient that was sent a
 * sub-request (its reply id is below `askedUpTo`) and has no recorded reply (`replied`: every
 * reply id the completer's read found, failed or not, late or not), addressed to the queue its
 * sub-request went to, recomputed from the definition and the request the fan-out planned from
 * (a splitter: its one target; a recipient list: the definition's recipients, else the request's
 * `body.recipients`, checked as the fan-out checks them). Nothing from a reply chooses a queue.
 *
 * Empty for a definition that does not opt in, for a fan-out `none` (fanin sent nothing), for an
 * aggregate whose header predates `askedUpTo`, and when the request's recipients cannot be
 * recomputed (the stored request is gone or no longer passes the check).
 *
 * @param request the stored request as `{ body }` (only a recipient list naming none reads it)
 */
export function cancellationsOf(
  definition: Definition | undefined,
  header: CancellationHeader,
  replied: ReadonlySet<string>,
  request: unknown,
  policy: RecipientPolicy,
): Cancellation[] {
  if (!definition || !cancels(definition)) return [];
  const fanOut = definition.fanOut;
  const expected = header.expected;
  const asked = header.askedUpTo;
  if (!fanOut || fanOut.type === 'none' || expected === undefined || asked === undefined) return [];
  const upTo = Math.min(asked, expected);
  let targetOf: (index: number) => string | undefined;
  if (fanOut.type === 'splitter') {
    targetOf = () => fanOut.target;
  } else {
    const body = (request as { body?: unknown } | undefined)?.body;
    let targets: string[];
    try {
      targets = recipientListTargets(
        fanOut,
        body !== null && typeof body === 'object' && !Array.isArray(body)
          ? (body as Record<string, unknown>)
          : {},
        policy,
        MAX_FAN_OUT,
      ).targets;
    } catch {
      return [];
    }
    // The plan's recipients are the sub-requests: a list of another length is not this request's.
    if (targets.length !== expected) return [];
    targetOf = (index) => targets[index];
  }
  const notices: Cancellation[] = [];
  for (let index = 0; index < upTo; index += 1) {
    const replyId = String(index);
    if (replied.has(replyId)) continue;
    const target = targetOf(index);
    if (target !== undefined) notices.push({ replyId, target });
  }
  return notices;
}
