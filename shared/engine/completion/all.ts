import type { StrategyRule, StrategySpec } from './rule.ts';
import { allArrived, allArrivedBy } from './tally.ts';

/**
 * `all`: complete when every expected reply is in, failed ones included, or its recipient's own
 * deadline has passed (`all-settled`); at the deadline it is timed out. Without a fan-out the request must say how many replies to expect.
 */
export const allRule: StrategyRule<StrategySpec<'all'>> = {
  onReply: (_spec, tally) => (allArrived(tally) ? allArrivedBy(tally) : undefined),
  atDeadline: 'times-out',
  reads: () => 'when-all-arrived',
  needsExpected: true,
};
