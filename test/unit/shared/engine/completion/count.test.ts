import { describe, expect, it } from 'vitest';
import { countReached, countRule } from '../../../../../shared/engine/completion/count.ts';
import type { ReplyTally } from '../../../../../shared/engine/completion/tally.ts';

const spec = { strategy: 'count', count: 3 } as const;
const tally = (received: number, extra: Partial<ReplyTally> = {}): ReplyTally => ({
  received,
  params: {},
  ...extra,
});

describe('the count rule', () => {
  it.each([
    ['waits under N successful replies', tally(2, { expected: 9 }), undefined],
    ['completes at N successful replies', tally(3, { expected: 9 }), 'count'],
    ['does not count a failed reply toward N', tally(3, { expected: 9, failed: 1 }), undefined],
    ['completes when every expected reply is in, fewer than N', tally(2, { expected: 2 }), 'all-arrived'],
    ['takes the request’s count over its own', tally(2, { expected: 9, params: { count: 2 } }), 'count'],
    ['completes at N without an expected count', tally(3), 'count'],
  ])('%s', (_case, current, by) => {
    expect(countRule.onReply(spec, current, undefined)).toBe(by);
  });

  it('times out at the deadline, reads the set once its count is in, and says its count', () => {
    expect(countRule.atDeadline).toBe('times-out');
    expect(countRule.reads(spec)).toBe('when-counted');
    expect(countRule.count?.(spec)).toBe(3);
    expect(countRule.needsExpected).toBeUndefined();
  });

  it.each([
    [tally(4, { failed: 1 }), 3, true],
    [tally(4, { failed: 2 }), 3, false],
    [tally(1, { params: { count: 1 } }), 3, true],
  ])('countReached %#', (current, count, reached) => {
    expect(countReached(current, count)).toBe(reached);
  });
});
