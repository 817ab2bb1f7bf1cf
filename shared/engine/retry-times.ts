import type { EffectiveParameters } from './effective-parameters.ts';

/**
 * When an aggregate's rounds of retries are due (engine/retries.ts): apart, so that the times an
 * aggregate is next due for anything (completion/deadline.ts) can read them.
 */

/** What of a header the retry times are computed from. */
export interface RetryTimes {
  readonly openedAt: number;
  readonly params: Pick<EffectiveParameters, 'retry'>;
  /** The last round of retries taken (absent: none). */
  readonly retryRound?: number | undefined;
}

/**
 * When round `round` (1 to `attempts`) of an aggregate's retries is due (epoch ms); `undefined`
 * past its last round or without retries.
 *
 * @example
 * retryAt({ openedAt: 0, params: { retry: { attempts: 3, intervalSeconds: 30, backoffRate: 2 } } }, 3); // 210000
 */
export function retryAt(header: RetryTimes, round: number): number | undefined {
  const retry = header.params.retry;
  if (retry === undefined || round < 1 || round > retry.attempts) return undefined;
  let at = header.openedAt;
  let interval = retry.intervalSeconds * 1000;
  for (let taken = 1; taken <= round; taken += 1) {
    at += interval;
    interval *= retry.backoffRate;
  }
  return Math.round(at);
}

/** When the next round of an aggregate's retries is due, if it has one left. */
export function nextRetryAt(header: RetryTimes): number | undefined {
  return retryAt(header, (header.retryRound ?? 0) + 1);
}
