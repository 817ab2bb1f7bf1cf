import type { ValueSource } from '../value-source.ts';
import type { CompletedBy } from './decision.ts';
import type { CompletionSpec } from './spec.ts';
import type { ReplyTally } from './tally.ts';

/** A score threshold: a reply scoring at or beyond `threshold` in `direction` completes the aggregate. */
export interface ThresholdRule {
  readonly score: ValueSource;
  readonly threshold: number;
  readonly direction: 'below' | 'above';
}

/** The completion of a definition whose strategy is `K`. */
export type StrategySpec<K extends CompletionSpec['strategy']> = Extract<CompletionSpec, { strategy: K }>;

/**
 * When the reply path must read an aggregate's whole reply set (plan.ts, completionTrigger):
 * - `never`: no reply can complete it, only its deadline or a command;
 * - `when-all-arrived`: only once every expected reply is in (a large fan-out learns that from
 *   block marks or a counter);
 * - `when-counted`: only once its count of replies is in (a counter says when);
 * - `every-batch`: any batch may complete it (a score, a predicate, the first reply).
 */
export type SetRead = 'never' | 'when-all-arrived' | 'when-counted' | 'every-batch';

/**
 * One completion strategy, as the plan (plan.ts) combines it: every file of this folder named after
 * a strategy exports one. Failures beyond the tolerance, an external event and a purge are the
 * plan's, before and after any rule.
 */
export interface StrategyRule<S extends CompletionSpec = CompletionSpec> {
  /** What completed the aggregate after a reply, on the tally of its replies; `undefined`: not yet. */
  onReply(spec: S, tally: ReplyTally, score: number | undefined): CompletedBy | undefined;
  /**
   * The deadline's outcome: `times-out` (timed out whatever arrived), or
   * `completes-with-what-arrived` (completed with the successful replies, timed out with none).
   */
  readonly atDeadline: 'times-out' | 'completes-with-what-arrived';
  /** When a batch of replies needs the whole set read (see {@link SetRead}). */
  reads(spec: S): SetRead;
  /** Whether a request without fan-out must state how many replies to expect (`body.expected`). */
  readonly needsExpected?: boolean;
  /** The count of replies that completes it, which a request may set (`parameters.count`). */
  count?(spec: S): number | undefined;
  /** Its score threshold, which a request may set (`parameters.threshold`). */
  threshold?(spec: S): ThresholdRule | undefined;
  /** Its completion predicate (a JSONata expression). */
  predicate?(spec: S): string | undefined;
}
