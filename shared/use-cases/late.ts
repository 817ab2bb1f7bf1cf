import { deadlineOf, openDueAt } from '../engine/completion.ts';
import type { Definition } from '../engine/definition.ts';
import { replyOutputId } from '../engine/output-ids.ts';
import { MetricName } from '../observability/metric-names.ts';
import type { AggregateHeader, AggregateSnapshot, StoredReply } from '../ports.ts';
import { QueueRole } from '../topology/topology.ts';
import { replyExpiry } from './aggregate-life.ts';
import type { FaninContext } from './context.ts';
import { validReplies } from './evaluate.ts';

/**
 * Late replies go to the late output: replies outside the member set the seal fixed — from the
 * reply handler, which finds the aggregate sealed, and from the completer, which reads again after
 * it — and replies received after the deadline in force ({@link onTimeReplies}), which no seal
 * takes as members, whoever seals and whenever (the completer routes them).
 */

/**
 * The replies received before the deadline in force when each arrived: the only ones any seal
 * may take as members (docs/wire-contract.md, "Late replies"). A reply's arrival is its
 * `receivedAt`, the clock of the invocation that recorded it (a held reply's: when it was held);
 * the deadline is the one the header fixed at open (the opener's clock) or the end of its allowed
 * life (`closeBy`), whichever comes first. With an inactivity timeout the deadline in force moves
 * with each reply received on time (last on-time arrival + the timeout, never past the absolute
 * deadline or `closeBy`); a reply received after it neither counts nor moves it. A function of the
 * stored replies alone: the reply handler, the timer, the sweeper and a control command all take
 * the same members from the same replies.
 *
 * @example
 * // deadline 10 s after the open at 0, replies received at 4 s and 12 s: only the first counts
 * onTimeReplies(header, replies).map((r) => r.replyId); // ['0']
 */
export function onTimeReplies<R extends Pick<StoredReply, 'receivedAt'>>(
  header: Pick<AggregateHeader, 'params' | 'openedAt' | 'closeBy'>,
  replies: readonly R[],
): R[] {
  const params = header.params ?? {};
  const end = openDueAt({
    ...(params.timeoutSeconds !== undefined ? { deadline: deadlineOf(params, header.openedAt) } : {}),
    ...(header.closeBy !== undefined ? { closeBy: header.closeBy } : {}),
  });
  const idle = params.inactivityTimeoutSeconds;
  if (idle === undefined) return end === undefined ? [...replies] : replies.filter((r) => r.receivedAt < end);
  const onTime = new Set<R>();
  let last = header.openedAt;
  for (const reply of [...replies].sort((a, b) => a.receivedAt - b.receivedAt)) {
    const inForce = Math.min(last + idle * 1000, end ?? Number.POSITIVE_INFINITY);
    if (reply.receivedAt >= inForce) continue;
    onTime.add(reply);
    last = Math.max(last, reply.receivedAt);
  }
  return replies.filter((r) => onTime.has(r));
}

/**
 * An aggregate as read, with only the replies that may be members: valid ones (evaluate.ts)
 * received before the deadline in force. What completion is evaluated on.
 */
export function onTime(snapshot: AggregateSnapshot): AggregateSnapshot {
  const { header } = snapshot;
  return header
    ? { header, replies: onTimeReplies(header, validReplies(header, snapshot.replies)) }
    : snapshot;
}

/** The late output's reason for a reply received after the deadline in force. */
export const AFTER_DEADLINE = "the reply came after the aggregate's deadline: it is not counted";

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
  reason = `aggregate is ${header.status}${header.outcome ? ` (${header.outcome})` : ''}: the reply came after its result was fixed`,
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
      reason,
      aggregateStatus: header.status,
      aggregateOutcome: header.outcome ?? null,
      at: ctx.clock(),
      message,
    },
    { eventBridge: definition.outputs.eventBridge },
  );
}
