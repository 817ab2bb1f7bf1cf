import type { SQSClient } from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import {
  makeControlHandler,
  makeFanOutHandler,
  makeReplyDrainHandler,
  makeReplyHandler,
  makeTimerHandler,
} from '../functions/handlers.ts';
import type { OutputPublisher } from '../shared/ports.ts';
import type { ConsumerSpec, Topology } from '../shared/topology/topology.ts';
import type { FaninContext } from '../shared/use-cases/context.ts';
import { QueueDrainer } from './drainer.ts';
import type { ConsumerSample, LiveFigures, OutputRecord } from './live-figures.ts';
import { QueuePoller } from './poller.ts';
import type { Provisioned } from './provision.ts';

/**
 * What stands in for Lambda's SQS event sources in the local runtime: one poller per consumed
 * queue, each calling the same handler factory as the Lambda entry point.
 */

/** A consumer of one queue: its poller (or, for a drained reply partition, its drainer) and what the dashboard calls it. */
export interface Consumer {
  readonly name: string;
  readonly role: ConsumerSample['role'];
  readonly poller: QueuePoller | QueueDrainer;
}

/**
 * Starts one poller per consumed queue, one per reply partition, with the topology's event-source
 * settings, all receiving with `sqs`; a reply partition drained on a schedule gets a drainer on
 * its interval instead.
 */
export function startConsumers(
  topology: Topology,
  provisioned: Provisioned,
  context: () => FaninContext,
  sqs: SQSClient,
  waitTimeSeconds: number,
): Consumer[] {
  const consumer = (
    name: string,
    role: Consumer['role'],
    queueUrl: string,
    spec: ConsumerSpec,
    handler: (event: SQSEvent) => Promise<SQSBatchResponse>,
  ): Consumer => {
    const poller = new QueuePoller({
      sqs,
      queueUrl,
      handler,
      batchSize: spec.batchSize,
      maxBatchingWindowSeconds: spec.maxBatchingWindowSeconds,
      concurrency: spec.maxConcurrency,
      waitTimeSeconds,
    });
    poller.start();
    return { name, role, poller };
  };
  const { consumers, queues } = topology;
  return [
    consumer(
      queues.ingress.name,
      'fan-out',
      provisioned.queueUrls.ingress,
      consumers.fanOut,
      makeFanOutHandler(context),
    ),
    ...provisioned.replyQueueUrls.map((url, index) => {
      const spec = topology.replyConsumers[index] ?? consumers.reply;
      const name = topology.replyPartitions[index]?.name ?? url;
      if ((spec.drainIntervalSeconds ?? 0) === 0) {
        return consumer(name, 'reply', url, spec, makeReplyHandler(context));
      }
      const drainer = new QueueDrainer({
        drain: makeReplyDrainHandler(context, () => ({
          sqs,
          replyQueueUrls: provisioned.replyQueueUrls,
          timeoutMs: topology.functionTimeoutSeconds * 1000,
        })),
        partition: index,
        batchSize: spec.batchSize,
        intervalMs: (spec.drainIntervalSeconds ?? 0) * 1000,
      });
      drainer.start();
      return { name, role: 'reply' as const, poller: drainer };
    }),
    consumer(
      queues.timer.name,
      'timer',
      provisioned.queueUrls.timer,
      consumers.timer,
      makeTimerHandler(context),
    ),
    consumer(
      queues.control.name,
      'control',
      provisioned.queueUrls.control,
      consumers.control,
      makeControlHandler(context),
    ),
  ];
}

/**
 * Publishes through `inner`, then records each output in `metrics` (after it really went out) and
 * hands the record to `onRecord`: what the dashboard and the runtime's log show of the outputs.
 */
export function observeOutputs(
  inner: OutputPublisher,
  metrics: LiveFigures,
  onRecord: (record: OutputRecord) => void,
): OutputPublisher {
  return {
    async publish(role, message, options) {
      await inner.publish(role, message, options);
      const record = metrics.recordOutput(role, message);
      if (record) onRecord(record);
    },
  };
}
