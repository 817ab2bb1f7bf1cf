import type { EffectiveParameters } from '../effective-parameters.ts';
import { nextRetryAt } from '../retry-times.ts';

/**
 * The times an aggregate's deadline decides at: its deadline from its open, when it is next due,
 * and when its deadline's decision is taken (the settle window after it).
 */

/** When an open aggregate is next due: its deadline, or at the latest the end of its allowed life. */
export function openDueAt(times: {
  readonly deadline?: number;
  readonly closeBy?: number;
}): number | undefined {
  const due = [times.deadline, times.closeBy].filter((t): t is number => t !== undefined);
  return due.length === 0 ? undefined : Math.min(...due);
}

/**
 * When the deadline of an open aggregate decides (the one place computing it): its deadline plus
 * its `deadlineSettleSeconds` (replies sent before the deadline and handled by then are members:
 * late.ts, onTimeReplies, still ends membership at the deadline), or at the latest the end of its
 * allowed life. Its timer, its `due` entry, the reply path and the completer all take this.
 *
 * @example
 * decisionDueAt({ deadline: 60_000, closeBy: 900_000, params: { deadlineSettleSeconds: 200 } }); // 260000
 */
export function decisionDueAt(times: {
  readonly deadline?: number;
  readonly closeBy?: number;
  readonly params?: Pick<EffectiveParameters, 'deadlineSettleSeconds'>;
}): number | undefined {
  const settle = (times.params?.deadlineSettleSeconds ?? 0) * 1000;
  return openDueAt({
    ...(times.deadline !== undefined ? { deadline: times.deadline + settle } : {}),
    ...(times.closeBy !== undefined ? { closeBy: times.closeBy } : {}),
  });
}

/**
 * When an open aggregate is next due for anything: its deadline's decision ({@link decisionDueAt})
 * or, sooner, the next deadline of a recipient that has not replied (`recipientsDue`, plus the
 * settle window as for the deadline: engine/responders.ts) or its next round of retries
 * (engine/retries.ts). What its timer, its `due` entry and the reply path act on; the deadline's
 * own decision still waits for {@link decisionDueAt}.
 */
export function nextDueAt(times: {
  readonly deadline?: number;
  readonly closeBy?: number;
  readonly recipientsDue?: number;
  readonly openedAt?: number;
  readonly retryRound?: number;
  readonly params?: Pick<EffectiveParameters, 'deadlineSettleSeconds' | 'retry'>;
}): number | undefined {
  const settle = (times.params?.deadlineSettleSeconds ?? 0) * 1000;
  const retry =
    times.openedAt !== undefined && times.params?.retry !== undefined
      ? nextRetryAt({ openedAt: times.openedAt, params: times.params, retryRound: times.retryRound })
      : undefined;
  const due = [
    decisionDueAt(times),
    times.recipientsDue !== undefined ? times.recipientsDue + settle : undefined,
    retry,
  ].filter((t): t is number => t !== undefined);
  return due.length === 0 ? undefined : Math.min(...due);
}

/** The deadline (epoch ms) of an aggregate opened at `openedAt`, if it has a timeout. */
export function deadlineOf(params: EffectiveParameters, openedAt: number): number | undefined {
  return params.timeoutSeconds === undefined ? undefined : openedAt + params.timeoutSeconds * 1000;
}
