import { Outcome, Strategy } from './constants.ts';
import { type InboundMessage, readValue } from './correlation.ts';
import type { Definition, EffectiveParameters } from './definition.ts';
import { failuresBeyondTolerance } from './failures.ts';
import { thresholdRuleOf } from './rules.ts';

/** The part of an aggregate's state that completion depends on. */
export interface CompletionState {
  /** Replies the aggregate expects, when known (initialized aggregates). */
  readonly expected?: number;
  /** Distinct replies recorded so far, failed replies included (they count toward "all arrived"). */
  readonly received: number;
  /** Failed replies among them (a responder's `fanin-failure`). @default 0 */
  readonly failed?: number;
  readonly params: EffectiveParameters;
  /**
   * Whether the definition's completion predicate holds on this set of replies; evaluated by the
   * caller (JSONata is asynchronous), on exactly the set the state was read from.
   */
  readonly predicate?: boolean;
}

/** What happened to the aggregate. */
export type CompletionEvent =
  | { readonly type: 'reply'; readonly score?: number | undefined }
  | { readonly type: 'deadline' }
  | { readonly type: 'external' }
  | { readonly type: 'purge' };

/**
 * What completed an aggregate (Camel's `completedBy`), reported on every terminal output:
 * a rule of its completion (`all-arrived`, `count`, `first`, `threshold`, `predicate`), its
 * `deadline` (or the end of its allowed life), an `external` event or `complete` command, a
 * `purge`, or `failures` beyond the definition's tolerance.
 */
export const CompletedBy = {
  ALL_ARRIVED: 'all-arrived',
  COUNT: 'count',
  FIRST: 'first',
  THRESHOLD: 'threshold',
  PREDICATE: 'predicate',
  DEADLINE: 'deadline',
  EXTERNAL: 'external',
  PURGE: 'purge',
  FAILURES: 'failures',
} as const;
export type CompletedBy = (typeof CompletedBy)[keyof typeof CompletedBy];

/** How an aggregate ends: its outcome, what completed it, and why when it failed. */
export interface Completion {
  readonly outcome: Outcome;
  readonly completedBy: CompletedBy;
  readonly reason?: string;
}

/** Either keep waiting, or close the aggregate with an outcome. */
export type Decision = { readonly complete: false } | ({ readonly complete: true } & Completion);

const WAIT: Decision = { complete: false };
const done = (outcome: Outcome, completedBy: CompletedBy, reason?: string): Decision => ({
  complete: true,
  outcome,
  completedBy,
  ...(reason !== undefined ? { reason } : {}),
});

/**
 * The completeness condition (seed 002). A pure function of the definition, the state after the
 * event was recorded, and the event.
 *
 * - `all`: complete when every expected reply is in; at the deadline it is *timed out*.
 * - `count`: complete at N replies (or when all expected replies are in, if fewer); at the deadline it is timed out.
 * - `first`: the first reply completes it; later replies are late.
 * - `timeout`: wait for the deadline, then complete with what arrived (nothing: timed out).
 * - `override`: complete as soon as a reply scores at or beyond the threshold, else as `timeout`.
 * - `external`: complete only on an external event; at a deadline (if any) it is timed out.
 * - `predicate`: complete when the predicate holds on the replies so far; at the deadline timed out.
 * - `any`: the first of its rules (in the definition's order) that holds completes it; at the
 *   deadline timed out.
 *
 * Failed replies count toward "all arrived", never toward a count, `first` or a score. Beyond the
 * definition's tolerance they end the aggregate at once as `failed` (before any rule is looked
 * at). An external event completes any open aggregate; a purge ends it as purged.
 */
export function decide(definition: Definition, state: CompletionState, event: CompletionEvent): Decision {
  if (event.type === 'purge') return done(Outcome.PURGED, CompletedBy.PURGE);
  if (event.type === 'external') return done(Outcome.COMPLETED, CompletedBy.EXTERNAL);
  const failures = failuresBeyondTolerance(definition, state, false);
  if (failures !== undefined) return done(Outcome.FAILED, CompletedBy.FAILURES, failures);
  const decision =
    event.type === 'deadline' ? atDeadline(definition, state) : onReply(definition, state, event.score);
  if (!decision.complete) return decision;
  // Without an expected count, a share of failures is judged on the set the aggregate closes with.
  const share = failuresBeyondTolerance(definition, state, true);
  return share === undefined ? decision : done(Outcome.FAILED, CompletedBy.FAILURES, share);
}

function atDeadline(definition: Definition, state: CompletionState): Decision {
  switch (definition.completion.strategy) {
    case Strategy.TIMEOUT:
    case Strategy.OVERRIDE:
      return done(successesOf(state) > 0 ? Outcome.COMPLETED : Outcome.TIMED_OUT, CompletedBy.DEADLINE);
    default:
      return done(Outcome.TIMED_OUT, CompletedBy.DEADLINE);
  }
}

function onReply(definition: Definition, state: CompletionState, score: number | undefined): Decision {
  const completion = definition.completion;
  const successes = successesOf(state);
  const allArrived = state.expected !== undefined && state.received >= state.expected;
  const completed = (by: CompletedBy) => done(Outcome.COMPLETED, by);
  switch (completion.strategy) {
    case Strategy.ALL:
      return allArrived ? completed(CompletedBy.ALL_ARRIVED) : WAIT;
    case Strategy.COUNT:
      // N replies, or every reply there will be when fewer than N are expected.
      if (successes >= (state.params.count ?? completion.count)) return completed(CompletedBy.COUNT);
      return allArrived ? completed(CompletedBy.ALL_ARRIVED) : WAIT;
    case Strategy.FIRST:
      return successes >= 1 ? completed(CompletedBy.FIRST) : WAIT;
    case Strategy.TIMEOUT:
      return completion.completeWhenAllArrived && allArrived ? completed(CompletedBy.ALL_ARRIVED) : WAIT;
    case Strategy.OVERRIDE: {
      const threshold = state.params.threshold ?? completion.threshold;
      if (score !== undefined && meetsThreshold(completion.direction, score, threshold)) {
        return completed(CompletedBy.THRESHOLD);
      }
      return completion.completeWhenAllArrived && allArrived ? completed(CompletedBy.ALL_ARRIVED) : WAIT;
    }
    case Strategy.EXTERNAL:
      return WAIT;
    case Strategy.PREDICATE:
      return state.predicate === true ? completed(CompletedBy.PREDICATE) : WAIT;
    case Strategy.ANY:
      for (const rule of completion.rules) {
        switch (rule.rule) {
          case 'count':
            if (successes >= (state.params.count ?? rule.count)) return completed(CompletedBy.COUNT);
            break;
          case 'predicate':
            if (state.predicate === true) return completed(CompletedBy.PREDICATE);
            break;
          case 'threshold': {
            const threshold = state.params.threshold ?? rule.threshold;
            if (score !== undefined && meetsThreshold(rule.direction, score, threshold))
              return completed(CompletedBy.THRESHOLD);
            break;
          }
          case 'all-arrived':
            if (allArrived) return completed(CompletedBy.ALL_ARRIVED);
            break;
        }
      }
      return WAIT;
  }
}

function successesOf(state: CompletionState): number {
  return state.received - (state.failed ?? 0);
}

/** "At or beyond" the threshold, in the definition's direction. */
export function meetsThreshold(direction: 'below' | 'above', score: number, threshold: number): boolean {
  return direction === 'below' ? score <= threshold : score >= threshold;
}

/** When an open aggregate is next due: its deadline, or at the latest the end of its allowed life. */
export function openDueAt(times: {
  readonly deadline?: number;
  readonly closeBy?: number;
}): number | undefined {
  const due = [times.deadline, times.closeBy].filter((t): t is number => t !== undefined);
  return due.length === 0 ? undefined : Math.min(...due);
}

/**
 * When the deadline of an open aggregate decides (the one place computing it): its deadline plus
 * its `deadlineSettleSeconds` (replies sent before the deadline and handled by then are members:
 * late.ts, onTimeReplies, still ends membership at the deadline), or at the latest the end of its
 * allowed life. Its timer, its `due` entry, the reply path and the completer all take this.
 *
 * @example
 * decisionDueAt({ deadline: 60_000, closeBy: 900_000, params: { deadlineSettleSeconds: 200 } }); // 260000
 */
export function decisionDueAt(times: {
  readonly deadline?: number;
  readonly closeBy?: number;
  readonly params?: Pick<EffectiveParameters, 'deadlineSettleSeconds'>;
}): number | undefined {
  const settle = (times.params?.deadlineSettleSeconds ?? 0) * 1000;
  return openDueAt({
    ...(times.deadline !== undefined ? { deadline: times.deadline + settle } : {}),
    ...(times.closeBy !== undefined ? { closeBy: times.closeBy } : {}),
  });
}

/** The deadline (epoch ms) of an aggregate opened at `openedAt`, if it has a timeout. */
export function deadlineOf(params: EffectiveParameters, openedAt: number): number | undefined {
  return params.timeoutSeconds === undefined ? undefined : openedAt + params.timeoutSeconds * 1000;
}

/**
 * A reply's score under a definition with a score threshold (`override`, or an `any` rule): a number (or numeric string) read from the
 * reply; `undefined` when the definition has no score or the reply carries none.
 */
export async function scoreOf(definition: Definition, message: InboundMessage): Promise<number | undefined> {
  const rule = thresholdRuleOf(definition.completion);
  if (rule === undefined) return undefined;
  const value = await readValue(rule.score, message);
  const score = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  return typeof score === 'number' && Number.isFinite(score) ? score : undefined;
}
