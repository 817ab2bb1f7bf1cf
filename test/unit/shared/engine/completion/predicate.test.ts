import { describe, expect, it } from 'vitest';
import { decide } from '../../../../../shared/engine/completion/plan.ts';
import { predicateRule } from '../../../../../shared/engine/completion/predicate.ts';
import type { ReplyTally } from '../../../../../shared/engine/completion/tally.ts';
import { Outcome } from '../../../../../shared/engine/constants.ts';
import { aDefinition } from '../factories.ts';

const REPLY = { type: 'reply' } as const;
const DEADLINE = { type: 'deadline' } as const;
const tallied = (received: number, extra: Partial<ReplyTally> = {}): ReplyTally => ({
  received,
  params: {},
  ...extra,
});

const predicate = aDefinition({ completion: { strategy: 'predicate', expression: 'true' } });

describe('decide: predicate', () => {
  it('waits while the predicate does not hold, even with every expected reply in', () => {
    expect(decide(predicate, tallied(3, { expected: 3, predicate: false }), REPLY)).toStrictEqual({
      complete: false,
    });
  });

  it('completes, reported as the predicate, once it holds', () => {
    expect(decide(predicate, tallied(1, { predicate: true }), REPLY)).toStrictEqual({
      complete: true,
      outcome: Outcome.COMPLETED,
      completedBy: 'predicate',
    });
  });

  it('times out at the deadline', () => {
    expect(decide(predicate, tallied(2, { predicate: false }), DEADLINE)).toMatchObject({
      outcome: Outcome.TIMED_OUT,
      completedBy: 'deadline',
    });
  });
});

describe('the predicate rule', () => {
  const spec = { strategy: 'predicate', expression: '$count(replies) > 1' } as const;

  it.each([
    ['completes once its predicate holds', true, 'predicate'],
    ['waits while it does not', false, undefined],
    ['waits while it was not evaluated', undefined, undefined],
  ] as const)('%s', (_case, holds, by) => {
    const tally: ReplyTally = {
      received: 2,
      params: {},
      ...(holds !== undefined ? { predicate: holds } : {}),
    };
    expect(predicateRule.onReply(spec, tally, undefined)).toBe(by);
  });

  it('times out at the deadline, reads every batch and says its expression', () => {
    expect(predicateRule.atDeadline).toBe('times-out');
    expect(predicateRule.reads(spec)).toBe('every-batch');
    expect(predicateRule.predicate?.(spec)).toBe('$count(replies) > 1');
  });
});
