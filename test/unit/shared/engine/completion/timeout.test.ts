import { describe, expect, it } from 'vitest';
import { timeoutRule } from '../../../../../shared/engine/completion/timeout.ts';

const early = { strategy: 'timeout', completeWhenAllArrived: true } as const;
const toTheEnd = { strategy: 'timeout', completeWhenAllArrived: false } as const;

describe('the timeout rule', () => {
  it.each([
    ['waits while replies are missing', early, { received: 1, expected: 2, params: {} }, undefined],
    [
      'completes once every expected reply is in',
      early,
      { received: 2, expected: 2, params: {} },
      'all-arrived',
    ],
    ['waits without an expected count', early, { received: 5, params: {} }, undefined],
    [
      'waits for its deadline whatever arrived, without completeWhenAllArrived',
      toTheEnd,
      { received: 2, expected: 2, params: {} },
      undefined,
    ],
  ])('%s', (_case, spec, current, by) => {
    expect(timeoutRule.onReply(spec, current, undefined)).toBe(by);
  });

  it('completes with what arrived at the deadline; reads the set only when all can be in, or never', () => {
    expect(timeoutRule.atDeadline).toBe('completes-with-what-arrived');
    expect(timeoutRule.reads(early)).toBe('when-all-arrived');
    expect(timeoutRule.reads(toTheEnd)).toBe('never');
  });
});
