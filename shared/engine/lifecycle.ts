import { IllegalTransitionError } from '../errors.ts';
import { AggregateStatus, Classification, type Outcome } from './constants.ts';

/** The stored facts that decide what a correlated message is. */
export interface StoredAggregate {
  readonly status: AggregateStatus;
}

/**
 * Classifies a correlated message against stored state:
 * - no aggregate (and no tombstone): `unknown`;
 * - the same reply id already recorded: `duplicate` (whatever the aggregate's status);
 * - the aggregate is completing or closed: `late` — it never reopens;
 * - otherwise: `accepted`.
 */
export function classify(aggregate: StoredAggregate | undefined, alreadyRecorded: boolean): Classification {
  if (alreadyRecorded) return Classification.DUPLICATE;
  if (aggregate === undefined) return Classification.UNKNOWN;
  return aggregate.status === AggregateStatus.OPEN ? Classification.ACCEPTED : Classification.LATE;
}

/** The lifecycle's events: one invocation wins completion, then the aggregate closes with its outcome. */
export type LifecycleEvent =
  | { readonly type: 'begin-completion'; readonly outcome: Outcome }
  | { readonly type: 'close'; readonly outcome: Outcome };

/** Status and outcome of an aggregate. */
export interface LifecycleState {
  readonly status: AggregateStatus;
  readonly outcome?: Outcome;
}

/**
 * The lifecycle open → completing → closed as a pure function. The adapters persist each
 * transition with a conditional write on the status it starts from, so exactly one invocation
 * wins `begin-completion`, and `close` keeps the outcome that was won.
 */
export function transition(state: LifecycleState, event: LifecycleEvent): LifecycleState {
  if (event.type === 'begin-completion') {
    if (state.status !== AggregateStatus.OPEN) {
      throw new IllegalTransitionError(`cannot begin completion of a ${state.status} aggregate`);
    }
    return { status: AggregateStatus.COMPLETING, outcome: event.outcome };
  }
  if (state.status !== AggregateStatus.COMPLETING) {
    throw new IllegalTransitionError(`cannot close a ${state.status} aggregate`);
  }
  if (state.outcome !== undefined && state.outcome !== event.outcome) {
    throw new IllegalTransitionError(
      `cannot close as ${event.outcome} an aggregate that is completing as ${state.outcome}`,
    );
  }
  return { status: AggregateStatus.CLOSED, outcome: event.outcome };
}

/** The status an adapter's conditional write must find for an event to apply. */
export function requiredStatus(event: LifecycleEvent): AggregateStatus {
  return event.type === 'begin-completion' ? AggregateStatus.OPEN : AggregateStatus.COMPLETING;
}

/**
 * Where an aggregate stands in its completion, as its header says:
 * - `open`: it takes replies; nothing has sealed it;
 * - `completing`: sealed, and a completer holds its lease;
 * - `resumable`: sealed, and the lease ran out at `now` (its completer crashed or stalled): a
 *   resumer may take it over — only reported when `now` is given;
 * - `closed`: its outcome published (a tombstone).
 */
export type CompletionStage = 'open' | 'completing' | 'resumable' | 'closed';

/** The facts of a header that {@link completionStageOf} reads. */
export interface LeasedAggregate extends StoredAggregate {
  readonly lease?: string;
  readonly leaseUntil?: number;
}

/**
 * The one reading of a header's completion stage (see {@link CompletionStage}). A completing
 * header without a lease cannot be taken over, so it is never `resumable`.
 */
export function completionStageOf(header: LeasedAggregate, now?: number): CompletionStage {
  if (header.status === AggregateStatus.OPEN) return 'open';
  if (header.status !== AggregateStatus.COMPLETING) return 'closed';
  return now !== undefined && header.lease !== undefined && now >= (header.leaseUntil ?? 0)
    ? 'resumable'
    : 'completing';
}
