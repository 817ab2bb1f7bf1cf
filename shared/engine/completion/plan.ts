import { Outcome, type Strategy } from '../constants.ts';
import type { EffectiveParameters } from '../effective-parameters.ts';
import { allRule } from './all.ts';
import { anyRule } from './any.ts';
import { countRule } from './count.ts';
import { CompletedBy, type CompletionEvent, type Decision, done, WAIT } from './decision.ts';
import { externalRule } from './external.ts';
import { failuresBeyondTolerance } from './failures.ts';
import { firstRule } from './first.ts';
import { meetsThreshold, overrideRule } from './override.ts';
import { predicateRule } from './predicate.ts';
import type { SetRead, StrategyRule, StrategySpec, ThresholdRule } from './rule.ts';
import type { CompletionSpec } from './spec.ts';
import { type CountedReply, type ReplyTally, successesOf, validReplies } from './tally.ts';
import { timeoutRule } from './timeout.ts';

/**
 * The completion plan: which rule decides an aggregate (one file of this folder per strategy, in
 * this table), when the reply path must read its whole reply set, and the one decision that
 * combines them with the failure tolerance, an external event and a purge. The use cases call it
 * through use-cases/decide-completion.ts.
 *
 * To add a strategy: its schema in definition.ts, its file here exporting a {@link StrategyRule},
 * one line in {@link RULES}, and its table test.
 */
const RULES: { readonly [K in Strategy]: StrategyRule<StrategySpec<K>> } = {
  all: allRule,
  count: countRule,
  first: firstRule,
  timeout: timeoutRule,
  override: overrideRule,
  external: externalRule,
  predicate: predicateRule,
  any: anyRule,
};

/**
 * What the plan reads of a definition (engine/definition.ts, Definition): its completion, its
 * tolerance of failed replies and its fan-out's type.
 */
export interface CompletionDefinition {
  readonly completion: CompletionSpec;
  readonly toleratedFailureCount?: number | undefined;
  readonly toleratedFailurePercentage?: number | undefined;
  readonly fanOut?: { readonly type: string } | undefined;
}

/** The rule of a completion, with its spec. */
function ruleOf<S extends CompletionSpec>(completion: S): StrategyRule<S> {
  return RULES[completion.strategy] as unknown as StrategyRule<S>;
}

/** What a decision asks of its caller before it can be taken: the predicate on the set it read. */
export interface PredicateRequest {
  readonly complete: false;
  /** The completion predicate to evaluate (predicate.ts, predicateHolds), then decide again. */
  readonly evaluate: string;
}

/**
 * The completeness condition. A pure function of the definition, the tally of the replies after
 * the event was recorded, and the event.
 *
 * - a purge ends it as purged; an external event completes any open aggregate;
 * - after a reply, its strategy's rule (the file named after it) says what completed it, if
 *   anything did; a definition with a predicate asks for it first when the tally's is
 *   `'unevaluated'` (a {@link PredicateRequest}), and a predicate that failed ends it `failed`;
 * - at the deadline, it completes with what arrived or is timed out, as its rule says.
 *
 * Failed replies count toward "all arrived", never toward a count, `first` or a score. The
 * definition's tolerance of them is checked once, here, on the decision: beyond it they end the
 * aggregate at once as `failed`; without an expected count, a share of failures is judged on the
 * set the aggregate would close with (failures.ts).
 */
export function decide(
  definition: CompletionDefinition,
  tally: ReplyTally & { readonly predicate?: Exclude<ReplyTally['predicate'], 'unevaluated'> },
  event: CompletionEvent,
): Decision;
export function decide(
  definition: CompletionDefinition,
  tally: ReplyTally,
  event: CompletionEvent,
): Decision | PredicateRequest;
export function decide(
  definition: CompletionDefinition,
  tally: ReplyTally,
  event: CompletionEvent,
): Decision | PredicateRequest {
  if (event.type === 'purge') return done(Outcome.PURGED, CompletedBy.PURGE);
  if (event.type === 'external') return done(Outcome.COMPLETED, CompletedBy.EXTERNAL);
  const decision =
    event.type === 'deadline'
      ? atDeadline(definition, tally, CompletedBy.DEADLINE)
      : event.type === 'settled'
        ? settled(definition, tally)
        : onReply(definition, tally, event);
  // A decision to complete judges the failures on the set it closes with; any other, on the set so far.
  const closing = decision.complete && decision.outcome !== Outcome.FAILED;
  const failures = failuresBeyondTolerance(definition, tally, closing);
  return failures === undefined ? decision : done(Outcome.FAILED, CompletedBy.FAILURES, failures);
}

function onReply(
  definition: CompletionDefinition,
  tally: ReplyTally,
  event: { readonly score?: number | undefined },
): Decision | PredicateRequest {
  const completion = definition.completion;
  const expression = predicateOf(completion);
  if (expression !== undefined && tally.predicate === 'unevaluated')
    return { complete: false, evaluate: expression };
  if (typeof tally.predicate === 'object')
    return done(Outcome.FAILED, CompletedBy.PREDICATE, `completion predicate: ${tally.predicate.error}`);
  const by = ruleOf(completion).onReply(completion, tally, event.score);
  if (by === undefined) return WAIT;
  // Every recipient replied or passed its own deadline, and none succeeded: nothing arrived that
  // counts, so it ends as its deadline would (timed out), never completed with nothing.
  if (by === CompletedBy.ALL_SETTLED && successesOf(tally) === 0)
    return atDeadline(definition, tally, CompletedBy.RESPONDERS_SETTLED);
  return done(Outcome.COMPLETED, by);
}

function atDeadline(definition: CompletionDefinition, tally: ReplyTally, by: CompletedBy): Decision {
  const completesWithWhatArrived = ruleOf(definition.completion).atDeadline === 'completes-with-what-arrived';
  return done(completesWithWhatArrived && successesOf(tally) > 0 ? Outcome.COMPLETED : Outcome.TIMED_OUT, by);
}

/**
 * Every recipient is settled (engine/responders.ts) and its rule, asked first as after a reply
 * (use-cases/decide-completion.ts), was not met: it ends as its deadline would,
 * `responders-settled`, since nothing that counts can come any more. Never for a rule that waits
 * for its deadline or an event whatever arrives (`timeout`, `external`): those still wait.
 */
function settled(definition: CompletionDefinition, tally: ReplyTally): Decision {
  if (ruleOf(definition.completion).reads(definition.completion) === 'never') return WAIT;
  return atDeadline(definition, tally, CompletedBy.RESPONDERS_SETTLED);
}

/**
 * The tally of an aggregate's replies (its valid ones counted) and their best score under the
 * definition's score threshold, if it has one: the decision takes the best score of the whole set,
 * so it never depends on which invocation read last.
 */
export function tallyOf(
  definition: CompletionDefinition,
  header: { readonly definition: string; readonly expected?: number; readonly params: EffectiveParameters },
  replies: readonly CountedReply[],
): { readonly tally: ReplyTally; readonly best: number | undefined } {
  const valid = validReplies(header, replies);
  let best: number | undefined;
  const threshold = thresholdRuleOf(definition.completion);
  if (threshold !== undefined) {
    const { direction } = threshold;
    for (const reply of valid) {
      if (reply.score === undefined) continue;
      if (best === undefined || meetsThreshold(direction, reply.score, best)) best = reply.score;
    }
  }
  return {
    tally: {
      received: valid.length,
      failed: valid.filter((r) => r.failure !== undefined).length,
      params: header.params,
      ...(header.expected !== undefined ? { expected: header.expected } : {}),
    },
    best,
  };
}

/** Fan-outs above this many index replies detect "all arrived" by blocks instead of reading every reply. */
export const LARGE_FAN_OUT = 128;

/** What a header says that the trigger needs: how many replies it expects, the request's count. */
export interface TriggerFacts {
  readonly expected?: number;
  readonly params: Pick<EffectiveParameters, 'count'>;
}

/**
 * When a batch of replies needs the whole reply set read (docs/hot-aggregates.md): a large
 * aggregate is looked at through block marks or a per-batch counter until the set can be
 * complete, so reads grow with its fan-out instead of its square.
 * - `never`: no reply can complete the aggregate (its rule reads `never`: strategy `external`, or
 *   `timeout` that waits for its deadline whatever arrives) — only the header is read;
 * - `blocks`: a large splitter or recipient-list fan-out waiting for all its replies — the set is
 *   read only once every block of reply ids is in (use-cases/completion-trigger.ts,
 *   blocksComplete), so reads stay proportional to the fan-out instead of growing with its square;
 * - `counter`: any other large aggregate completed by a count or by all its replies — one counter
 *   update per batch (not per reply) says when the set is worth reading;
 * - `read-all`: anything else.
 */
export function completionTrigger(
  definition: CompletionDefinition,
  header: TriggerFacts,
): 'never' | 'blocks' | 'counter' | 'read-all' {
  const reads: SetRead = ruleOf(definition.completion).reads(definition.completion);
  if (reads === 'never') return 'never';
  const indexed = definition.fanOut?.type === 'splitter' || definition.fanOut?.type === 'recipient-list';
  const waitsForAll = reads === 'when-all-arrived';
  const large = completionThreshold(definition, header) > LARGE_FAN_OUT;
  if (large && waitsForAll && indexed) return 'blocks';
  if (large && (waitsForAll || reads === 'when-counted')) return 'counter';
  return 'read-all';
}

/** How many replies complete the aggregate by count (its expected count, or the rule's N when it reads by count). */
export function completionThreshold(definition: CompletionDefinition, header: TriggerFacts): number {
  const expected = header.expected ?? Number.POSITIVE_INFINITY;
  const completion = definition.completion;
  const count = ruleOf(completion).count?.(completion);
  if (ruleOf(completion).reads(completion) === 'when-counted' && count !== undefined)
    return Math.min(expected, header.params.count ?? count);
  return header.expected ?? 0;
}

/** Whether a request without fan-out must state how many replies to expect (`body.expected`). */
export function needsExpected(completion: CompletionSpec): boolean {
  return ruleOf(completion).needsExpected === true;
}

/** The count that completes an aggregate under this completion (strategy `count`, or an `any` rule). */
export function countRuleOf(completion: CompletionSpec): number | undefined {
  return ruleOf(completion).count?.(completion);
}

/** The score threshold of this completion (strategy `override`, or an `any` rule). */
export function thresholdRuleOf(completion: CompletionSpec): ThresholdRule | undefined {
  return ruleOf(completion).threshold?.(completion);
}

/** The completion predicate (a JSONata expression) of this completion, if it has one. */
export function predicateOf(completion: CompletionSpec): string | undefined {
  return ruleOf(completion).predicate?.(completion);
}
