import { CompletedBy } from './decision.ts';
import type { StrategyRule, StrategySpec } from './rule.ts';
import { successesOf } from './tally.ts';

/** `first`: the first successful reply completes it (later ones are late); at the deadline it is timed out. */
export const firstRule: StrategyRule<StrategySpec<'first'>> = {
  onReply: (_spec, tally) => (successesOf(tally) >= 1 ? CompletedBy.FIRST : undefined),
  atDeadline: 'times-out',
  reads: () => 'every-batch',
};
