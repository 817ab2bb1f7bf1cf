import type { StrategyRule, StrategySpec } from './rule.ts';
import { allArrived, allArrivedBy } from './tally.ts';

/**
 * `timeout`: wait for the deadline, then complete with what arrived (nothing: timed out); with
 * `completeWhenAllArrived` (the default) it completes earlier once every expected reply is in.
 */
export const timeoutRule: StrategyRule<StrategySpec<'timeout'>> = {
  onReply: (spec, tally) =>
    spec.completeWhenAllArrived && allArrived(tally) ? allArrivedBy(tally) : undefined,
  atDeadline: 'completes-with-what-arrived',
  reads: (spec) => (spec.completeWhenAllArrived ? 'when-all-arrived' : 'never'),
};
