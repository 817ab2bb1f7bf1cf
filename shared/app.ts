import type { Logger } from '@aws-lambda-powertools/logger';
import type { Tracer } from '@aws-lambda-powertools/tracer';
import { DynamoStateStore } from './adapters/dynamo-state-store.ts';
import { OutputChannelPublisher } from './adapters/output-channels.ts';
import { PowertoolsMetricsAdapter } from './adapters/powertools-metrics.ts';
import { S3ClaimCheck } from './adapters/s3-claim-check.ts';
import { continueOn, requeueTo } from './adapters/sqs-own-queues.ts';
import { SqsRequestSender } from './adapters/sqs-sender.ts';
import { SqsTimerScheduler } from './adapters/sqs-timers.ts';
import { type AwsClients, createClients } from './aws/clients.ts';
import { loadConfig, type RuntimeConfig } from './config.ts';
import { policyFromQueueUrl } from './engine/recipients.ts';
import { functionLogger } from './observability/logger.ts';
import { createTracer, serviceName } from './observability/tracing.ts';
import type { Distributor } from './partitions/distributor.ts';
import { createDistributor, REPLY_DESTINATION, replyDestination } from './partitions/reply-destination.ts';
import type { Log } from './ports.ts';
import { QueueRole } from './topology/topology.ts';
import { CONTEXT_DEFAULTS, type FaninContext } from './use-cases/context.ts';

/**
 * The AWS clients the adapters use, built once by the entry point and passed down: a bundle of
 * `createClients()` (`aws/clients.ts`) fits as it is.
 */
export interface FaninClients {
  readonly sqs: AwsClients['sqs'];
  readonly dynamo: AwsClients['dynamo'];
  readonly eventBridge?: AwsClients['eventBridge'];
  readonly s3?: AwsClients['s3'];
}

/**
 * Wires the adapters to a configuration: the one place where the use cases meet the AWS SDK.
 * `overrides` replace any part (a clock in tests, a failpoint-wrapped store).
 *
 * @throws Error when the configuration names a claim-check bucket and `clients` has no S3 client
 */
export function createContext(
  config: RuntimeConfig,
  clients: FaninClients,
  overrides: Partial<FaninContext> = {},
): FaninContext {
  const { completed, error, late, status, unknown } = config.queueUrls;
  const { s3 } = clients;
  if (config.bucketName && !s3) {
    throw new Error(
      `the configuration names the claim-check bucket ${config.bucketName} but no S3 client was given`,
    );
  }
  const claimCheck =
    config.bucketName && s3
      ? new S3ClaimCheck({
          s3,
          bucket: config.bucketName,
          ...(config.claimCheckThresholdBytes ? { thresholdBytes: config.claimCheckThresholdBytes } : {}),
        })
      : undefined;
  const replies = replyDestination(config, clients);
  return {
    store: new DynamoStateStore({ client: clients.dynamo, tableName: config.tableName }),
    outputs: new OutputChannelPublisher({
      sqs: clients.sqs,
      queueUrls: {
        completed,
        error,
        late,
        status,
        unknown,
        'timed-out': config.queueUrls[QueueRole.TIMED_OUT],
      },
      // Read only when there is a bus: the clients of an entry point are created on first use.
      ...(config.eventBusName && clients.eventBridge ? { eventBridge: clients.eventBridge } : {}),
      ...(config.eventBusName ? { eventBusName: config.eventBusName } : {}),
      ...(claimCheck ? { claimCheck } : {}),
    }),
    timers: new SqsTimerScheduler({ sqs: clients.sqs, queueUrl: config.queueUrls[QueueRole.TIMER] }),
    sender: new SqsRequestSender({ sqs: clients.sqs, ...(claimCheck ? { claimCheck } : {}) }),
    definitions: config.definitions,
    replies: {
      replyTo: async (aggregateId) => (await replies.choose({ kind: 'affinity', key: aggregateId })).queueUrl,
    },
    ...(claimCheck ? { payloads: claimCheck } : {}),
    clock: Date.now,
    ...CONTEXT_DEFAULTS,
    ...(config.completionLeaseSeconds !== undefined
      ? { completionLeaseMs: config.completionLeaseSeconds * 1000 }
      : {}),
    // Only the distributor's copies keep a moved reply's first send time (replies.ts, arrivalOf).
    ...(config.trustedMovers ? { trustedMovers: config.trustedMovers } : {}),
    recipients: policyFromQueueUrl(config.queueUrls[QueueRole.INGRESS], config.recipientAccounts ?? [], [
      ...Object.values(config.queueUrls),
      ...config.replyQueueUrls,
    ]),
    requeue: requeueTo(clients.sqs, config.queueUrls[QueueRole.INGRESS]),
    // A `complete`/`purge` of a whole definition goes on from its cursor in another invocation.
    continueControl: continueOn(clients.sqs, config.queueUrls[QueueRole.CONTROL]),
    ...overrides,
  };
}

// The reply destination and its distributor live in a module without Powertools, which the
// client package (producers, the CLI) imports through shared/client/connect.ts.
export { createDistributor, REPLY_DESTINATION, replyDestination };

let configInstance: RuntimeConfig | undefined;

/**
 * The configuration of a Lambda function, read from its environment once per execution
 * environment: its context, its distributor, its metrics and the reply function's drains share it.
 */
function configFromEnvironment(): RuntimeConfig {
  configInstance ??= loadConfig();
  return configInstance;
}

let fromEnvironment: FaninContext | undefined;

let distributorInstance: Distributor | undefined;

let clientsInstance: AwsClients | undefined;

/**
 * The AWS clients of a Lambda function: built once per execution environment, by the first of its
 * context or its distributor. Both are built inside an invocation, after the entry point
 * (`instrumented` in functions/handlers.ts) set up tracing: with tracing on, every client is
 * captured by the tracer.
 */
function clientsFromEnvironment(): AwsClients {
  const tracer = observability?.tracer;
  clientsInstance ??= createClients(
    tracer ? { instrument: (client) => tracer.captureAWSv3Client(client) } : {},
  );
  return clientsInstance;
}

/** The distributor of a Lambda function: built once per execution environment. */
export function distributorFromEnvironment(): Distributor {
  if (!distributorInstance) {
    const config = configFromEnvironment();
    distributorInstance = createDistributor(config, clientsFromEnvironment(), Date.now, {
      log: powertoolsLog(),
    });
  }
  return distributorInstance;
}

/** What a Lambda function reports about itself: its metrics (EMF) and, when enabled, its traces (X-Ray). */
export interface Observability {
  /** Flushed once per invocation by the entry point (see functions/handlers.ts `instrumented`). */
  readonly metrics: PowertoolsMetricsAdapter;
  /** Present when `POWERTOOLS_TRACE_ENABLED=true`; the function's AWS clients are then captured. */
  readonly tracer?: Tracer;
}

let observability: Observability | undefined;
let traced: Promise<Observability> | undefined;

/** The metrics of a Lambda function (and its tracer once {@link tracedObservabilityFromEnvironment} set it up). */
export function observabilityFromEnvironment(config?: RuntimeConfig): Observability {
  observability ??= {
    metrics: new PowertoolsMetricsAdapter({
      definitions: (config ?? configFromEnvironment()).definitions.keys(),
      serviceName: serviceName(),
    }),
  };
  return observability;
}

/**
 * The metrics and tracer of a Lambda function, set up once per execution environment by its entry
 * point before the first AWS client exists: with tracing on, the clients of
 * {@link clientsFromEnvironment} are captured by the tracer.
 */
export function tracedObservabilityFromEnvironment(): Promise<Observability> {
  traced ??= createTracer().then((tracer) => {
    const base = observabilityFromEnvironment();
    if (!tracer) return base;
    observability = { ...base, tracer };
    return observability;
  });
  return traced;
}

/**
 * fanin's log on Powertools Logger: JSON lines with the Lambda context (the function's one logger,
 * to which its entry point adds each invocation's context), level from `POWERTOOLS_LOG_LEVEL`
 * (default INFO). The use cases only ever pass ids, counts and reasons.
 */
export function powertoolsLog(logger: Logger = functionLogger()): Log {
  return {
    info: (message, fields) => logger.info(message, fields ?? {}),
    warn: (message, fields) => logger.warn(message, fields ?? {}),
    error: (message, fields) => logger.error(message, fields ?? {}),
  };
}

/** What the reply function's drains read (functions/reply.ts): its SQS client and the reply partitions' queues. */
export function drainSourceFromEnvironment(): { sqs: AwsClients['sqs']; replyQueueUrls: readonly string[] } {
  drainSource ??= {
    sqs: clientsFromEnvironment().sqs,
    replyQueueUrls: configFromEnvironment().replyQueueUrls,
  };
  return drainSource;
}

let drainSource: { sqs: AwsClients['sqs']; replyQueueUrls: readonly string[] } | undefined;

/** The context of a Lambda function: built once per execution environment from its environment. */
export function contextFromEnvironment(): FaninContext {
  if (!fromEnvironment) {
    const config = configFromEnvironment();
    const { metrics } = observabilityFromEnvironment(config);
    fromEnvironment = createContext(config, clientsFromEnvironment(), { log: powertoolsLog(), metrics });
  }
  return fromEnvironment;
}
