import { Strategy } from './constants.ts';
import type { CompletionSpec, ValueSource } from './definition.ts';

/** A score threshold: a reply scoring at or beyond `threshold` in `direction` completes the aggregate. */
export interface ThresholdRule {
  readonly score: ValueSource;
  readonly threshold: number;
  readonly direction: 'below' | 'above';
}

/** The count that completes an aggregate under this completion (strategy `count`, or an `any` rule). */
export function countRuleOf(completion: CompletionSpec): number | undefined {
  if (completion.strategy === Strategy.COUNT) return completion.count;
  if (completion.strategy !== Strategy.ANY) return undefined;
  for (const rule of completion.rules) if (rule.rule === 'count') return rule.count;
  return undefined;
}

/** The score threshold of this completion (strategy `override`, or an `any` rule). */
export function thresholdRuleOf(completion: CompletionSpec): ThresholdRule | undefined {
  if (completion.strategy === Strategy.OVERRIDE) return completion;
  if (completion.strategy !== Strategy.ANY) return undefined;
  for (const rule of completion.rules) if (rule.rule === 'threshold') return rule;
  return undefined;
}

/** The completion predicate (a JSONata expression) of this completion, if it has one. */
export function predicateOf(completion: CompletionSpec): string | undefined {
  if (completion.strategy === Strategy.PREDICATE) return completion.expression;
  if (completion.strategy !== Strategy.ANY) return undefined;
  for (const rule of completion.rules) if (rule.rule === 'predicate') return rule.expression;
  return undefined;
}
