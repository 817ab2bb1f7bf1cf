import type { Definition } from '../engine/definition.ts';
import { replyOutputId } from '../engine/output-ids.ts';
import { MetricName } from '../observability/metric-names.ts';
import type { AggregateHeader } from '../ports.ts';
import { QueueRole } from '../topology/topology.ts';
import { replyExpiry } from './aggregate-life.ts';
import type { FaninContext } from './context.ts';

/**
 * Late replies, outside the member set the seal fixed, go to the late output: from the reply
 * handler, which finds the aggregate sealed, and from the completer, which reads again after it.
 */

/**
 * Routes a late reply: marked on its item once (so the late count on the header counts it once),
 * published on every attempt (the output id is deterministic, so a retry after a crash between
 * the two is not lost and deduplicates).
 */
export async function routeLate(
  ctx: FaninContext,
  definition: Definition,
  header: AggregateHeader,
  replyId: string,
  message: {
    readonly messageId?: string;
    readonly body: string;
    readonly attributes?: Readonly<Record<string, string>>;
    readonly retained?: boolean;
  },
): Promise<void> {
  if (
    await ctx.store.markLate(header.aggregateId, replyId, replyExpiry(ctx, definition, header), header.shards)
  )
    ctx.metrics?.count(MetricName.REPLIES_LATE, definition.name);
  if (definition.latePolicy !== 'route') return;
  await ctx.outputs.publish(
    QueueRole.LATE,
    {
      id: replyOutputId(header.aggregateId, 'late', replyId),
      type: 'fanin.reply.late',
      aggregateId: header.aggregateId,
      definition: definition.name,
      replyId,
      reason: `aggregate is ${header.status}${header.outcome ? ` (${header.outcome})` : ''}: the reply came after its result was fixed`,
      aggregateStatus: header.status,
      aggregateOutcome: header.outcome ?? null,
      at: ctx.clock(),
      message,
    },
    { eventBridge: definition.outputs.eventBridge },
  );
}
