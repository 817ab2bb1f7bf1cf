import { deadlineOf, openDueAt } from './completion/deadline.ts';
import type { EffectiveParameters } from './effective-parameters.ts';

/**
 * Looking after the responders (a definition's `responders`): each recipient of a splitter or a
 * recipient list has its own reply deadline, shorter than the aggregate's, which a heartbeat on
 * its reply queue extends. These are the pure parts: when a recipient's deadline is, who is
 * settled at a time, and when the next recipient falls due.
 *
 * A recipient's deadline counts from the open: `openedAt + timeout` (its own timeout of the
 * definition's `responders.timeouts`, else `responders.timeoutSeconds`, fixed in the header's
 * parameters at open). A heartbeat received before that deadline moves it to the heartbeat plus
 * `heartbeatSeconds` when that is later; never past the aggregate's own deadline or the end of
 * its allowed life. The header keeps each recipient's last accepted heartbeat (`beats`), written
 * only while the aggregate is open, so every reader of a sealed aggregate sees the same deadlines.
 */

/** The message attribute that makes a message on a reply queue a heartbeat, not a reply. */
export const HEARTBEAT_ATTRIBUTE = 'fanin-heartbeat';

/** What of a header the recipients' deadlines are computed from. */
export interface RespondersHeader {
  readonly openedAt: number;
  readonly expected?: number | undefined;
  readonly closeBy?: number | undefined;
  readonly params: Pick<
    EffectiveParameters,
    'timeoutSeconds' | 'recipientTimeoutSeconds' | 'recipientTimeouts' | 'heartbeatSeconds'
  >;
  /** The last accepted heartbeat of each recipient (epoch ms), by reply id. */
  readonly beats?: Readonly<Record<string, number>> | undefined;
}

/** Whether an aggregate's recipients have deadlines of their own. */
export function hasRecipientDeadlines(header: Pick<RespondersHeader, 'params'>): boolean {
  return header.params.recipientTimeoutSeconds !== undefined || header.params.recipientTimeouts !== undefined;
}

/** The end no recipient deadline passes: the aggregate's absolute deadline or the end of its allowed life. */
export function endOf(header: RespondersHeader): number | undefined {
  const deadline = deadlineOf(header.params, header.openedAt);
  return openDueAt({
    ...(deadline !== undefined ? { deadline } : {}),
    ...(header.closeBy !== undefined ? { closeBy: header.closeBy } : {}),
  });
}

/** A recipient's timeout in seconds before any heartbeat: its own, else the definition's one value. */
function timeoutOf(header: RespondersHeader, replyId: string): number | undefined {
  const own = header.params.recipientTimeouts?.[Number(replyId)];
  return own ?? header.params.recipientTimeoutSeconds;
}

/**
 * The reply deadline of recipient `replyId` (epoch ms), heartbeats included; `undefined` when it
 * has none (the aggregate's deadline is its only one).
 *
 * @example
 * // opened at 0, 30 s per recipient, heartbeats extend by 20 s, the last one at 25 s
 * recipientDeadline({ openedAt: 0, params: { recipientTimeoutSeconds: 30, heartbeatSeconds: 20 },
 *   beats: { '0': 25_000 } }, '0'); // 45000
 */
export function recipientDeadline(header: RespondersHeader, replyId: string): number | undefined {
  const timeout = timeoutOf(header, replyId);
  if (timeout === undefined) return undefined;
  let due = header.openedAt + timeout * 1000;
  const beat = header.beats?.[replyId];
  const interval = header.params.heartbeatSeconds;
  if (beat !== undefined && interval !== undefined) due = Math.max(due, beat + interval * 1000);
  const end = endOf(header);
  return end === undefined ? due : Math.min(due, end);
}

/**
 * The deadline that settles recipient `replyId` on its own (epoch ms): its {@link recipientDeadline}
 * when that comes before the aggregate's own end; `undefined` when it has none, or when the
 * aggregate's deadline (or the end of its allowed life) comes first or at the same time: then it
 * is the aggregate's deadline that decides, as for an aggregate without recipient deadlines, and
 * the recipient is not timed out on its own.
 *
 * @example
 * // 10 s aggregate deadline, 8 s per recipient, a heartbeat at 7 s extends by 4 s: capped at 10 s
 * ownDeadline({ openedAt: 0, params: { timeoutSeconds: 10, recipientTimeoutSeconds: 8,
 *   heartbeatSeconds: 4 }, beats: { '0': 7_000 } }, '0'); // undefined
 */
export function ownDeadline(header: RespondersHeader, replyId: string): number | undefined {
  const due = recipientDeadline(header, replyId);
  const end = endOf(header);
  return due !== undefined && (end === undefined || due < end) ? due : undefined;
}

/** Who of an aggregate's recipients is settled at a time, and when the next one falls due. */
export interface Settlement {
  /** Recipients with no reply whose own deadline ({@link ownDeadline}) has passed, in reply-id order. */
  readonly timedOut: readonly string[];
  /** Whether every recipient has replied (failed or not) or passed its own deadline. */
  readonly allSettled: boolean;
  /** The earliest deadline after `at` of a recipient that has not replied, if any. */
  readonly nextDue?: number;
}

/**
 * The recipients' settlement at `at`, given the reply ids that are members (`replied`: on time,
 * failed ones included). A recipient is the reply id of a sub-request, `0` to `expected - 1`.
 * Nothing for an aggregate without recipient deadlines or without an expected count.
 */
export function settlementAt(header: RespondersHeader, replied: ReadonlySet<string>, at: number): Settlement {
  const expected = header.expected;
  if (!hasRecipientDeadlines(header) || expected === undefined) return { timedOut: [], allSettled: false };
  const timedOut: string[] = [];
  let nextDue: number | undefined;
  let open = 0;
  for (let index = 0; index < expected; index += 1) {
    const replyId = String(index);
    if (replied.has(replyId)) continue;
    const due = ownDeadline(header, replyId);
    if (due !== undefined && due <= at) {
      timedOut.push(replyId);
      continue;
    }
    open += 1;
    if (due !== undefined && (nextDue === undefined || due < nextDue)) nextDue = due;
  }
  return { timedOut, allSettled: open === 0, ...(nextDue !== undefined ? { nextDue } : {}) };
}

/**
 * Whether a heartbeat of `replyId` received at `at` extends its deadline: the aggregate has
 * heartbeats, the recipient has a deadline that has not passed at `at`, and the heartbeat is
 * newer than the one kept. A heartbeat after its recipient's deadline revives nothing: that
 * recipient is timed out.
 */
export function heartbeatExtends(header: RespondersHeader, replyId: string, at: number): boolean {
  if (header.params.heartbeatSeconds === undefined) return false;
  const due = recipientDeadline(header, replyId);
  if (due === undefined || at >= due) return false;
  const last = header.beats?.[replyId];
  return last === undefined || at > last;
}

/** What happened to one recipient, as a result (or `fanin show`) reports it. */
export interface RecipientFate {
  readonly replyId: string;
  /**
   * `replied`, `failed` (its reply carried `fanin-failure`), `timed-out` (its own deadline passed
   * with no reply, before the aggregate's), `no-reply` (none by the time the aggregate was
   * decided, its own deadline not passed, or none of its own before the aggregate's),
   * `not-asked` (its sub-request was never sent).
   */
  readonly fate: 'replied' | 'failed' | 'timed-out' | 'no-reply' | 'not-asked';
  /** Its own deadline (epoch ms), heartbeats included, when it has one. */
  readonly deadline?: number;
  /** Its last accepted heartbeat (epoch ms). */
  readonly heartbeatAt?: number;
  /** How many times its sub-request was sent again (`responders.retry`), when it was. */
  readonly retries?: number;
  /**
   * The last attempt whose failed reply was not its reply but asked again, or overtaken by a
   * later attempt (`responders.retry.failedReplies`), when one was: a recipient that failed,
   * then timed out or replied, says so.
   */
  readonly failedAttempt?: number;
}

/**
 * Each recipient's fate at `at` (a result: its seal's time, so every rebuild says the same), in
 * reply-id order, from the members (failed ones included) and the header.
 */
export function recipientFates(
  header: RespondersHeader & {
    readonly askedUpTo?: number | undefined;
    readonly retried?: Readonly<Record<string, number>> | undefined;
    readonly failedAttempts?: Readonly<Record<string, number>> | undefined;
  },
  members: readonly { readonly replyId: string; readonly failure?: string | undefined }[],
  at: number,
): RecipientFate[] {
  const expected = header.expected ?? 0;
  const byId = new Map(members.map((m) => [m.replyId, m]));
  const fates: RecipientFate[] = [];
  for (let index = 0; index < expected; index += 1) {
    const replyId = String(index);
    const member = byId.get(replyId);
    const deadline = recipientDeadline(header, replyId);
    const own = ownDeadline(header, replyId);
    const beat = header.beats?.[replyId];
    const retries = header.retried?.[replyId];
    const failedAttempt = header.failedAttempts?.[replyId];
    const fate: RecipientFate['fate'] = member
      ? member.failure === undefined
        ? 'replied'
        : 'failed'
      : header.askedUpTo !== undefined && index >= header.askedUpTo
        ? 'not-asked'
        : own !== undefined && own <= at
          ? 'timed-out'
          : 'no-reply';
    fates.push({
      replyId,
      fate,
      ...(deadline !== undefined ? { deadline } : {}),
      ...(beat !== undefined ? { heartbeatAt: beat } : {}),
      ...(retries !== undefined && retries > 0 ? { retries } : {}),
      ...(failedAttempt !== undefined ? { failedAttempt } : {}),
    });
  }
  return fates;
}
