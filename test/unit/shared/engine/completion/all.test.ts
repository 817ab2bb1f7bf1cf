import { describe, expect, it } from 'vitest';
import { allRule } from '../../../../../shared/engine/completion/all.ts';
import type { ReplyTally } from '../../../../../shared/engine/completion/tally.ts';

const spec = { strategy: 'all' } as const;
const tally = (received: number, expected?: number, failed = 0): ReplyTally => ({
  received,
  failed,
  params: {},
  ...(expected !== undefined ? { expected } : {}),
});

describe('the all rule', () => {
  it.each([
    ['waits while an expected reply is missing', tally(2, 3), undefined],
    ['completes with the last expected reply', tally(3, 3), 'all-arrived'],
    ['counts a failed reply as arrived', tally(3, 3, 1), 'all-arrived'],
    ['completes with more replies than expected', tally(4, 3), 'all-arrived'],
    ['completes an aggregate that expects none', tally(0, 0), 'all-arrived'],
    ['never completes without an expected count', tally(50), undefined],
  ])('%s', (_case, current, by) => {
    expect(allRule.onReply(spec, current, undefined)).toBe(by);
  });

  it('times out at the deadline, reads the set only once all replies can be in, and needs an expected count without fan-out', () => {
    expect(allRule.atDeadline).toBe('times-out');
    expect(allRule.reads(spec)).toBe('when-all-arrived');
    expect(allRule.needsExpected).toBe(true);
  });
});
