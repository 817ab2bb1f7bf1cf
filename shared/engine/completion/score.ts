import { type InboundMessage, readValue } from '../correlation.ts';
import { thresholdRuleOf } from './plan.ts';
import type { CompletionSpec } from './spec.ts';

/**
 * A reply's score under a definition with a score threshold (`override`, or an `any` rule): a
 * number (or numeric string) read from the reply; `undefined` when the definition has no score or
 * the reply carries none.
 */
export async function scoreOf(
  definition: { readonly completion: CompletionSpec },
  message: InboundMessage,
): Promise<number | undefined> {
  const rule = thresholdRuleOf(definition.completion);
  if (rule === undefined) return undefined;
  const value = await readValue(rule.score, message);
  const score = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  return typeof score === 'number' && Number.isFinite(score) ? score : undefined;
}
