import { deadlineOf, openDueAt } from '../engine/completion/deadline.ts';
import { validReplies } from '../engine/completion/tally.ts';
import { WireAttribute } from '../engine/correlation.ts';
import type { Definition } from '../engine/definition.ts';
import { replyOutputId } from '../engine/output-ids.ts';
import { hasRecipientDeadlines, recipientDeadline } from '../engine/responders.ts';
import { MetricName, UNKNOWN_DEFINITION } from '../observability/metric-names.ts';
import type { AggregateHeader, AggregateSnapshot, RawMessage, StoredReply } from '../ports.ts';
import { QueueRole } from '../topology/topology.ts';
import { replyExpiry } from './aggregate-life.ts';
import type { FaninContext } from './context.ts';

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
 * the same members from the same replies. Where recipients have deadlines of their own
 * (engine/responders.ts), a reply received at or after its recipient's is late too.
 *
 * @example
 * // deadline 10 s after the open at 0, replies received at 4 s and 12 s: only the first counts
 * onTimeReplies(header, replies).map((r) => r.replyId); // ['0']
 */
export function onTimeReplies<R extends Pick<StoredReply, 'receivedAt' | 'replyId'>>(
  header: Pick<AggregateHeader, 'params' | 'openedAt' | 'closeBy' | 'expected' | 'beats'>,
  replies: readonly R[],
): R[] {
  const ownDeadlines = hasRecipientDeadlines(header);
  // A reply received at or after its recipient's own deadline is late as after the aggregate's.
  const inTime = ownDeadlines
    ? replies.filter((r) => {
        const due = recipientDeadline(header, r.replyId);
        return due === undefined || r.receivedAt < due;
      })
    : replies;
  return onTimeForAggregate(header, inTime);
}

function onTimeForAggregate<R extends Pick<StoredReply, 'receivedAt'>>(
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
 * An aggregate as read, with only the replies that may be members: valid ones (engine/completion/tally.ts)
 * received before the deadline in force. What completion is evaluated on.
 */
export function onTime(snapshot: AggregateSnapshot): AggregateSnapshot {
  const { header } = snapshot;
  return header
    ? { header, replies: onTimeReplies(header, validReplies(header, snapshot.replies)) }
    : snapshot;
}

/**
 * The late output's reason for a reply to an aggregate whose result was already fixed when the
 * reply was handled. A reply that arrived (its `SentTimestamp`, {@link onTimeReplies}) before the
 * deadline says so, with both times: it was on time, but its handling came after the seal (its
 * first handling crashed and SQS handed it back only after the deadline decided: docs/wire-contract.md,
 * "Late replies").
 *
 * @example
 * fixedReason({ status: 'closed', outcome: 'timed-out', deadline: 60_000 }, 1_000);
 * // 'aggregate is closed (timed-out): the reply was sent at 1970-01-01T00:00:01.000Z, before the
 * //  deadline at 1970-01-01T00:01:00.000Z, and came after its result was fixed'
 */
export function fixedReason(
  header: Pick<AggregateHeader, 'status' | 'outcome' | 'deadline' | 'closeBy'> &
    Partial<Pick<AggregateHeader, 'params'>>,
  receivedAt?: number,
): string {
  const state = `aggregate is ${header.status}${header.outcome ? ` (${header.outcome})` : ''}`;
  // An inactivity deadline moves with the replies: the absolute one would say too little.
  const due = header.params?.inactivityTimeoutSeconds === undefined ? openDueAt(header) : undefined;
  if (receivedAt === undefined || due === undefined || receivedAt >= due)
    return `${state}: the reply came after its result was fixed`;
  const at = (t: number) => new Date(t).toISOString();
  return `${state}: the reply was sent at ${at(receivedAt)}, before the deadline at ${at(due)}, and came after its result was fixed`;
}

/** The late output's reason for a reply received after the deadline in force. */
export const AFTER_DEADLINE = "the reply came after the aggregate's deadline: it is not counted";

/**
 * The late output's reason for a reply received at or after its recipient's own deadline
 * (engine/responders.ts), or `undefined` when it was not.
 */
export function afterRecipientDeadline(
  header: Pick<AggregateHeader, 'params' | 'openedAt' | 'closeBy' | 'expected' | 'beats'>,
  reply: Pick<StoredReply, 'replyId' | 'receivedAt'>,
): string | undefined {
  if (!hasRecipientDeadlines(header)) return undefined;
  const due = recipientDeadline(header, reply.replyId);
  if (due === undefined || reply.receivedAt < due) return undefined;
  return `the reply came after its recipient's deadline at ${new Date(due).toISOString()}: it is not counted`;
}

/**
 * Routes a late reply: marked on its item once (so the late count on the header counts it once),
 * published on every attempt (the output id is deterministic, so a retry after a crash between
 * the two is not lost and deduplicates). The reply handler's retry is its message's redelivery;
 * the completer's reply was acknowledged long before (recorded while its aggregate was open), so
 * its mark records that the late output is owed (`owes`, in the same write: StateStore.markLate)
 * and that it was sent (markLateSent, once published: one more conditional update), and a
 * resumed completer sends a copy still owing it (complete.ts, finishUnderLease) under the same id:
 * a crash between the send and that record sends it again, nothing else does. A reply whose key
 * holds the mark of a reply reported unknown (before its aggregate opened: held.ts,
 * publishUnknown) is not late, and never goes to the late output: its unknown output is sent here
 * if the mark still owes it (its first send failed).
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
  reason = fixedReason(header),
  byCompleter = false,
): Promise<void> {
  const owes = byCompleter && definition.latePolicy === 'route';
  const mark = await ctx.store.markLate(
    header.aggregateId,
    replyId,
    replyExpiry(ctx, definition, header),
    header.shards,
    owes,
  );
  if (mark === 'unknown') {
    await publishUnknownOutput(ctx, {
      aggregateId: header.aggregateId,
      replyId,
      message: {
        messageId: message.messageId ?? '',
        body: message.body,
        attributes: message.attributes ?? {},
      },
      shards: [header.shards ?? 1],
    });
    return;
  }
  if (mark === 'reported') return;
  if (mark === 'marked') ctx.metrics?.count(MetricName.REPLIES_LATE, definition.name);
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
  // The mark this call wrote owes it, or one a completer wrote before (its send failed).
  if ((mark === 'marked' && owes) || mark === 'owed')
    await ctx.store.markLateSent(header.aggregateId, replyId, header.shards);
}

/** The unknown output of one reply, as {@link publishUnknownOutput} sends it. */
export interface UnknownOutput {
  readonly aggregateId: string;
  readonly replyId: string;
  /** The reply's message (`retained`: the reply as stored, its kept body without attributes, as the completer has it). */
  readonly message: Pick<RawMessage, 'messageId' | 'body' | 'attributes'> & { readonly retained?: boolean };
  /** The definition the reply named, if any (by default its message's `fanin-definition`). */
  readonly definition?: string;
  /** The write-shard layouts its mark was written under (StateStore.markUnknown). */
  readonly shards: readonly number[];
}

/**
 * Publishes the unknown output of a reply whose fate is fixed as unknown (its mark written:
 * held.ts, publishUnknown), under its deterministic id, then records on the mark that it was sent.
 * A copy of the reply that meets a mark still owing it (the first send failed, simulation seed 98)
 * sends it again, even once its aggregate has opened (replies.ts, the `unknown` fate; routeLate;
 * the completer for a copy recorded in a pack); one that meets a mark whose output was sent is a
 * duplicate, and sends nothing: a reply is on the unknown output once (a crash between the send
 * and its record sends it again under the same id).
 */
export async function publishUnknownOutput(ctx: FaninContext, output: UnknownOutput): Promise<void> {
  const { aggregateId, replyId, message } = output;
  const definition =
    'definition' in output ? output.definition : message.attributes[WireAttribute.DEFINITION];
  await ctx.outputs.publish(QueueRole.UNKNOWN, {
    id: replyOutputId(aggregateId, 'unknown', replyId),
    type: 'fanin.reply.unknown',
    aggregateId,
    ...(definition ? { definition } : {}),
    replyId,
    reason: 'no such aggregate',
    at: ctx.clock(),
    message: {
      messageId: message.messageId,
      body: message.body,
      attributes: message.attributes,
      ...(message.retained ? { retained: true } : {}),
    },
  });
  ctx.metrics?.count(MetricName.REPLIES_UNKNOWN, definition ?? UNKNOWN_DEFINITION);
  await ctx.store.markUnknownSent(aggregateId, replyId, output.shards);
}
