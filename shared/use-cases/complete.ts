import { aggregate, missingReplyIds, type ReplyRecord } from '../engine/aggregation.ts';
import { AggregateStatus, Outcome } from '../engine/constants.ts';
import { ExpressionError } from '../engine/errors.ts';
import { type AggregateHeader, type OutputMessage, OutputTooLargeError } from '../ports.ts';
import { type OutputRole, QueueRole } from '../topology/topology.ts';
import { type FaninContext, loadStored } from './context.ts';

/** The output each outcome goes to. */
const OUTPUT_OF: Record<Outcome, OutputRole> = {
  [Outcome.COMPLETED]: QueueRole.COMPLETED,
  [Outcome.TIMED_OUT]: QueueRole.TIMED_OUT,
  [Outcome.PURGED]: QueueRole.STATUS,
  [Outcome.FAILED]: QueueRole.ERROR,
};

/**
 * Completes an aggregate with an outcome, exactly once.
 *
 * Primary course:
 * 1. win the right to complete: the conditional transition open → completing (one winner);
 * 2. build the result from the replies, now frozen (no reply is recorded once it is not open);
 * 3. emit it under the aggregate's deterministic output id; record that it was emitted;
 * 4. remove the reply items and turn the header into a tombstone with its retention as TTL.
 *
 * A crash after step 1 leaves the header `completing` with a lease; once the lease runs out the
 * sweeper calls {@link resumeCompletion}, which skips step 2–3 when the result was emitted.
 *
 * @returns true when this call won (or there was nothing left to win because it is closed).
 */
export async function completeAggregate(
  ctx: FaninContext,
  aggregateId: string,
  outcome: Outcome,
): Promise<boolean> {
  const now = ctx.clock();
  const header = await ctx.store.beginCompletion(aggregateId, outcome, now, now + ctx.completionLeaseMs);
  if (!header) return false;
  await finish(ctx, header);
  return true;
}

/**
 * Finishes a completion whose owner crashed, once its lease has run out. A no-op for an
 * aggregate that is not completing, or whose lease still runs.
 */
export async function resumeCompletion(ctx: FaninContext, header: AggregateHeader): Promise<void> {
  if (header.status !== AggregateStatus.COMPLETING) return;
  const leaseEnd = (header.completingAt ?? 0) + ctx.completionLeaseMs;
  if (ctx.clock() < leaseEnd) return;
  await finish(ctx, header);
}

async function finish(ctx: FaninContext, header: AggregateHeader): Promise<void> {
  const definition = ctx.definitions.get(header.definition);
  let outcome = header.outcome ?? Outcome.COMPLETED;
  if (!header.emitted) {
    const message = await buildOutput(ctx, header);
    outcome = message.outcome;
    try {
      await ctx.outputs.publish(OUTPUT_OF[outcome], message, {
        eventBridge: definition?.outputs.eventBridge ?? false,
      });
    } catch (error) {
      if (!(error instanceof OutputTooLargeError)) throw error;
      // Retrying cannot make it fit: the aggregate fails, and says why, instead of staying open.
      outcome = Outcome.FAILED;
      const { result: _result, missing: _missing, ...summary } = message;
      await ctx.outputs.publish(QueueRole.ERROR, {
        ...summary,
        type: 'fanin.aggregate.failed',
        outcome,
        reason: error.message,
      });
    }
    await ctx.store.markEmitted(header.aggregateId);
  }
  const retention = definition?.tombstoneRetentionSeconds ?? 7 * 24 * 3600;
  await ctx.store.close(header.aggregateId, Math.floor(ctx.clock() / 1000) + retention, outcome);
  ctx.log.info('aggregate closed', {
    aggregateId: header.aggregateId,
    definition: header.definition,
    outcome,
  });
}

/** The terminal output of an aggregate: deterministic for a given set of replies. */
async function buildOutput(
  ctx: FaninContext,
  header: AggregateHeader,
): Promise<OutputMessage & { outcome: Outcome }> {
  const definition = ctx.definitions.get(header.definition);
  const stored = await ctx.store.listReplies(header.aggregateId);
  const replies: ReplyRecord[] = await Promise.all(
    stored.map(async (r) => ({
      replyId: r.replyId,
      body: JSON.parse(await loadStored(ctx, r)),
      receivedAt: r.receivedAt,
    })),
  );
  const storedRequest = header.requestId ? await ctx.store.getRequest(header.aggregateId) : undefined;
  const request: unknown = storedRequest ? JSON.parse(await loadStored(ctx, storedRequest)) : undefined;
  let outcome = header.outcome ?? Outcome.COMPLETED;
  const base = {
    // One id per aggregate whatever the outcome: a rebuilt output can never be a second, different one.
    id: `${header.aggregateId}/result`,
    aggregateId: header.aggregateId,
    definition: header.definition,
    openedAt: header.openedAt,
    closedAt: header.completingAt ?? ctx.clock(),
    counts: { expected: header.expected ?? null, received: replies.length, late: header.lateCount },
  };
  const missing =
    header.expected !== undefined && replies.length < header.expected
      ? labelMissing(
          missingReplyIds(
            header.expected,
            replies.map((r) => r.replyId),
          ),
          request,
        )
      : [];
  if (!definition) {
    return {
      ...base,
      type: 'fanin.aggregate.failed',
      outcome: Outcome.FAILED,
      reason: `unknown definition "${header.definition}"`,
      result: null,
      missing,
    };
  }
  let result: unknown;
  try {
    result = await aggregate(definition, replies, {
      aggregateId: header.aggregateId,
      definition: header.definition,
      ...(header.expected !== undefined ? { expected: header.expected } : {}),
      params: header.params,
      request,
    });
  } catch (error) {
    if (!(error instanceof ExpressionError)) throw error;
    outcome = Outcome.FAILED;
    return { ...base, type: 'fanin.aggregate.failed', outcome, reason: error.message, result: null, missing };
  }
  return { ...base, type: `fanin.aggregate.${outcome}`, outcome, result, missing };
}

/** Missing reply ids, with the recipient or item label the request gave them when there is one. */
function labelMissing(ids: string[], request: unknown): { replyId: string; label?: string }[] {
  const labels = (request as { labels?: unknown } | undefined)?.labels;
  return ids.map((replyId) => {
    const label = Array.isArray(labels) ? labels[Number(replyId)] : undefined;
    return typeof label === 'string' ? { replyId, label } : { replyId };
  });
}
