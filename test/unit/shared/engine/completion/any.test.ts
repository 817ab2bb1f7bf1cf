import { describe, expect, it } from 'vitest';
import { anyRule } from '../../../../../shared/engine/completion/any.ts';
import { decide } from '../../../../../shared/engine/completion/plan.ts';
import type { ReplyTally } from '../../../../../shared/engine/completion/tally.ts';
import { effectiveParameters } from '../../../../../shared/engine/definition.ts';
import { aDefinition } from '../factories.ts';

const tallied = (received: number, extra: Partial<ReplyTally> = {}): ReplyTally => ({
  received,
  params: {},
  ...extra,
});

const anyOf = aDefinition({
  completion: {
    strategy: 'any',
    rules: [
      { rule: 'threshold', score: { source: 'path', path: '$.rate' }, threshold: 3, direction: 'below' },
      { rule: 'count', count: 3 },
      { rule: 'predicate', expression: 'true' },
      { rule: 'all-arrived' },
    ],
  },
});

describe('decide: any', () => {
  it('the first rule of the definition that holds is what completed it', () => {
    // Prepare: count, predicate and all-arrived all hold; the threshold (first) does not
    const current = tallied(3, { expected: 3, predicate: true });

    // Act
    const decision = decide(anyOf, current, { type: 'reply', score: 3.5 });

    // Assess
    expect(decision).toMatchObject({ completedBy: 'count' });
  });

  it.each([
    ['a score at the threshold', tallied(1, { expected: 5 }), 2.5, 'threshold'],
    ['the predicate', tallied(1, { expected: 5, predicate: true }), undefined, 'predicate'],
    ['every expected reply', tallied(2, { expected: 2 }), undefined, 'all-arrived'],
  ])('completes on %s alone', (_case, current, score, by) => {
    expect(decide(anyOf, current, { type: 'reply', score })).toMatchObject({ completedBy: by });
  });

  it('waits while no rule holds', () => {
    expect(
      decide(anyOf, tallied(2, { expected: 5, predicate: false }), { type: 'reply', score: 4 }),
    ).toStrictEqual({
      complete: false,
    });
  });

  it('a request’s count and threshold, stored in the parameters, replace the rules’ own', () => {
    // Prepare
    const params = { count: 2, threshold: 4 };

    // Act
    const byCount = decide(anyOf, tallied(2, { expected: 9, params }), { type: 'reply', score: 4.5 });
    const byThreshold = decide(anyOf, tallied(1, { expected: 9, params }), { type: 'reply', score: 3.9 });

    // Assess
    expect(byCount).toMatchObject({ completedBy: 'count' });
    expect(byThreshold).toMatchObject({ completedBy: 'threshold' });
  });

  it('its count and threshold are runtime parameters like the count and override strategies’', () => {
    expect(effectiveParameters(anyOf)).toStrictEqual({ count: 3, threshold: 3 });
    expect(effectiveParameters(anyOf, { count: 5 })).toStrictEqual({ count: 5, threshold: 3 });
  });
});

describe('the any rule', () => {
  const spec = anyOf.completion as Extract<typeof anyOf.completion, { strategy: 'any' }>;

  it.each([
    ['nothing holds', tallied(1, { expected: 5 }), 4, undefined],
    ['its threshold, first in its order', tallied(3, { expected: 3, predicate: true }), 2, 'threshold'],
    ['its count before its predicate', tallied(3, { expected: 5, predicate: true }), undefined, 'count'],
    [
      'its predicate before all-arrived',
      tallied(2, { expected: 2, predicate: true }),
      undefined,
      'predicate',
    ],
    ['all-arrived, last', tallied(2, { expected: 2 }), undefined, 'all-arrived'],
    [
      'a failed reply counts toward all-arrived only',
      tallied(3, { expected: 3, failed: 1 }),
      undefined,
      'all-arrived',
    ],
  ])('reports what held: %s', (_case, current, score, by) => {
    expect(anyRule.onReply(spec, current, score)).toBe(by);
  });

  it('times out at the deadline, reads every batch, and says the first of each rule kind', () => {
    expect(anyRule.atDeadline).toBe('times-out');
    expect(anyRule.reads(spec)).toBe('every-batch');
    expect(anyRule.count?.(spec)).toBe(3);
    expect(anyRule.threshold?.(spec)).toMatchObject({ threshold: 3, direction: 'below' });
    expect(anyRule.predicate?.(spec)).toBe('true');
    expect(anyRule.count?.({ strategy: 'any', rules: [{ rule: 'all-arrived' }] })).toBeUndefined();
  });
});
