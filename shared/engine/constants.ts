/**
 * Where an aggregate is in its life. `open` accepts replies; `completing` has been won by one
 * invocation that is emitting the result; `closed` is the tombstone that remains.
 */
export const AggregateStatus = {
  OPEN: 'open',
  COMPLETING: 'completing',
  CLOSED: 'closed',
} as const;
export type AggregateStatus = (typeof AggregateStatus)[keyof typeof AggregateStatus];

/** How an aggregate ended: completed or timed out, purged, or failed. */
export const Outcome = {
  COMPLETED: 'completed',
  TIMED_OUT: 'timed-out',
  PURGED: 'purged',
  FAILED: 'failed',
} as const;
export type Outcome = (typeof Outcome)[keyof typeof Outcome];

/** The channels an output goes out on: its SQS queue, and the EventBridge bus when enabled. */
export type OutputChannel = 'queue' | 'events';

/** Completion strategies: the aggregator's completeness condition. */
export const Strategy = {
  ALL: 'all',
  COUNT: 'count',
  FIRST: 'first',
  TIMEOUT: 'timeout',
  OVERRIDE: 'override',
  EXTERNAL: 'external',
  /** A JSONata predicate over the aggregate so far (Camel's `completionPredicate`). */
  PREDICATE: 'predicate',
  /** Any of several rules: count, predicate, score threshold, all arrived. */
  ANY: 'any',
} as const;
export type Strategy = (typeof Strategy)[keyof typeof Strategy];

/** Aggregation algorithms: how the recorded replies become the one result. */
export const Algorithm = {
  COLLECT: 'collect',
  BEST: 'best',
  CONDENSE: 'condense',
  CUSTOM: 'custom',
} as const;
export type Algorithm = (typeof Algorithm)[keyof typeof Algorithm];

/** Default limits for user-supplied JSONata expressions. */
export const EXPRESSION_LIMITS = { timeoutMs: 250, maxDepth: 200 } as const;
