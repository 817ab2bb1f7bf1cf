import { AggregateStatus } from './constants.ts';

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
export interface LeasedAggregate {
  readonly status: AggregateStatus;
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
