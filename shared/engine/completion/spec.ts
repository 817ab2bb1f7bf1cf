import { z } from 'zod';
import { Strategy } from '../constants.ts';
import { ValueSourceSchema } from '../value-source.ts';

/**
 * The completion of a definition (its `completion` field): the schema of each strategy's
 * parameters. What each strategy does is its rule, in the file of this folder named after it.
 */

const ExpressionSource = z.string().min(1).max(4096);

/** One rule of an `any` completion; the first rule (in the definition's order) that holds completes it. */
export const CompletionRuleSchema = z.discriminatedUnion('rule', [
  z.strictObject({ rule: z.literal('count'), count: z.int().min(1).max(100_000) }),
  z.strictObject({ rule: z.literal('predicate'), expression: ExpressionSource }),
  z.strictObject({
    rule: z.literal('threshold'),
    score: ValueSourceSchema,
    threshold: z.number(),
    direction: z.enum(['below', 'above']),
  }),
  z.strictObject({ rule: z.literal('all-arrived') }),
]);
export type CompletionRule = z.infer<typeof CompletionRuleSchema>;

export const CompletionSchema = z.discriminatedUnion('strategy', [
  z.strictObject({ strategy: z.literal(Strategy.ALL) }),
  z.strictObject({ strategy: z.literal(Strategy.COUNT), count: z.int().min(1).max(100_000) }),
  z.strictObject({ strategy: z.literal(Strategy.FIRST) }),
  z.strictObject({
    strategy: z.literal(Strategy.TIMEOUT),
    /** Complete before the deadline when every expected reply is in (initialized aggregates only). */
    completeWhenAllArrived: z.boolean().default(true),
  }),
  z.strictObject({
    strategy: z.literal(Strategy.OVERRIDE),
    /** The reply's score: a path or expression over the reply body. */
    score: ValueSourceSchema,
    threshold: z.number(),
    /** `below`: a score at or under the threshold completes (a loan rate); `above`: at or over it. */
    direction: z.enum(['below', 'above']),
    completeWhenAllArrived: z.boolean().default(true),
  }),
  z.strictObject({ strategy: z.literal(Strategy.EXTERNAL) }),
  /** A JSONata predicate over the aggregate so far: truthy completes it (Camel's `completionPredicate`). */
  z.strictObject({ strategy: z.literal(Strategy.PREDICATE), expression: ExpressionSource }),
  /** Any of count, predicate, score threshold and all-arrived; the result says which one completed it. */
  z.strictObject({ strategy: z.literal(Strategy.ANY), rules: z.array(CompletionRuleSchema).min(1).max(4) }),
]);

/** A definition's completion, defaults applied. */
export type CompletionSpec = z.output<typeof CompletionSchema>;
