import type { EffectiveParameters } from '../effective-parameters.ts';
import { CompletedBy } from './decision.ts';
import type { StrategyRule, StrategySpec, ThresholdRule } from './rule.ts';
import { allArrived, allArrivedBy } from './tally.ts';

/** "At or beyond" the threshold, in the definition's direction. */
export function meetsThreshold(direction: 'below' | 'above', score: number, threshold: number): boolean {
  return direction === 'below' ? score <= threshold : score >= threshold;
}

/** Whether a score meets a threshold rule: the request's threshold (`parameters.threshold`) or the rule's own. */
export function thresholdMet(
  rule: ThresholdRule,
  params: EffectiveParameters,
  score: number | undefined,
): boolean {
  return score !== undefined && meetsThreshold(rule.direction, score, params.threshold ?? rule.threshold);
}

/**
 * `override`: complete as soon as a reply scores at or beyond the threshold (the best score of the
 * set read), or, with `completeWhenAllArrived` (the default), once every expected reply is in;
 * at the deadline it completes with what arrived, as `timeout`.
 */
export const overrideRule: StrategyRule<StrategySpec<'override'>> = {
  onReply(spec, tally, score) {
    if (thresholdMet(spec, tally.params, score)) return CompletedBy.THRESHOLD;
    return spec.completeWhenAllArrived && allArrived(tally) ? allArrivedBy(tally) : undefined;
  },
  atDeadline: 'completes-with-what-arrived',
  reads: () => 'every-batch',
  threshold: (spec) => spec,
};
