import { countReached } from './count.ts';
import { CompletedBy } from './decision.ts';
import { thresholdMet } from './override.ts';
import type { StrategyRule, StrategySpec } from './rule.ts';
import { allArrived, allArrivedBy } from './tally.ts';

/**
 * `any`: the first of its rules (count, predicate, score threshold, all-arrived, in the
 * definition's order) that holds completes it, reported as that rule; at the deadline it is timed
 * out. Each rule holds as its own strategy's does.
 */
export const anyRule: StrategyRule<StrategySpec<'any'>> = {
  onReply(spec, tally, score) {
    for (const rule of spec.rules) {
      switch (rule.rule) {
        case 'count':
          if (countReached(tally, rule.count)) return CompletedBy.COUNT;
          break;
        case 'predicate':
          if (tally.predicate === true) return CompletedBy.PREDICATE;
          break;
        case 'threshold':
          if (thresholdMet(rule, tally.params, score)) return CompletedBy.THRESHOLD;
          break;
        case 'all-arrived':
          if (allArrived(tally)) return allArrivedBy(tally);
          break;
      }
    }
    return undefined;
  },
  atDeadline: 'times-out',
  reads: () => 'every-batch',
  count: (spec) => first(spec, 'count')?.count,
  threshold: (spec) => first(spec, 'threshold'),
  predicate: (spec) => first(spec, 'predicate')?.expression,
};

type AnyRule = StrategySpec<'any'>['rules'][number];

function first<K extends AnyRule['rule']>(spec: StrategySpec<'any'>, kind: K) {
  return spec.rules.find((rule): rule is Extract<AnyRule, { rule: K }> => rule.rule === kind);
}
