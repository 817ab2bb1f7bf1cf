import { CompletedBy } from './decision.ts';
import type { StrategyRule, StrategySpec } from './rule.ts';
import { allArrived, allArrivedBy, type ReplyTally, successesOf } from './tally.ts';

/** Whether N successful replies are in: the request's count (`parameters.count`) or the rule's own. */
export function countReached(tally: ReplyTally, count: number): boolean {
  return successesOf(tally) >= (tally.params.count ?? count);
}

/**
 * `count`: complete at N successful replies, or when every expected reply is in if fewer are
 * expected; at the deadline it is timed out.
 */
export const countRule: StrategyRule<StrategySpec<'count'>> = {
  onReply(spec, tally) {
    if (countReached(tally, spec.count)) return CompletedBy.COUNT;
    return allArrived(tally) ? allArrivedBy(tally) : undefined;
  },
  atDeadline: 'times-out',
  reads: () => 'when-counted',
  count: (spec) => spec.count,
};
