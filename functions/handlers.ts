import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { SqsDrainQueue } from '../shared/adapters/sqs-drain.ts';
import { toRawMessage } from '../shared/adapters/sqs-event.ts';
import { TimerBatch } from '../shared/adapters/timer-batch.ts';
import type { Observability } from '../shared/app.ts';
import { addLambdaContext, functionLogger } from '../shared/observability/logger.ts';
import { MetricName } from '../shared/observability/metric-names.ts';
import { describeError } from '../shared/observability/redaction.ts';
import { withTraceHeader } from '../shared/observability/trace-context.ts';
import { traced } from '../shared/observability/tracing.ts';
import type { CycleReport, Distributor } from '../shared/partitions/distributor.ts';
import type { Metrics } from '../shared/ports.ts';
import type { FaninContext } from '../shared/use-cases/context.ts';
import { handleControl } from '../shared/use-cases/control.ts';
import { handleRequest } from '../shared/use-cases/fan-out.ts';
import { handleReplies } from '../shared/use-cases/replies.ts';
import { type DrainResult, drainReplies } from '../shared/use-cases/reply-drain.ts';
import { handleTimer, sweep } from '../shared/use-cases/timers.ts';

/**
 * Handler factories: each decodes its event, calls one use case and encodes the result. The Lambda
 * entry points bind them to the context built from the environment; tests and the local runtime
 * bind them to their own.
 */
type ContextSource = () => FaninContext;

/** What a handler reads of Lambda's invocation context (absent when the local runtime calls it). */
type Invocation = Pick<Context, 'getRemainingTimeInMillis'> | undefined;

/**
 * One record at a time through Powertools' batch processor: a thrown error fails only that record.
 * The timers the records arm are sent together at the end (`TimerBatch`); a record whose timer
 * could not be armed is failed too, so it is redelivered and arms it again.
 */
function perRecord(use: (ctx: FaninContext, record: SQSRecord, invocation: Invocation) => Promise<void>) {
  return (context: ContextSource) =>
    async (event: SQSEvent, invocation?: Invocation): Promise<SQSBatchResponse> => {
      const ctx = context();
      const timers = new TimerBatch(ctx.timers);
      const processor = new BatchProcessor(EventType.SQS);
      // Each record passes its trace (SQS's AWSTraceHeader) on to what handling it sends.
      const handle = (record: SQSRecord) =>
        withTraceHeader(record.attributes.AWSTraceHeader, () =>
          use({ ...ctx, timers: timers.for(record.messageId) }, record, invocation),
        );
      const response = await processPartialResponse(event, handle, processor, {
        throwOnFullBatchFailure: false,
      });
      const { unarmed, error } = await timers.flush(ctx.clock());
      if (unarmed.size === 0) return response;
      ctx.log.error('timers not armed: their records fail and are redelivered', {
        records: unarmed.size,
        ...(error !== undefined ? { error: describeError(error) } : {}),
      });
      const failed = new Set(response.batchItemFailures.map((f) => f.itemIdentifier));
      for (const record of unarmed) failed.add(record);
      return { batchItemFailures: [...failed].map((itemIdentifier) => ({ itemIdentifier })) };
    };
}

/** Fan-out: consumes the ingress queue; a large fan-out stops in time and goes on in another invocation. */
export const makeFanOutHandler = perRecord((ctx, record, invocation) =>
  handleRequest(
    ctx,
    toRawMessage(record),
    invocation ? { remainingTimeMs: () => invocation.getRemainingTimeInMillis() } : {},
  ),
);
/** Timers: consumes the timer queue. */
export const makeTimerHandler = perRecord((ctx, record) => handleTimer(ctx, toRawMessage(record)));
/** Control bus: consumes the control queue; a command over a whole definition stops in time and goes on in another invocation. */
export const makeControlHandler = perRecord((ctx, record, invocation) =>
  handleControl(
    ctx,
    toRawMessage(record),
    invocation ? { remainingTimeMs: () => invocation.getRemainingTimeInMillis() } : {},
  ),
);

/**
 * Replies: consumes one reply partition. The whole batch goes to the use case at once, so replies
 * of one aggregate are written in one transaction. On a FIFO partition, everything after the first
 * failure is failed too, so a message group is never processed out of order.
 */
export function makeReplyHandler(context: ContextSource) {
  return async (event: SQSEvent): Promise<SQSBatchResponse> => {
    const ctx = context();
    // A batch of one trace passes it on (to the result it completes); a mixed batch passes none.
    const traces = new Set(event.Records.map((r) => r.attributes.AWSTraceHeader));
    const trace = traces.size === 1 ? [...traces][0] : undefined;
    const failed = await withTraceHeader(trace, () => handleReplies(ctx, event.Records.map(toRawMessage)));
    ctx.log.info('reply batch', { records: event.Records.length, failed: failed.size });
    const fifo = event.Records[0]?.eventSourceARN.endsWith('.fifo') ?? false;
    let failing = false;
    const batchItemFailures = [];
    for (const record of event.Records) {
      failing = fifo ? failing || failed.has(record.messageId) : failed.has(record.messageId);
      if (failing) batchItemFailures.push({ itemIdentifier: record.messageId });
    }
    return { batchItemFailures };
  };
}

/** What a reply partition's drain schedule sends the reply function (infra/fanin-handlers.ts). */
export interface ReplyDrainEvent {
  readonly drain: { readonly partition: number; readonly batchSize: number };
}

/** True for a drain schedule's event (an event source's has `Records`). */
export function isReplyDrainEvent(event: unknown): event is ReplyDrainEvent {
  return typeof event === 'object' && event !== null && 'drain' in event && !('Records' in event);
}

/** What a drain reads beyond the context: the SQS client and the partitions' queues, from the configuration. */
export interface DrainSource {
  readonly sqs: SQSClient;
  readonly replyQueueUrls: readonly string[];
  /** The invocation's time when no Lambda context tells it (the local runtime). @default 30,000 */
  readonly timeoutMs?: number;
}

/** What one drain of a reply partition did. */
export interface DrainReport extends DrainResult {
  readonly partition: number;
}

/**
 * Replies of a partition drained on a schedule (`replyDrainIntervalSeconds`): the partition is
 * named by its index in the configuration, never by a queue URL, so an event can only make the
 * function drain one of its own partitions. The drain use case (`drainReplies`) sends its batches
 * to the same use case as an event source's, and starts no new batch once half the invocation's
 * time is spent, nor one that would not finish in the time left if it took as long as the slowest
 * so far (plus a margin): what is left waits for the next schedule. The messages a drain holds
 * stay invisible for the queue's visibility timeout, at least six times the invocation's (topology), so no other drain takes
 * them while this one may still record and delete them.
 * @throws Error when the event names no partition of this deployment or an invalid batch size
 */
export function makeReplyDrainHandler(context: ContextSource, source: () => DrainSource) {
  return async (event: ReplyDrainEvent, invocation?: Invocation): Promise<DrainReport> => {
    const ctx = context();
    const { sqs, replyQueueUrls, timeoutMs = 30_000 } = source();
    const { partition, batchSize } = event.drain ?? {};
    const queueUrl = Number.isInteger(partition) ? replyQueueUrls[partition] : undefined;
    if (queueUrl === undefined) {
      throw new Error(
        `drain: partition must be the index of one of the ${replyQueueUrls.length} reply partitions (given ${JSON.stringify(partition)})`,
      );
    }
    if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > 10_000) {
      throw new Error(
        `drain: batchSize must be an integer from 1 to 10000 (given ${JSON.stringify(batchSize)})`,
      );
    }
    const started = Date.now();
    const result = await drainReplies(ctx, new SqsDrainQueue({ sqs, queueUrl }), {
      batchSize,
      remainingMs: () =>
        invocation ? invocation.getRemainingTimeInMillis() : timeoutMs - (Date.now() - started),
    });
    ctx.log.info('reply drain', { partition, ...result });
    return { partition, ...result };
  };
}

/**
 * The sweeper: invoked on a schedule; returns how many due items it examined. It starts no item
 * once its invocation's time is nearly spent, and gives up on (defers) an item that runs past its
 * budget, so one slow item cannot hold the others. A failed sweep is counted.
 */
export function makeSweeperHandler(context: ContextSource) {
  return async (_event?: unknown, invocation?: Invocation): Promise<{ examined: number }> => {
    const ctx = context();
    try {
      const options = invocation ? { remainingTimeMs: () => invocation.getRemainingTimeInMillis() } : {};
      return { examined: await sweep(ctx, undefined, options) };
    } catch (error) {
      ctx.metrics?.count(MetricName.SWEEP_CYCLES_FAILED);
      throw error;
    }
  };
}

/**
 * The watermark distributor: invoked on a schedule (or on demand); returns what the cycle moved.
 * A failed cycle is counted on `metrics`.
 */
export function makeDistributorHandler(distributor: () => Distributor, metrics?: () => Metrics) {
  return async (): Promise<CycleReport> => {
    try {
      return await distributor().cycle();
    } catch (error) {
      metrics?.().count(MetricName.DISTRIBUTOR_CYCLES_FAILED);
      throw error;
    }
  };
}

/**
 * A Lambda entry point around a handler: every line the invocation logs carries its Lambda context
 * (request id, function name, cold start: the function's one logger, `functionLogger()`), it runs
 * in a trace subsegment (when tracing is on) and publishes the metrics it counted once, when it
 * ends, whether it succeeded or threw.
 */
export function instrumented<Event, Result>(
  name: string,
  handler: (event: Event, invocation?: Invocation) => Promise<Result>,
  observability: () => Observability | Promise<Observability>,
) {
  return async (event: Event, invocation?: Invocation): Promise<Result> => {
    addLambdaContext(functionLogger(), invocation);
    const { metrics, tracer } = await observability();
    try {
      return await traced(tracer, name, () => handler(event, invocation));
    } finally {
      metrics.flush();
    }
  };
}
