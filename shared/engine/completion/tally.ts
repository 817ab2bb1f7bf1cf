import type { EffectiveParameters } from '../effective-parameters.ts';

/**
 * The replies an aggregate's completion is decided on, counted: what every rule reads (the
 * aggregate's own state is its header; its stage in the lifecycle is lifecycle.ts's).
 */
export interface ReplyTally {
  /** Replies the aggregate expects, when known (initialized aggregates). */
  readonly expected?: number;
  /** Distinct replies recorded so far, failed replies included (they count toward "all arrived"). */
  readonly received: number;
  /** Failed replies among them (a responder's `fanin-failure`). @default 0 */
  readonly failed?: number;
  /**
   * Recipients with no reply whose own deadline has passed (engine/responders.ts): settled, so
   * they count toward "all arrived" as failed replies do, never toward a count, `first` or a score.
   * @default 0
   */
  readonly timedOut?: number;
  readonly params: EffectiveParameters;
  /**
   * Whether the definition's completion predicate holds on this set of replies, evaluated by the
   * caller (JSONata is asynchronous) on exactly the set the tally was counted from: `true` or
   * `false`, `{ error }` when it failed or exceeded its budget, `'unevaluated'` when the caller
   * asks the plan whether it must be evaluated (plan.ts, decide). Absent: it does not hold.
   */
  readonly predicate?: boolean | { readonly error: string } | 'unevaluated';
}

/** What a stored reply says of itself that counting it needs. */
export interface CountedReply {
  readonly late?: boolean;
  readonly definition?: string;
  readonly failure?: string;
  readonly score?: number;
}

/** The replies that count toward an aggregate: not found late, and not naming another definition. */
export function validReplies<R extends CountedReply>(
  header: { readonly definition: string },
  replies: readonly R[],
): R[] {
  return replies.filter((r) => !r.late && (r.definition === undefined || r.definition === header.definition));
}

/** The replies that succeeded: failed ones count toward "all arrived", never toward a count, `first` or a score. */
export function successesOf(tally: ReplyTally): number {
  return tally.received - (tally.failed ?? 0);
}

/**
 * Whether every expected reply is in (failed ones included) or settled as timed out by its
 * recipient's own deadline; never for an aggregate that expects no known number.
 */
export function allArrived(tally: ReplyTally): boolean {
  return tally.expected !== undefined && tally.received + (tally.timedOut ?? 0) >= tally.expected;
}

/** What completed an aggregate whose replies are all in: `all-settled` when some were settled as timed out. */
export function allArrivedBy(tally: ReplyTally): 'all-arrived' | 'all-settled' {
  return (tally.timedOut ?? 0) > 0 ? 'all-settled' : 'all-arrived';
}
