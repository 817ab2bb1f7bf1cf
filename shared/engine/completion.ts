import { Outcome, Strategy } from './constants.ts';
import { type InboundMessage, readValue } from './correlation.ts';
import type { Definition, EffectiveParameters } from './definition.ts';

/** The part of an aggregate's state that completion depends on. */
export interface CompletionState {
  /** Replies the aggregate expects, when known (initialized aggregates). */
  readonly expected?: number;
  /** Distinct replies recorded so far. */
  readonly received: number;
  readonly params: EffectiveParameters;
}

/** What happened to the aggregate. */
export type CompletionEvent =
  | { readonly type: 'reply'; readonly score?: number | undefined }
  | { readonly type: 'deadline' }
  | { readonly type: 'external' }
  | { readonly type: 'purge' };

/** Either keep waiting, or close the aggregate with an outcome. */
export type Decision = { readonly complete: false } | { readonly complete: true; readonly outcome: Outcome };

const WAIT: Decision = { complete: false };
const done = (outcome: Outcome): Decision => ({ complete: true, outcome });

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
 *
 * An external event completes any open aggregate; a purge ends it as purged.
 */
export function decide(definition: Definition, state: CompletionState, event: CompletionEvent): Decision {
  if (event.type === 'purge') return done(Outcome.PURGED);
  if (event.type === 'external') return done(Outcome.COMPLETED);
  const completion = definition.completion;
  if (event.type === 'deadline') {
    switch (completion.strategy) {
      case Strategy.TIMEOUT:
      case Strategy.OVERRIDE:
        return done(state.received > 0 ? Outcome.COMPLETED : Outcome.TIMED_OUT);
      default:
        return done(Outcome.TIMED_OUT);
    }
  }
  const allArrived = state.expected !== undefined && state.received >= state.expected;
  switch (completion.strategy) {
    case Strategy.ALL:
      return allArrived ? done(Outcome.COMPLETED) : WAIT;
    case Strategy.COUNT:
      // N replies, or every reply there will be when fewer than N are expected.
      return state.received >= (state.params.count ?? completion.count) || allArrived
        ? done(Outcome.COMPLETED)
        : WAIT;
    case Strategy.FIRST:
      return state.received >= 1 ? done(Outcome.COMPLETED) : WAIT;
    case Strategy.TIMEOUT:
      return completion.completeWhenAllArrived && allArrived ? done(Outcome.COMPLETED) : WAIT;
    case Strategy.OVERRIDE: {
      const threshold = state.params.threshold ?? completion.threshold;
      if (event.score !== undefined && meetsThreshold(completion.direction, event.score, threshold)) {
        return done(Outcome.COMPLETED);
      }
      return completion.completeWhenAllArrived && allArrived ? done(Outcome.COMPLETED) : WAIT;
    }
    case Strategy.EXTERNAL:
      return WAIT;
  }
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

/** The deadline (epoch ms) of an aggregate opened at `openedAt`, if it has a timeout. */
export function deadlineOf(params: EffectiveParameters, openedAt: number): number | undefined {
  return params.timeoutSeconds === undefined ? undefined : openedAt + params.timeoutSeconds * 1000;
}

/**
 * A reply's score under an `override` definition: a number (or numeric string) read from the
 * reply; `undefined` when the definition has no score or the reply carries none.
 */
export async function scoreOf(definition: Definition, message: InboundMessage): Promise<number | undefined> {
  if (definition.completion.strategy !== Strategy.OVERRIDE) return undefined;
  const value = await readValue(definition.completion.score, message);
  const score = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  return typeof score === 'number' && Number.isFinite(score) ? score : undefined;
}
