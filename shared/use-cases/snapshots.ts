import { aggregate } from '../engine/aggregation.ts';
import { EXPRESSION_LIMITS } from '../engine/constants.ts';
import type { Definition } from '../engine/definition.ts';
import { completionStateOf } from '../engine/lifecycle.ts';
import { snapshotId } from '../engine/output-ids.ts';
import { ExpressionError, OutputTooLargeError } from '../errors.ts';
import type { AggregateHeader, OutputMessage, StoredReply, TimerMessage } from '../ports.ts';
import { QueueRole } from '../topology/topology.ts';
import { loadReply, missingOf, separateFailures } from './complete.ts';
import { type FaninContext, keepsRequest, loadStored } from './context.ts';
import { validReplies } from './evaluate.ts';

/** A snapshot timer. */
export type SnapshotTimer = Extract<TimerMessage, { kind: 'snapshot' }>;

/** The output type of a snapshot (on the status output). */
export const SNAPSHOT_TYPE = 'fanin.aggregate.snapshot';

/**
 * Periodic release (Camel's `completionInterval`, in the spirit of Spring's partial results): every
 * `snapshotIntervalSeconds` an open aggregate's replies so far go to the status output as a
 * snapshot, and the aggregate stays open.
 *
 * Snapshot `n` is the aggregate as of `openedAt + n × interval` (its replies recorded by then), under
 * the id `<aggregateId>/snapshot/<n>`. Its period is marked on the header before it is published
 * (a conditional update, only while the aggregate is open), so:
 * - a timer delivered twice publishes the period once; one redelivered after its invocation died
 *   between the mark and the publication publishes it again under the same id and deduplication id;
 * - no period is marked once the aggregate is sealed: no snapshot is decided after its result.
 *
 * Only the invocation that marked a period arms the next one (or a redelivery of it), so duplicate
 * timers die out at the next period instead of multiplying.
 */
export async function takeSnapshot(
  ctx: FaninContext,
  timer: SnapshotTimer,
  receiveCount: number,
): Promise<void> {
  const { aggregateId, period } = timer;
  const header = await ctx.store.getHeader(aggregateId);
  if (!header || completionStateOf(header) !== 'open') return;
  const definition = ctx.definitions.get(header.definition);
  const interval = definition?.snapshotIntervalSeconds;
  if (!definition || interval === undefined) return;
  const asOf = snapshotDueAt(header.openedAt, interval, period);
  const now = ctx.clock();
  if (now < asOf) {
    // Fired early (an interval beyond SQS's 15-minute delay): wait again.
    await ctx.timers.arm({ kind: 'snapshot', aggregateId, period, dueAt: asOf }, now);
    return;
  }
  const mark = await ctx.store.markSnapshot(aggregateId, period);
  if (mark === 'closed' || mark === 'passed') return;
  // Marked before: a second delivery of a timer that did its work, unless SQS redelivers it
  // because its invocation died after the mark (then it publishes the same snapshot again).
  if (mark === 'already' && receiveCount <= 1) return;
  const read = await ctx.store.readAggregate(aggregateId);
  const latest = read.header ?? header;
  const replies = validReplies(latest, read.replies).filter((r) => r.receivedAt <= asOf);
  await publishSnapshot(ctx, definition, latest, replies, period, asOf);
  await armNextSnapshot(ctx, definition, latest, period, now);
}

/** Arms the first snapshot timer of an aggregate just opened, when its definition asks for snapshots. */
export async function armFirstSnapshot(
  ctx: FaninContext,
  definition: Definition,
  header: Pick<AggregateHeader, 'aggregateId' | 'openedAt'>,
  now: number,
): Promise<void> {
  const interval = definition.snapshotIntervalSeconds;
  if (interval === undefined) return;
  const dueAt = snapshotDueAt(header.openedAt, interval, 1);
  await ctx.timers.arm({ kind: 'snapshot', aggregateId: header.aggregateId, period: 1, dueAt }, now);
}

/** When snapshot `period` of an aggregate opened at `openedAt` is due (epoch ms). */
export function snapshotDueAt(openedAt: number, intervalSeconds: number, period: number): number {
  return openedAt + period * intervalSeconds * 1000;
}

/**
 * The period after `period` that is still to come at `now`: a timer that fired late (an outage)
 * skips the periods it missed instead of publishing them all at once.
 */
export function nextSnapshotPeriod(
  openedAt: number,
  intervalSeconds: number,
  period: number,
  now: number,
): number {
  return Math.max(period + 1, Math.floor((now - openedAt) / (intervalSeconds * 1000)) + 1);
}

async function armNextSnapshot(
  ctx: FaninContext,
  definition: Definition,
  header: AggregateHeader,
  period: number,
  now: number,
): Promise<void> {
  const interval = definition.snapshotIntervalSeconds as number;
  const next = nextSnapshotPeriod(header.openedAt, interval, period, now);
  const dueAt = snapshotDueAt(header.openedAt, interval, next);
  // Past its allowed life the aggregate is closed by then: no timer for nothing.
  if (header.closeBy !== undefined && dueAt >= header.closeBy) return;
  await ctx.timers.arm({ kind: 'snapshot', aggregateId: header.aggregateId, period: next, dueAt }, now);
}

/**
 * Builds and publishes one snapshot: the aggregation algorithm over the replies recorded by
 * `asOf`, as a result would be built, but nothing is sealed. An expression that fails, or a
 * snapshot too large for the status output without a payload bucket, is published with
 * `result: null` and the reason.
 */
async function publishSnapshot(
  ctx: FaninContext,
  definition: Definition,
  header: AggregateHeader,
  members: readonly StoredReply[],
  period: number,
  asOf: number,
): Promise<void> {
  const storedRequest =
    header.requestId && keepsRequest(definition) ? await ctx.store.getRequest(header.aggregateId) : undefined;
  const request: unknown = storedRequest ? JSON.parse(await loadStored(ctx, storedRequest)) : undefined;
  const loaded = await Promise.all(members.map((r) => loadReply(ctx, r)));
  const { failures, successes: replies } = separateFailures(members, loaded);
  const missing = missingOf(header, loaded, request);
  const base = {
    id: snapshotId(header.aggregateId, period),
    type: SNAPSHOT_TYPE,
    aggregateId: header.aggregateId,
    definition: header.definition,
    period,
    openedAt: header.openedAt,
    asOf,
    counts: { expected: header.expected ?? null, received: loaded.length, failed: failures.length },
    missing,
    failures,
  };
  let message: OutputMessage;
  try {
    const result = await aggregate(definition, replies, {
      aggregateId: header.aggregateId,
      definition: header.definition,
      ...(header.expected !== undefined ? { expected: header.expected } : {}),
      params: header.params,
      request,
      limits: EXPRESSION_LIMITS,
      at: asOf,
    });
    message = { ...base, result };
  } catch (error) {
    if (!(error instanceof ExpressionError)) throw error;
    message = { ...base, result: null, reason: error.message };
  }
  const options = { eventBridge: definition.outputs.eventBridge };
  try {
    await ctx.outputs.publish(QueueRole.STATUS, message, options);
  } catch (error) {
    if (!(error instanceof OutputTooLargeError)) throw error;
    await ctx.outputs.publish(
      QueueRole.STATUS,
      {
        ...base,
        result: null,
        reason: `the snapshot is ${error.bytes} bytes, more than SQS takes, and no payload bucket is configured`,
      },
      options,
    );
  }
}
