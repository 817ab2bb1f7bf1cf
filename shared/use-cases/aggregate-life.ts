import { type Definition, stateLifeSeconds } from '../engine/definition.ts';
import type { AggregateHeader } from '../ports.ts';
import type { FaninContext } from './context.ts';

/**
 * The lives of an aggregate (docs/data-plane.md, "Lives"): how long it may stay open, fixed in its
 * header at open (by a fan-out or a self-starting reply), and how long each of its items is kept.
 */

/**
 * Epoch seconds after which an item of the aggregate of `header` (a reply, a pack, a counter, a
 * block mark, the stored request, a late mark) may expire: past the latest moment the aggregate
 * can still be open as its header fixed it at open — its `closeBy`, its deadline, or the deadline
 * its parameters give (request `parameters` and `set-parameters` included, up to a year) — then a
 * completion lease, then the tombstone's retention, in which a late or retried message may still
 * read the item. Never less than that from now: an item written after the close (a late mark)
 * still lives its retention.
 */
export function replyExpiry(
  ctx: FaninContext,
  definition: Definition,
  header: Pick<AggregateHeader, 'openedAt' | 'closeBy' | 'deadline' | 'params'>,
): number {
  const timeout = header.params?.timeoutSeconds;
  const openUntil = Math.max(
    ctx.clock(),
    header.closeBy ?? 0,
    header.deadline ?? 0,
    timeout === undefined ? 0 : header.openedAt + timeout * 1000,
  );
  if (header.closeBy === undefined)
    // A header without closeBy (written before it was recorded): its definition's longest life.
    return (
      Math.ceil(openUntil / 1000) + stateLifeSeconds(definition, Math.ceil(ctx.completionLeaseMs / 1000))
    );
  return (
    Math.ceil(openUntil / 1000) +
    Math.ceil(ctx.completionLeaseMs / 1000) +
    definition.tombstoneRetentionSeconds
  );
}

/** When the sweeper ends an aggregate whatever its strategy: its allowed life, and never before its deadline decides (deadlineSettleSeconds after it). */
export function closeByOf(definition: Definition, openedAt: number, deadline: number | undefined): number {
  const decides = deadline === undefined ? 0 : deadline + (definition.deadlineSettleSeconds ?? 0) * 1000;
  return Math.max(decides, openedAt + definition.maxOpenSeconds * 1000);
}
