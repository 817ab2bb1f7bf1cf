import { describe, expect, it } from 'vitest';
import { nextDueAt } from '../../../../shared/engine/completion/deadline.ts';
import { nextRetryAt, type RetryTimes, retryAt } from '../../../../shared/engine/retry-times.ts';

/** When an aggregate's rounds of retries are due (docs/definitions.md, "Retries"). */

const times = (over: Partial<RetryTimes> = {}): RetryTimes => ({
  openedAt: 1_000,
  params: { retry: { attempts: 3, intervalSeconds: 10, backoffRate: 2 } },
  ...over,
});

describe('retry times', () => {
  it("are due on Step Functions' schedule: the interval after the open, each next interval times the backoff rate", () => {
    const h = times();
    expect([1, 2, 3, 4].map((round) => retryAt(h, round))).toEqual([11_000, 31_000, 71_000, undefined]);
    const even = times({ params: { retry: { attempts: 2, intervalSeconds: 10, backoffRate: 1 } } });
    expect([1, 2].map((round) => retryAt(even, round))).toEqual([11_000, 21_000]);
  });

  it("make the next round the aggregate's next due time while it comes first", () => {
    const at = (over: Partial<RetryTimes>, recipientsDue?: number) =>
      nextDueAt({
        ...times(over),
        deadline: 601_000,
        ...(recipientsDue !== undefined ? { recipientsDue } : {}),
      });
    expect(at({})).toBe(11_000);
    expect(at({ retryRound: 3 })).toBe(601_000);
    expect(at({}, 5_000)).toBe(5_000);
  });

  it('name the next round after the last one taken, and none past the last or without retries', () => {
    expect(nextRetryAt(times({ retryRound: 1 }))).toBe(31_000);
    expect(nextRetryAt(times({ retryRound: 3 }))).toBeUndefined();
    expect(nextRetryAt(times({ params: {} }))).toBeUndefined();
  });
});
