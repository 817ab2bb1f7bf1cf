import { deadlineOf } from './completion/deadline.ts';
import type { EffectiveParameters } from './definition.ts';

/** What the inactivity timeout reads of a recorded reply: when it arrived. */
export interface Activity {
  readonly receivedAt: number;
}

/**
 * The inactivity timeout (Camel's `completionTimeout`, Spring's `group-timeout`): an aggregate
 * times out when no reply has been recorded for `inactivityTimeoutSeconds`, or at its absolute
 * deadline, whichever comes first.
 *
 * No reply writes the header (docs/data-plane.md), so the deadline moves lazily: the header keeps
 * the next time to look (its `deadline` and `due` entry); when that time comes, the timer or the
 * sweeper reads the aggregate, takes its last activity from the recorded replies' `receivedAt`,
 * and either moves the deadline forward (one conditional update, only while open) or times the
 * aggregate out. These are the pure parts of that decision.
 */

/** The deadline an aggregate opens with: its absolute deadline, or sooner its inactivity timeout. */
export function openingDeadline(params: EffectiveParameters, openedAt: number): number | undefined {
  return earliest([deadlineOf(params, openedAt), idleUntil(params, openedAt)]);
}

/** The last activity of an aggregate: its opening, or its latest recorded reply. */
export function lastActivity(openedAt: number, replies: readonly Activity[]): number {
  let last = openedAt;
  for (const reply of replies) if (reply.receivedAt > last) last = reply.receivedAt;
  return last;
}

/**
 * When an open aggregate with an inactivity timeout falls due, given the replies recorded so far:
 * its last activity plus the inactivity timeout, its absolute deadline or the end of its allowed
 * life, whichever comes first. `undefined` when the aggregate has no inactivity timeout (its
 * deadline never moves).
 */
export function inactivityDeadline(
  header: { readonly params: EffectiveParameters; readonly openedAt: number; readonly closeBy?: number },
  replies: readonly Activity[],
): number | undefined {
  const idle = idleUntil(header.params, lastActivity(header.openedAt, replies));
  if (idle === undefined) return undefined;
  return earliest([idle, deadlineOf(header.params, header.openedAt), header.closeBy]);
}

function idleUntil(params: EffectiveParameters, since: number): number | undefined {
  return params.inactivityTimeoutSeconds === undefined
    ? undefined
    : since + params.inactivityTimeoutSeconds * 1000;
}

function earliest(times: readonly (number | undefined)[]): number | undefined {
  const defined = times.filter((t): t is number => t !== undefined);
  return defined.length === 0 ? undefined : Math.min(...defined);
}
