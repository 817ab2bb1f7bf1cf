import { predicateOf } from './completion/plan.ts';
import { readsRequest } from './completion/predicate-evaluation.ts';
import type { Definition } from './definition.ts';

/**
 * Whether an aggregate's request is kept: only a `custom` aggregation reads it, and only a
 * labelled splitter or a recipient list labels its missing replies from it, and only a retry
 * (`responders.retry`) sends its sub-requests again. Otherwise storing it would cost a write per
 * aggregate for nothing.
 */
export function keepsRequest(definition: Definition): boolean {
  const fanOut = definition.fanOut;
  return (
    definition.aggregation.algorithm === 'custom' ||
    // A retry sends the sub-request again: recomputed from the request (engine/retries.ts).
    definition.responders?.retry !== undefined ||
    fanOut?.type === 'recipient-list' ||
    (fanOut?.type === 'splitter' && fanOut.labelPath !== undefined) ||
    readsRequest(predicateOf(definition.completion) ?? '')
  );
}
