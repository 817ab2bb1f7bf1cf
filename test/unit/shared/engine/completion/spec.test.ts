import { describe, expect, it } from 'vitest';
import { CompletionRuleSchema, CompletionSchema } from '../../../../../shared/engine/completion/spec.ts';

/** A definition's `completion` as docs/definitions.md ("Completion") lists each strategy's parameters. */
describe('the completion schema', () => {
  it.each([
    [{ strategy: 'all' }, { strategy: 'all' }],
    [
      { strategy: 'count', count: 3 },
      { strategy: 'count', count: 3 },
    ],
    [{ strategy: 'first' }, { strategy: 'first' }],
    [{ strategy: 'timeout' }, { strategy: 'timeout', completeWhenAllArrived: true }],
    [
      { strategy: 'timeout', completeWhenAllArrived: false },
      { strategy: 'timeout', completeWhenAllArrived: false },
    ],
    [
      { strategy: 'override', score: { source: 'path', path: '$.rate' }, threshold: 3, direction: 'below' },
      {
        strategy: 'override',
        score: { source: 'path', path: '$.rate' },
        threshold: 3,
        direction: 'below',
        completeWhenAllArrived: true,
      },
    ],
    [{ strategy: 'external' }, { strategy: 'external' }],
    [
      { strategy: 'predicate', expression: '$count(replies) >= 2' },
      { strategy: 'predicate', expression: '$count(replies) >= 2' },
    ],
    [
      { strategy: 'any', rules: [{ rule: 'count', count: 2 }, { rule: 'all-arrived' }] },
      { strategy: 'any', rules: [{ rule: 'count', count: 2 }, { rule: 'all-arrived' }] },
    ],
  ])('accepts %j, defaults applied', (input, parsed) => {
    expect(CompletionSchema.parse(input)).toEqual(parsed);
  });

  it.each([
    ['an unknown strategy', { strategy: 'most' }],
    ['a count of 0', { strategy: 'count', count: 0 }],
    ['a fractional count', { strategy: 'count', count: 1.5 }],
    ['a count above 100,000', { strategy: 'count', count: 100_001 }],
    [
      'an override without a direction',
      { strategy: 'override', score: { source: 'path', path: '$.r' }, threshold: 1 },
    ],
    [
      'an override with another direction',
      { strategy: 'override', score: { source: 'path', path: '$.r' }, threshold: 1, direction: 'up' },
    ],
    ['an empty predicate', { strategy: 'predicate', expression: '' }],
    ['a predicate over 4096 characters', { strategy: 'predicate', expression: 'a'.repeat(4097) }],
    ['an any without rules', { strategy: 'any', rules: [] }],
    [
      'an any with five rules',
      { strategy: 'any', rules: Array.from({ length: 5 }, () => ({ rule: 'all-arrived' })) },
    ],
    ['a field another strategy takes', { strategy: 'all', count: 2 }],
  ])('refuses %s', (_, input) => {
    expect(CompletionSchema.safeParse(input).success).toBe(false);
  });

  it.each([
    [{ rule: 'count', count: 100_000 }, true],
    [{ rule: 'predicate', expression: 'true' }, true],
    [
      {
        rule: 'threshold',
        score: { source: 'attribute', name: 'score' },
        threshold: 0.5,
        direction: 'above',
      },
      true,
    ],
    [{ rule: 'all-arrived' }, true],
    [{ rule: 'first' }, false],
    [{ rule: 'count' }, false],
  ])('takes %j as an any rule: %s', (rule, valid) => {
    expect(CompletionRuleSchema.safeParse(rule).success).toBe(valid);
  });
});
