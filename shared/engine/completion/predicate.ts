import { CompletedBy } from './decision.ts';
import type { StrategyRule, StrategySpec } from './rule.ts';

/**
 * `predicate`: complete when the definition's JSONata predicate holds on the replies so far
 * (evaluated by the caller on the set it read: predicate-evaluation.ts, predicateHolds); at the deadline it is
 * timed out. A predicate that fails ends the aggregate `failed` (plan.ts).
 */
export const predicateRule: StrategyRule<StrategySpec<'predicate'>> = {
  onReply: (_spec, tally) => (tally.predicate === true ? CompletedBy.PREDICATE : undefined),
  atDeadline: 'times-out',
  reads: () => 'every-batch',
  predicate: (spec) => spec.expression,
};
