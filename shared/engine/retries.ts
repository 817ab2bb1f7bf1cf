import type { Definition } from './definition.ts';
import type { EffectiveParameters, RetryParameters } from './effective-parameters.ts';
import { MAX_FAN_OUT } from './limits.ts';
import { readPath } from './path.ts';
import { type RecipientPolicy, recipientListTargets } from './recipients.ts';
import { endOf, type RespondersHeader, recipientDeadline } from './responders.ts';
import { retryAt } from './retry-times.ts';

/**
 * Retries of sub-requests (a definition's `responders.retry`): a recipient that has not replied is
 * sent its sub-request again, with the same reply id and an attempt number, up to `attempts`
 * times, each before its own deadline. These are the pure parts: when each round of retries is
 * due, and who a round asks again.
 *
 * The rounds follow Step Functions' `Retry`: the first `intervalSeconds` after the open, each
 * next one `backoffRate` times the interval before it (30 s, 2.0: at 30 s, 90 s, 210 s). A round
 * is taken by one look at the aggregate (the timer, the sweeper or the reply path, whichever
 * finds it due): it sends the sub-request again to every recipient that was asked, has no reply
 * recorded (failed ones included: a failure is an answer), has not passed its own deadline and
 * has no heartbeat that still holds (one within `heartbeatSeconds`: it is working). A look that
 * comes late (a sweeper after a lost timer) takes only the last round due, once, so a recipient
 * is never sent two attempts at the same time.
 *
 * Each attempt is sent before it is recorded (the round and who it asked, on the header, only
 * while open): a crash between the two sends that round once more, with the same reply ids and
 * the same attempt numbers (and, on a FIFO queue, the same deduplication ids). A reply to any
 * attempt is the recipient's one reply.
 *
 * With `failedReplies`, a recipient whose reply is a failure is asked again too, while a round is
 * left for it before its deadline ({@link failedReplyCourse}): that failure is not its reply but
 * is kept on the header (`failedAttempts`, the last attempt that failed), and the next round asks
 * it again whatever its heartbeats say (a failure says it is no longer working). The failure of
 * its last attempt is recorded as its reply, as without `failedReplies`.
 */

/** The message attribute that carries a sub-request's attempt number: `2` on the first retry. */
export const ATTEMPT_ATTRIBUTE = 'fanin-attempt';

/** What of a header the retries are computed from. */
export interface RetryHeader extends RespondersHeader {
  readonly params: RespondersHeader['params'] & Pick<EffectiveParameters, 'retry'>;
  /** The last round of retries taken (absent: none). */
  readonly retryRound?: number | undefined;
  /** How many times each recipient was asked again, by reply id (absent: never). */
  readonly retried?: Readonly<Record<string, number>> | undefined;
  /** No sub-request at or past this index was ever sent. */
  readonly askedUpTo?: number | undefined;
  /** The last attempt of each recipient whose failed reply was kept for a retry, by reply id (`failedReplies`). */
  readonly failedAttempts?: Readonly<Record<string, number>> | undefined;
}

/** One round of retries to send: the round, and each recipient it asks again with its attempt number. */
export interface RetryRound {
  readonly round: number;
  readonly recipients: readonly { readonly replyId: string; readonly attempt: number }[];
}

/**
 * The round of retries a look at `now` takes, given the reply ids recorded (`replied`: on time,
 * failed ones included); `undefined` when none is due. A round may ask no one (every recipient
 * replied, is past its deadline or is working): it is still taken, so the next one falls due.
 */
export function retryRoundAt(
  header: RetryHeader,
  replied: ReadonlySet<string>,
  now: number,
): RetryRound | undefined {
  let round = header.retryRound ?? 0;
  // The last round due, not each one missed: a late look sends one attempt, never a burst.
  for (
    let next = retryAt(header, round + 1);
    next !== undefined && next <= now;
    next = retryAt(header, round + 1)
  )
    round += 1;
  if (round === (header.retryRound ?? 0)) return undefined;
  const expected = header.expected ?? 0;
  const asked = Math.min(header.askedUpTo ?? expected, expected);
  const beat = header.params.heartbeatSeconds;
  const recipients: { replyId: string; attempt: number }[] = [];
  for (let index = 0; index < asked; index += 1) {
    const replyId = String(index);
    if (replied.has(replyId)) continue;
    const deadline = recipientDeadline(header, replyId);
    if (deadline !== undefined && deadline <= now) continue;
    const sent = (header.retried?.[replyId] ?? 0) + 1;
    // A failure kept for its last attempt sent says the recipient is no longer working on it.
    const failed = (header.failedAttempts?.[replyId] ?? 0) >= sent;
    const lastBeat = header.beats?.[replyId];
    if (!failed && beat !== undefined && lastBeat !== undefined && lastBeat + beat * 1000 > now) continue;
    recipients.push({ replyId, attempt: sent + 1 });
  }
  return { round, recipients };
}

/**
 * The attempt a reply answers: its `fanin-attempt` (a responder copies the sub-request's `fanin-*`
 * attributes onto its reply), else 1, the fan-out's send. A value that is no attempt the
 * definition can send (not a whole number from 2 to `attempts + 1`) is taken for 1: a reply
 * cannot name an attempt that never was.
 *
 * @example
 * attemptOf({ 'fanin-attempt': '3' }, { attempts: 2 }); // 3
 * attemptOf({ 'fanin-attempt': '9' }, { attempts: 2 }); // 1
 */
export function attemptOf(
  attributes: Readonly<Record<string, string>>,
  retry: Pick<RetryParameters, 'attempts'> | undefined,
): number {
  const text = attributes[ATTEMPT_ATTRIBUTE];
  if (retry === undefined || text === undefined || !/^[1-9]\d?$/.test(text)) return 1;
  const attempt = Number(text);
  return attempt <= retry.attempts + 1 ? attempt : 1;
}

/**
 * What becomes of a failed reply of recipient `replyId` to attempt `attempt`, received at `at`,
 * on an open aggregate (`failedReplies`):
 *
 * - `record`: it is the recipient's reply, as without `failedReplies` — the definition does not
 *   retry failures, it came at or after the recipient's deadline (late, as any reply), or no
 *   round is left to send a next attempt before that deadline;
 * - `retry`: it is kept on the header, not recorded, and the recipient stays out — a round left
 *   before its deadline sends it a next attempt, or a later attempt was sent already (a failure
 *   of attempt 1 handled after attempt 2 went out is no answer to attempt 2);
 * - `copy`: a failure of this attempt, or a later one, is kept already (a redelivery, a
 *   responder's second send): it changes nothing.
 *
 * The rounds still to come are counted from the recorded ones (`retryRound`): a failure of an
 * attempt sent but not yet recorded (a round that crashed after its send) needs one round more,
 * since that round sends the same attempt again before the next one.
 */
export function failedReplyCourse(
  header: RetryHeader,
  replyId: string,
  attempt: number,
  at: number,
): 'record' | 'retry' | 'copy' {
  const retry = header.params.retry;
  if (retry?.failedReplies !== true) return 'record';
  const kept = header.failedAttempts?.[replyId];
  if (kept !== undefined && attempt <= kept) return 'copy';
  const deadline = recipientDeadline(header, replyId) ?? endOf(header);
  if (deadline !== undefined && at >= deadline) return 'record';
  const sent = (header.retried?.[replyId] ?? 0) + 1;
  if (attempt < sent) return 'retry';
  const next = retryAt(header, (header.retryRound ?? 0) + (attempt - sent) + 1);
  return next !== undefined && (deadline === undefined || next < deadline) ? 'retry' : 'record';
}

/** The retry counts after a round: each recipient it asked counted once more. */
export function retriedAfter(
  header: Pick<RetryHeader, 'retried'>,
  round: RetryRound,
): Record<string, number> {
  const retried: Record<string, number> = { ...(header.retried ?? {}) };
  for (const { replyId } of round.recipients) retried[replyId] = (retried[replyId] ?? 0) + 1;
  return retried;
}

/** One sub-request to send again: where it went and what it carried. */
export interface RetrySubRequest {
  readonly replyId: string;
  readonly attempt: number;
  readonly target: string;
  readonly body: unknown;
}

/**
 * The sub-requests a round sends again, recomputed from the definition and the request the
 * fan-out planned from (its stored `{ body }`), as the fan-out built them: a splitter's item at
 * the reply id's index to its one target; a recipient list's payload to the queue at that index
 * (the definition's recipients, else the request's, checked as the fan-out checks them). Nothing
 * from a reply or a heartbeat chooses a queue or a body.
 *
 * Empty when the request cannot be recomputed into the aggregate's sub-requests (the stored
 * request is gone, its items or recipients are not the `expected` ones).
 */
export function retrySubRequests(
  definition: Definition,
  header: Pick<RetryHeader, 'expected'>,
  request: unknown,
  policy: RecipientPolicy,
  round: RetryRound,
): RetrySubRequest[] {
  const fanOut = definition.fanOut;
  const body = (request as { body?: unknown } | undefined)?.body;
  if (!fanOut || fanOut.type === 'none' || body === null || typeof body !== 'object' || Array.isArray(body))
    return [];
  const record = body as Record<string, unknown>;
  let subRequestOf: (index: number) => { target: string; body: unknown } | undefined;
  if (fanOut.type === 'splitter') {
    const items = readPath(record, fanOut.itemsPath);
    if (!Array.isArray(items) || items.length !== header.expected) return [];
    subRequestOf = (index) => ({ target: fanOut.target, body: items[index] });
  } else {
    let targets: string[];
    try {
      targets = recipientListTargets(fanOut, record, policy, MAX_FAN_OUT).targets;
    } catch {
      return [];
    }
    if (targets.length !== header.expected) return [];
    const payload = record.payload ?? record;
    subRequestOf = (index) => {
      const target = targets[index];
      return target === undefined ? undefined : { target, body: payload };
    };
  }
  return round.recipients.flatMap(({ replyId, attempt }) => {
    const sub = subRequestOf(Number(replyId));
    return sub ? [{ replyId, attempt, ...sub }] : [];
  });
}
