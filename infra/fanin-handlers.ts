import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import * as logs from 'aws-cdk-lib/aws-logs';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import type { ReplyDrainEvent } from '../functions/handlers.ts';
import { ConfigEnv, trustedMoversValue } from '../shared/config.ts';
import type { Definition } from '../shared/engine/definition.ts';
import { TOPOLOGY_DEFAULTS } from '../shared/topology/options.ts';
import { type ConsumerSpec, QueueRole, type Topology } from '../shared/topology/topology.ts';
import { FaninFunction, HandlerName } from './fanin-function.ts';
import type { FaninFunctions, FaninProps } from './fanin-props.ts';
import type { FaninQueue } from './fanin-queue.ts';
import { handlerEnvironment } from './handler-environment.ts';
import type { FunctionRole } from './validate-options.ts';

/**
 * The six handlers of a fanin instance, their SQS event sources and the sweeper's and the
 * distributor's schedules, created in the Fanin construct's scope under the ids they always had
 * (`FanOut`, `Reply`, ..., `SweepSchedule`, `DistributeSchedule`).
 */

const DEFAULT_PROJECT_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
/** Timeout of every handler invocation when `functionTimeout` is not given. */
export const DEFAULT_FUNCTION_TIMEOUT = Duration.seconds(TOPOLOGY_DEFAULTS.functionTimeoutSeconds);

/** What the handlers are built from: the Fanin construct, with its topology and resources built so far. */
export interface HandlerScope extends Construct {
  readonly topology: Topology;
  readonly table: dynamodb.ITable;
  readonly bucket: s3.IBucket;
  readonly queues: Readonly<Record<QueueRole, FaninQueue>>;
  readonly replyPartitions: readonly FaninQueue[];
  readonly eventBus?: events.IEventBus;
}

/** The six handlers, each with its environment, the definitions and its reserved concurrency. */
export function createHandlers(
  scope: HandlerScope,
  props: FaninProps,
  definitions: readonly Definition[],
): FaninFunctions {
  const { topology, table, bucket, replyPartitions, eventBus } = scope;
  const key = props.encryptionKey;
  const queues = scope.queues;
  const environment = handlerEnvironment({
    tableName: table.tableName,
    queueUrls: Object.fromEntries(
      Object.values(QueueRole).map((role) => [role, queues[role].queue.queueUrl]),
    ) as Record<QueueRole, string>,
    replyQueueUrls: replyPartitions.map((p) => p.queue.queueUrl),
    bucketName: bucket.bucketName,
    partitioning: topology.partitioning,
    ...(eventBus ? { eventBusName: eventBus.eventBusName } : {}),
    ...(props.claimCheckThreshold !== undefined
      ? { claimCheckThresholdBytes: props.claimCheckThreshold }
      : {}),
    completionLeaseSeconds: topology.completionLeaseSeconds,
    ...(props.recipientAccounts !== undefined ? { recipientAccounts: props.recipientAccounts } : {}),
    serviceName: topology.prefix,
    tracing: props.tracing ?? false,
    ...(props.logLevel !== undefined ? { logLevel: props.logLevel } : {}),
  });
  const reserved = (role: FunctionRole) =>
    props.reservedConcurrency?.[role] !== undefined
      ? { reservedConcurrentExecutions: props.reservedConcurrency[role] }
      : {};
  const common = {
    projectRoot: props.projectRoot ?? DEFAULT_PROJECT_ROOT,
    timeout: props.functionTimeout ?? DEFAULT_FUNCTION_TIMEOUT,
    memorySize: props.functionMemorySize ?? 512,
    logRetention: props.logRetention ?? logs.RetentionDays.ONE_MONTH,
    logRemovalPolicy: props.removalPolicy ?? RemovalPolicy.RETAIN,
    environment,
    definitionsJson: JSON.stringify(definitions),
    ...(props.architecture ? { architecture: props.architecture } : {}),
    tracing: props.tracing ?? false,
    ...(key ? { logEncryptionKey: key } : {}),
  };
  const functions: FaninFunctions = {
    fanOut: new FaninFunction(scope, 'FanOut', {
      ...common,
      ...reserved('fanOut'),
      handler: HandlerName.FAN_OUT,
      description: 'fanin: opens an aggregate, then sends its sub-requests',
    }),
    reply: new FaninFunction(scope, 'Reply', {
      ...common,
      ...reserved('reply'),
      handler: HandlerName.REPLY,
      description: 'fanin: records replies once, completes aggregates',
      // Invoked asynchronously only by a drain schedule (event sources invoke it synchronously):
      // the next interval is the retry; a retried drain would only race it.
      retryAttempts: 0,
    }),
    timer: new FaninFunction(scope, 'Timer', {
      ...common,
      ...reserved('timer'),
      handler: HandlerName.TIMER,
      description: 'fanin: deadlines of aggregates and held replies',
    }),
    sweeper: new FaninFunction(scope, 'Sweeper', {
      ...common,
      ...reserved('sweeper'),
      handler: HandlerName.SWEEPER,
      description: 'fanin: safety net for overdue aggregates and lost timers',
      // The next sweep is the retry.
      retryAttempts: 0,
    }),
    control: new FaninFunction(scope, 'Control', {
      ...common,
      ...reserved('control'),
      handler: HandlerName.CONTROL,
      description: 'fanin: control commands and external events',
    }),
    distributor: new FaninFunction(scope, 'Distributor', {
      ...common,
      ...reserved('distributor'),
      handler: HandlerName.DISTRIBUTOR,
      description: 'fanin: feeds the reply partitions from the backlog between watermarks',
      // The next cycle is the retry; a retried cycle would only race the next one.
      retryAttempts: 0,
    }),
  };
  // The distributor is the one mover of replies: a copy whose SQS SenderId is a session of its role
  // keeps the reply's first send time (`fanin-origin-sent-at`); any other sender's claim is ignored
  // (docs/security.md). Set on every handler, as the rest of the environment is.
  const movers = trustedMoversValue([functions.distributor.executionRole.roleId]);
  for (const fn of Object.values(functions)) fn.addEnvironment(ConfigEnv.TRUSTED_MOVERS, movers);
  return functions;
}

/**
 * The handlers' SQS event sources, the sweeper's and the distributor's schedules, and for each
 * reply partition drained on a schedule (`replyDrainIntervalSeconds`), the rule that invokes the
 * reply function to drain it (`ReplyDrain<i>`; `replyDrainSchedules`, in partition order).
 */
export function connectEventSources(
  scope: HandlerScope,
  functions: FaninFunctions,
): { sweepSchedule: events.Rule; distributeSchedule: events.Rule; replyDrainSchedules: events.Rule[] } {
  const { topology, queues, replyPartitions } = scope;
  const { fanOut, reply, timer, sweeper, control, distributor } = functions;
  fanOut.addEventSource(eventSource(queues[QueueRole.INGRESS].queue, topology.consumers.fanOut));
  const replyDrainSchedules: events.Rule[] = [];
  replyPartitions.forEach((partition, index) => {
    const consumer = topology.replyConsumers[index] ?? topology.consumers.reply;
    const interval = consumer.drainIntervalSeconds ?? 0;
    if (interval === 0) {
      reply.addEventSource(eventSource(partition.queue, consumer));
      return;
    }
    // No event source: the rule's constant input names the partition by index; the function
    // takes its queue URL from its own configuration (functions/handlers.ts).
    partition.queue.grantConsumeMessages(reply);
    const drain: ReplyDrainEvent = { drain: { partition: index, batchSize: consumer.batchSize } };
    replyDrainSchedules.push(
      new events.Rule(scope, `ReplyDrain${index}`, {
        description: `${topology.prefix}: drain reply partition ${index} (fanin)`,
        schedule: events.Schedule.rate(Duration.minutes(interval / 60)),
        // The next interval is the retry; a retried drain would only race it.
        targets: [
          new targets.LambdaFunction(reply, {
            event: events.RuleTargetInput.fromObject(drain),
            retryAttempts: 0,
          }),
        ],
      }),
    );
  });
  timer.addEventSource(eventSource(queues[QueueRole.TIMER].queue, topology.consumers.timer));
  control.addEventSource(eventSource(queues[QueueRole.CONTROL].queue, topology.consumers.control));
  const sweepSchedule = new events.Rule(scope, 'SweepSchedule', {
    description: `${topology.prefix}: sweep overdue aggregates (fanin)`,
    schedule: events.Schedule.rate(Duration.seconds(topology.sweepIntervalSeconds)),
    targets: [new targets.LambdaFunction(sweeper, { retryAttempts: 0 })],
  });
  // The backlog has no event source: only the distributor reads it, a cycle at a time.
  const distributeSchedule = new events.Rule(scope, 'DistributeSchedule', {
    description: `${topology.prefix}: feed the reply partitions from the backlog (fanin)`,
    schedule: events.Schedule.rate(Duration.seconds(topology.partitioning.distributorIntervalSeconds)),
    targets: [new targets.LambdaFunction(distributor, { retryAttempts: 0 })],
  });
  return { sweepSchedule, distributeSchedule, replyDrainSchedules };
}

function eventSource(queue: sqs.IQueue, consumer: ConsumerSpec): SqsEventSource {
  return new SqsEventSource(queue, {
    batchSize: consumer.batchSize,
    ...(consumer.maxBatchingWindowSeconds > 0
      ? { maxBatchingWindow: Duration.seconds(consumer.maxBatchingWindowSeconds) }
      : {}),
    maxConcurrency: consumer.maxConcurrency,
    reportBatchItemFailures: true,
  });
}
