import { aggregate } from '../engine/aggregation.ts';
import { validReplies } from '../engine/completion/tally.ts';
import { EXPRESSION_LIMITS } from '../engine/constants.ts';
import type { Definition } from '../engine/definition.ts';
import { keepsRequest } from '../engine/keeps-request.ts';
import { completionStageOf } from '../engine/lifecycle.ts';
import { snapshotId } from '../engine/output-ids.ts';
import { ExpressionError, OutputTooLargeError } from '../errors.ts';
import type { AggregateHeader, OutputMessage, StoredReply, TimerMessage } from '../ports.ts';
import { QueueRole } from '../topology/topology.ts';
import { loadReply, missingOf, separateFailures } from './complete.ts';
import type { FaninContext } from './context.ts';
import { loadStored } from './stored-payloads.ts';

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
 *
 * A snapshot due within the timers' horizon (SQS: 15 minutes) is a timer; one due later is the
 * aggregate's next-snapshot item in the `due` index ({@link armSnapshot}), whose timer the sweep
 * arms once as it enters the horizon, and which the sweeper acts on itself when that timer is lost.
 * So an interval of days costs one timer a period, not one every 15 minutes. The timer armed from
 * the item carries no period (the period due at its `dueAt`), and the item is deleted by whoever
 * finds no snapshot to follow it.
 */
export async function takeSnapshot(
  ctx: FaninContext,
  timer: SnapshotTimer,
  receiveCount: number,
): Promise<void> {
  const { aggregateId } = timer;
  // The item this timer came from, when it came from the `due` index: replaced or deleted below.
  const item = timer.period === undefined ? timer.dueAt : undefined;
  const header = await ctx.store.getHeader(aggregateId);
  const definition = header ? ctx.definitions.get(header.definition) : undefined;
  const interval = definition?.snapshotIntervalSeconds;
  if (!header || completionStageOf(header) !== 'open' || !definition || interval === undefined) {
    await armSnapshot(ctx, undefined, ctx.clock(), aggregateId, item);
    return;
  }
  const period = timer.period ?? snapshotPeriodAt(header.openedAt, interval, timer.dueAt);
  const asOf = snapshotDueAt(header.openedAt, interval, period);
  const now = ctx.clock();
  if (now < asOf) {
    // Fired early (a clock behind, a timer of old sent at the horizon): armed again for its time.
    await armSnapshot(ctx, { kind: 'snapshot', aggregateId, period, dueAt: asOf }, now, aggregateId, item);
    return;
  }
  const mark = await ctx.store.markSnapshot(aggregateId, period);
  if (mark === 'closed' || mark === 'passed') {
    await armSnapshot(ctx, undefined, now, aggregateId, item);
    return;
  }
  // Marked before: a second delivery of a timer that did its work, unless SQS redelivers it
  // because its invocation died after the mark (then it publishes the same snapshot again).
  if (mark === 'already' && receiveCount <= 1) return;
  const read = await ctx.store.readAggregate(aggregateId);
  const latest = read.header ?? header;
  const replies = validReplies(latest, read.replies).filter((r) => r.receivedAt <= asOf);
  await publishSnapshot(ctx, definition, latest, replies, period, asOf);
  await armNextSnapshot(ctx, definition, latest, period, now, item);
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
  await armSnapshot(
    ctx,
    { kind: 'snapshot', aggregateId: header.aggregateId, period: 1, dueAt },
    now,
    header.aggregateId,
  );
}

/** When snapshot `period` of an aggregate opened at `openedAt` is due (epoch ms). */
export function snapshotDueAt(openedAt: number, intervalSeconds: number, period: number): number {
  return openedAt + period * intervalSeconds * 1000;
}

/** The period due at `dueAt` (the nearest, at least 1): that of a timer armed from the `due` index. */
export function snapshotPeriodAt(openedAt: number, intervalSeconds: number, dueAt: number): number {
  return Math.max(1, Math.round((dueAt - openedAt) / (intervalSeconds * 1000)));
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
  item: number | undefined,
): Promise<void> {
  const interval = definition.snapshotIntervalSeconds as number;
  const next = nextSnapshotPeriod(header.openedAt, interval, period, now);
  const dueAt = snapshotDueAt(header.openedAt, interval, next);
  // Past its allowed life the aggregate is closed by then: no timer for nothing.
  const timer: SnapshotTimer | undefined =
    header.closeBy !== undefined && dueAt >= header.closeBy
      ? undefined
      : { kind: 'snapshot', aggregateId: header.aggregateId, period: next, dueAt };
  await armSnapshot(ctx, timer, now, header.aggregateId, item);
}

/**
 * Arms a snapshot `timer` (none: no snapshot follows): within the timers' horizon as a timer;
 * beyond it as the aggregate's next-snapshot item in the `due` index (it replaces the one there),
 * which the sweep arms as it enters the horizon. `item` is the due time of the next-snapshot item
 * the firing timer came from: once a timer replaces it, or nothing does, it is deleted (only while
 * it is still that one), so the sweeper never finds it due again.
 */
async function armSnapshot(
  ctx: FaninContext,
  timer: SnapshotTimer | undefined,
  now: number,
  aggregateId: string,
  item?: number,
): Promise<void> {
  const horizon = ctx.timers.horizonMs;
  if (timer && horizon !== undefined && timer.dueAt - now > horizon && ctx.store.setSnapshotDue) {
    await ctx.store.setSnapshotDue(aggregateId, timer.dueAt);
    return;
  }
  if (timer) await ctx.timers.arm(timer, now);
  if (item !== undefined) await ctx.store.clearSnapshotDue?.(aggregateId, item);
}

/**
 * The sweeper's act on an aggregate's next snapshot found due: its timer was lost (or has not been
 * delivered yet), so the sweeper takes the snapshot as that timer would. Due for less than
 * {@link SNAPSHOT_REDELIVERY_MS}, a period marked already is left to the timer that marked it;
 * due longer, that timer is taken as dead, and the period is published again (same id) and the
 * next one armed, as a redelivery of it would.
 */
export async function sweepSnapshot(ctx: FaninContext, aggregateId: string, dueAt: number): Promise<void> {
  const overdue = ctx.clock() - dueAt >= SNAPSHOT_REDELIVERY_MS;
  await takeSnapshot(ctx, { kind: 'snapshot', aggregateId, dueAt }, overdue ? 2 : 1);
}

/** How long a next-snapshot item stays due before the sweeper takes its timer's invocation as dead. */
export const SNAPSHOT_REDELIVERY_MS = 60_000;

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
  const missing = missingOf(header, loaded, request, asOf);
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
