import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Annotations, ArnFormat, Aws, Duration, RemovalPolicy, Stack, Token, Validations } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as s3 from 'aws-cdk-lib/aws-s3';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { Definition, DefinitionInput } from '../shared/engine/definition.ts';
import { Alarm } from '../shared/ports.ts';
import {
  type ConsumerSpec,
  describeTopology,
  OUTPUT_ROLES,
  type PartitioningOptions,
  QueueRole,
  type Topology,
} from '../shared/topology/topology.ts';
import { checkEnvironmentSize } from './environment-check.ts';
import { FaninFunction, HandlerName } from './fanin-function.ts';
import { FaninQueue, MAX_RETENTION_SECONDS } from './fanin-queue.ts';
import { handlerEnvironment } from './handler-environment.ts';
import { FaninObservability } from './observability.ts';
import { createPayloadBucket, createStateTable } from './state-resources.ts';
import { type FunctionRole, validateOptions } from './validate-options.ts';

/**
 * The partition key of the reply destination's partition-state items in the state table:
 * `PD#<destination>` (shared/adapters/dynamo-partition-registry.ts) for the destination `replies`
 * (REPLY_DESTINATION in shared/app.ts). The distributor's table access is limited to these items;
 * test/unit/infra/iam.test.ts drives the registry and checks it uses no other key.
 */
export const PARTITION_STATE_KEY = 'PD#replies';

/**
 * The partition keys of an aggregate's items in the state table (header, request, replies, held
 * replies: `A#<aggregate>`, shared/adapters/dynamo-state-store.ts): what the data-plane roles may touch,
 * as a `dynamodb:LeadingKeys` pattern.
 */
export const AGGREGATE_KEYS = 'A#*';
/** The partition keys of the definitions' runtime parameters (`D#<definition>`). */
export const PARAMETER_KEYS = 'D#*';

/**
 * Key prefixes of the payload bucket (the same as shared/adapters/s3-claim-check.ts's; the IAM
 * test checks they agree). Producers and responders write claim-check bodies only under
 * `incoming/` (the runtime follows a pointer in a message it consumes to nothing else); fanin
 * stores the bodies its state references under `state/`, large sub-requests for responders under
 * `requests/` and large outputs under `outputs/`.
 */
export const PayloadPrefix = {
  INCOMING: 'incoming/',
  STATE: 'state/',
  REQUESTS: 'requests/',
  OUTPUTS: 'outputs/',
} as const;
/** The prefixes only fanin's roles may write: everything fanin reads back or sends out. */
const FANIN_WRITTEN_PREFIXES = [PayloadPrefix.STATE, PayloadPrefix.REQUESTS, PayloadPrefix.OUTPUTS] as const;
/** What a reader of fanin's messages (responder, output consumer) may follow a pointer to; never `state/`. */
const READER_PREFIXES = [PayloadPrefix.INCOMING, PayloadPrefix.REQUESTS, PayloadPrefix.OUTPUTS] as const;

/**
 * Who may send to a queue, for {@link FaninProps.ingressSenders} and its siblings:
 * - a 12-digit account id: any principal of that account (`aws:PrincipalAccount`);
 * - an IAM principal ARN, `*` and `?` allowed: `arn:aws:iam::111122223333:role/producer-*`
 *   (`aws:PrincipalArn`; a role's sessions match its role ARN);
 * - the ARN of an AWS resource that delivers through its service, such as an SNS topic or an
 *   EventBridge rule (`aws:SourceArn`);
 * - a role (`role.roleArn`, which may be a deploy-time value).
 */
export type FaninSender = string | iam.IRole;

/** Properties of the {@link Fanin} construct. */
export interface FaninProps {
  /** The aggregation definitions (validated with the engine's schema at synth). */
  readonly definitions: readonly DefinitionInput[];
  /**
   * Prefix of every resource name (queues, table, alarms, bus). Two fanin instances in one account
   * and region need two prefixes.
   * @default 'fanin'
   */
  readonly prefix?: string;
  /**
   * Number of reply partitions (SQS queues, each with its own event source). At most what fits the
   * handlers' 4 KB environment less a 256-byte margin (their URLs are in it, counted in LocalStack's
   * longer form): 26 with the default prefix; checked at synth, the error names the count that fits.
   * @default 2
   */
  readonly replyPartitions?: number;
  /**
   * Reply partitions (and the backlog) as FIFO queues (no batching window: Lambda has none for FIFO
   * sources). @default false
   */
  readonly fifoReplies?: boolean;
  /**
   * How long each reply partition's event source waits to fill a batch, in seconds (Lambda's
   * `MaximumBatchingWindowInSeconds`, 0-300): one value for every partition, or one per partition.
   * A window delays completion by up to its length when replies arrive apart; without one, batches
   * are smaller and invocations more frequent (the benchmark reports both, docs/hot-aggregates.md).
   * Must be 0 with `fifoReplies`. @default 0
   */
  readonly replyBatchingWindowSeconds?: number | readonly number[];
  /**
   * How many invocations each reply partition's event source may run at once (its
   * `MaximumConcurrency`, 2-1000): one value for every partition, or one per partition. One
   * aggregate's replies all go to its reply partition, so this bounds how fast one aggregate can
   * take replies; raise it with the definition's `writeShards` for hot aggregates
   * (docs/hot-aggregates.md). @default 5
   */
  readonly replyConcurrency?: number | readonly number[];
  /**
   * How the reply partitions are kept available and fed from the backlog by the watermark
   * distributor (docs/partitions.md): `highThreshold`, `highWatermark`, `lowWatermark`,
   * `stallSeconds`, `distributorIntervalSeconds`. Checked by the topology (integers, low below high
   * watermark, high watermark at most the threshold); `distributorIntervalSeconds` must also be a
   * whole number of minutes, since it becomes an EventBridge rate schedule. Given to every handler as
   * `FANIN_PARTITIONING`.
   * @default - the topology's: 10,000 / 100 / 20 / 60 s / 60 s
   */
  readonly partitioning?: PartitioningOptions;
  /**
   * Size in bytes (body and attributes, as SQS counts) above which a message takes the claim-check
   * path: the payload goes to the payload bucket and the message carries a pointer. 1 to 262,144.
   * @default - 262,144, the SQS Extended Client's threshold (the handlers' own default; the variable is not set)
   */
  readonly claimCheckThreshold?: number;
  /** Receives of a message before it moves to its queue's dead-letter queue. @default 5 */
  readonly maxReceiveCount?: number;
  /**
   * Timeout of every handler invocation; the visibility timeout of each queue a handler consumes is
   * 6 x this plus the batching window (see the topology). Whole seconds, 1 s to 15 min.
   * @default Duration.seconds(30)
   */
  readonly functionTimeout?: Duration;
  /** Memory of every handler, in MiB (128 to 10240). @default 512 */
  readonly functionMemorySize?: number;
  /**
   * The instruction set of every handler: `lambda.Architecture.ARM_64` (Graviton, about 20% cheaper
   * per GB-second) or `lambda.Architecture.X86_64` (e.g. for LocalStack on an x86 host without
   * `LAMBDA_IGNORE_ARCHITECTURE=1`). The bundles are plain JavaScript and run on either.
   * @default lambda.Architecture.ARM_64
   */
  readonly architecture?: lambda.Architecture;
  /**
   * Concurrency reserved for a handler, by role (`fanOut`, `reply`, `timer`, `sweeper`, `control`,
   * `distributor`): guaranteed to it and its upper limit. At least the maximum concurrency of its
   * SQS event sources (fan-out 5, reply 5 per reply partition, timer 2, control 2; sweeper and
   * distributor 1), checked at synth: less would throttle Lambda's pollers and push messages to
   * the dead-letter queues.
   * @default - none: every handler draws on the account's unreserved concurrency
   */
  readonly reservedConcurrency?: Partial<Readonly<Record<FunctionRole, number>>>;
  /**
   * Trace the handlers with AWS X-Ray: Lambda active tracing, the X-Ray write permissions on each
   * role, and `POWERTOOLS_TRACE_ENABLED=true` for the handlers' Powertools Tracer (docs/observability.md).
   * @default false
   */
  readonly tracing?: boolean;
  /** Retention of the handlers' log groups. @default logs.RetentionDays.ONE_MONTH */
  readonly logRetention?: logs.RetentionDays;
  /**
   * How long an object stays in the payload bucket (whole days), for every prefix (`incoming/`,
   * `state/`, `outputs/`). Aggregate state may reference a stored body for as long as the state
   * lives (`topology.stateLifeSeconds`: unknown-reply timeout, open time, completion lease and
   * tombstone retention of the longest-lived definition), so a shorter value is refused at synth.
   * @default - the shortest allowed: ceil(topology.stateLifeSeconds / 1 day) + 1 day (46 days with the definitions' defaults)
   */
  readonly payloadExpiration?: Duration;
  /**
   * How long a dead-letter queue keeps a message. Every queue, DLQs included, keeps messages the
   * topology's retention (14 days, SQS's maximum) so that a redrive can happen within the window the
   * tombstones cover; only that value is accepted.
   * @deprecated every queue keeps messages 14 days; the prop is accepted only with that value.
   * @default Duration.days(14)
   */
  readonly dlqRetention?: Duration;
  /**
   * Who may send requests to the ingress queue, enforced by the queue's policy: a `Deny` of
   * `sqs:SendMessage` to every principal not listed (see {@link FaninSender}). Principals of another
   * account also need an `Allow` (`fanin.queues.ingress.queue.grantSendMessages(...)`).
   * @default - no restriction in the queue policy: any principal of the account whose IAM policies allow it (as before)
   */
  readonly ingressSenders?: readonly FaninSender[];
  /**
   * Who may send replies: to every reply partition and to the backlog, enforced by their queue
   * policies like {@link ingressSenders}. The distributor's role, which moves replies between them,
   * is always allowed. List the responders, and whoever redrives a reply DLQ.
   * @default - no restriction in the queue policies (any principal of the account whose IAM policies allow it)
   */
  readonly replySenders?: readonly FaninSender[];
  /**
   * Who may send control commands (purge, complete, set-parameters, list) to the control queue,
   * enforced by its queue policy like {@link ingressSenders}. The construct's own external-event rules
   * are always allowed (as `aws:SourceArn`). List the operators' roles (the `fanin` CLI's credentials).
   * @default - no restriction in the queue policy (any principal of the account whose IAM policies allow it)
   */
  readonly controlSenders?: readonly FaninSender[];
  /**
   * Accounts whose queue URLs a request may name as recipients, besides fanin's own account
   * (`FANIN_RECIPIENT_ACCOUNTS`; names always resolve in fanin's own account and region, and no
   * other URL is ever sent to). 12-digit ids. The fan-out's IAM still needs the queues
   * (`extraTargetQueueArns`), which must be in fanin's account or one of these, in fanin's region.
   * @default [] - request-time recipients only in fanin's own account and region
   */
  readonly recipientAccounts?: readonly string[];
  /**
   * Alarm when a reply partition holds at least this many visible messages for 5 minutes.
   * @default 1000
   */
  readonly replyDepthAlarmThreshold?: number;
  /** Actions of every alarm (e.g. an SNS topic action). @default - no actions */
  readonly alarmActions?: readonly cloudwatch.IAlarmAction[];
  /**
   * Alarm when the oldest message of a queue a handler consumes (ingress, control, timer, backlog,
   * each reply partition) has waited this long, for 5 minutes; the timer queue's threshold is 15
   * minutes more (a timer may wait SQS's longest delay). Whole seconds, at least 60.
   * @default Duration.minutes(15)
   */
  readonly oldestMessageAgeAlarm?: Duration;
  /**
   * Build the CloudWatch dashboard `<prefix>-fanin-<region>` (docs/observability.md). A dashboard costs $3 a
   * month beyond the account's first three.
   * @default true
   */
  readonly dashboard?: boolean;
  /**
   * An existing EventBridge bus for outputs of definitions with `outputs.eventBridge`.
   * @default - see `createEventBus`
   */
  readonly eventBus?: events.IEventBus;
  /**
   * Create a bus `<prefix>-outputs` for outputs. Cannot be combined with `eventBus`.
   * @default - true when a definition has `outputs.eventBridge` and `eventBus` is not given
   */
  readonly createEventBus?: boolean;
  /**
   * The bus whose events are matched by the definitions' `externalEventPattern` rules.
   * @default - the account's default bus
   */
  readonly externalEventBus?: events.IEventBus;
  /**
   * More queues the fan-out may send sub-requests to, besides those named in the definitions: the
   * request-time recipients of a recipient list. SQS queue ARNs; `*` and `?` allowed in the name.
   * @default []
   */
  readonly extraTargetQueueArns?: readonly string[];
  /** Refuse to delete the state table (DynamoDB deletion protection). @default false */
  readonly deletionProtection?: boolean;
  /**
   * An existing state table instead of the one fanin creates. It must have the topology's keys
   * and indexes (`pk`/`sk` strings; GSI `due` on `dueShard` (N) / `dueAt` (N) and GSI `open` on
   * `openDefinition` (S) / `openedAt` (N), keys only), TTL on `expiresAt`, and should deny
   * requests without TLS in its resource policy; a `dynamodb.Table` of the same app is checked at
   * synth, an imported one cannot be. Other fanin instances must not share it.
   * @default - a table `<prefix>-state` (see "What it creates")
   */
  readonly table?: dynamodb.ITable;
  /**
   * An existing claim-check bucket instead of the one fanin creates. fanin adds its `Deny` of
   * writes under `state/`, `requests/` and `outputs/` by other principals to the bucket's policy
   * when the bucket is of this app (an imported bucket's policy is its owner's: add it there); give
   * it a lifecycle rule expiring objects after at least `payloadExpirationDays`, block public access
   * and enforce TLS.
   * @default - a bucket named by CloudFormation (see "What it creates")
   */
  readonly bucket?: s3.IBucket;
  /**
   * A customer managed KMS key for everything fanin creates that holds data: the queues and their
   * DLQs (SSE-KMS), the state table, the payload bucket (SSE-KMS with an S3 bucket key) and the
   * handlers' log groups. Each handler's role may use it; a key of this stack also lets
   * CloudWatch Logs and EventBridge (the external-event rules) use it in its key policy, an
   * imported key's policy must allow them (docs/security.md). Producers, responders and output
   * consumers need `kms:GenerateDataKey` / `kms:Decrypt` on it (the queues' grant methods add them).
   * @default - AWS managed encryption: SSE-SQS, `aws/dynamodb`, SSE-S3
   */
  readonly encryptionKey?: kms.IKey;
  /**
   * What happens to the state table, the payload bucket and the log groups when they leave the
   * stack; `SNAPSHOT` is refused (none of them supports it). Queues are always destroyed (their messages are transient).
   * @default RemovalPolicy.RETAIN
   */
  readonly removalPolicy?: RemovalPolicy;
  /**
   * Empty the payload bucket when it is deleted (adds CDK's auto-delete custom resource). Needs
   * `removalPolicy: RemovalPolicy.DESTROY`.
   * @default false
   */
  readonly autoDeleteObjects?: boolean;
  /**
   * A bucket for the payload bucket's server access logs.
   * @default - no access logs (claim-check objects are short-lived; CloudTrail data events are the audit path)
   */
  readonly serverAccessLogsBucket?: s3.IBucket;
  /**
   * Directory holding the handlers' code: `dist/handlers/<handler>/handler.mjs`, pre-bundled by
   * `npm run build` (the `@fanin/cdk` package), or else `functions/<handler>.ts`, bundled at synth
   * by the local esbuild (a clone of the repository). See infra/handler-code.ts.
   * @default - the fanin package this file belongs to
   */
  readonly projectRoot?: string;
}

/** The handlers of a fanin instance. */
export interface FaninFunctions {
  readonly fanOut: FaninFunction;
  readonly reply: FaninFunction;
  readonly timer: FaninFunction;
  readonly sweeper: FaninFunction;
  readonly control: FaninFunction;
  /** Moves messages between the backlog and the reply partitions (on a schedule). */
  readonly distributor: FaninFunction;
}

const DEFAULT_PROJECT_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
/** The SQS Extended Client's threshold (256 KiB), a size every SQS queue accepts. */
const MAX_CLAIM_CHECK_THRESHOLD = 262_144;
const QUEUE_NAME = /^[A-Za-z0-9_-]{1,80}$|^[A-Za-z0-9_-]{1,75}\.fifo$/;
const QUEUE_URL = /^https:\/\/sqs\.([a-z0-9-]+)\.amazonaws\.com(?:\.cn)?\/(\d{12})\/([A-Za-z0-9_.-]{1,80})$/;
const QUEUE_ARN = /^arn:aws[a-z-]*:sqs:[a-z0-9-]+:\d{12}:[A-Za-z0-9_.*?-]{1,80}$/;
const ACCOUNT_ID = /^\d{12}$/;
/** An IAM user or role ARN (or an account's root), as `aws:PrincipalArn` holds it; wildcards allowed. */
const IAM_PRINCIPAL_ARN = /^arn:aws[a-z-]*:iam::(\d{12}|[*?]+):(root|(role|user)\/[\w+=,.@/*?-]+)$/;
/** The ARN of a resource a service delivers for (`aws:SourceArn`): an SNS topic, an EventBridge rule... */
const SOURCE_ARN = /^arn:aws[a-z-]*:(?!iam:|sts:)[a-z0-9-]+:[a-z0-9-]*:(\d{12})?:.+$/;
const DAY_SECONDS = 24 * 3600;

/**
 * fanin in one construct: the queues (ingress, control, timer, the reply partitions and their
 * backlog, FIFO outputs, each with a dead-letter queue and an alarm on it), the state table, the
 * claim-check bucket, the six handlers with their event sources and least-privilege grants, the
 * sweeper's and the distributor's schedules, one rule per definition's external-event pattern, and
 * optionally an output event bus.
 *
 * Everything is built from `describeTopology(...)`, the same description the local runtime uses.
 *
 * @example
 * new Fanin(stack, 'Fanin', {
 *   definitions: [{ name: 'quotes', completion: { strategy: 'all' }, fanOut: { type: 'recipient-list', recipients: ['bank-a', 'bank-b'] } }],
 *   replyPartitions: 4,
 *   partitioning: { highWatermark: 200, lowWatermark: 50 },
 * });
 */
export class Fanin extends Construct {
  /** The resolved topology the resources were built from. */
  public readonly topology: Topology;
  /** The state table (aggregates, replies, tombstones, held replies, runtime parameters, partition state). */
  public readonly table: dynamodb.ITable;
  /** The claim-check bucket for payloads too large for SQS or DynamoDB. */
  public readonly bucket: s3.IBucket;
  /** Every queue by role, with its dead-letter queue. */
  public readonly queues: Readonly<Record<QueueRole, FaninQueue>>;
  /** The reply partitions, in partition order. */
  public readonly replyPartitions: readonly FaninQueue[];
  /** The handlers. */
  public readonly functions: FaninFunctions;
  /** The output bus, when there is one. */
  public readonly eventBus?: events.IEventBus;
  /** The sweeper's schedule. */
  public readonly sweepSchedule: events.Rule;
  /** The distributor's schedule (every `partitioning.distributorIntervalSeconds`). */
  public readonly distributeSchedule: events.Rule;
  /** One rule per definition with an `externalEventPattern`, by definition name. */
  public readonly externalEventRules: ReadonlyMap<string, events.Rule>;
  /**
   * Every alarm: one per dead-letter queue, one per reply partition's depth, one per condition
   * the use cases log with an `alarm` field ({@link Alarm}), and those of {@link observability}.
   */
  public readonly alarms: readonly cloudwatch.Alarm[];
  /** The dashboard and the alarms on the handlers, the table, the queues' ages and the cycles. */
  public readonly observability: FaninObservability;
  /** The use cases' alarms by {@link Alarm} value, each on a metric fed by every handler's log group. */
  public readonly useCaseAlarms: Readonly<Record<Alarm, cloudwatch.Alarm>>;
  /** How many days objects live in the payload bucket: at least the state's life plus a day. */
  public readonly payloadExpirationDays: number;

  public constructor(scope: Construct, id: string, props: FaninProps) {
    super(scope, id);
    validateProps(props);
    const functionTimeout = props.functionTimeout ?? Duration.seconds(30);
    this.topology = describeTopology({
      definitions: props.definitions,
      ...(props.prefix !== undefined ? { prefix: props.prefix } : {}),
      ...(props.replyPartitions !== undefined ? { replyPartitions: props.replyPartitions } : {}),
      ...(props.fifoReplies !== undefined ? { fifoReplies: props.fifoReplies } : {}),
      ...(props.replyBatchingWindowSeconds !== undefined
        ? { replyBatchingWindowSeconds: props.replyBatchingWindowSeconds }
        : {}),
      ...(props.replyConcurrency !== undefined ? { replyConcurrency: props.replyConcurrency } : {}),
      ...(props.maxReceiveCount !== undefined ? { maxReceiveCount: props.maxReceiveCount } : {}),
      ...(props.partitioning !== undefined ? { partitioning: props.partitioning } : {}),
      functionTimeoutSeconds: functionTimeout.toSeconds({ integral: false }),
    });
    const topology = this.topology;
    const definitions = [...topology.definitions.values()];
    validateDefinitionsAgainstProps(definitions, props);
    validateTargetsAgainstAccounts(Stack.of(this), props);
    validateTargetsAgainstOwnQueues(topology, props);
    this.payloadExpirationDays = payloadExpirationDays(topology, props);
    const wantsBus = definitions.some((d) => d.outputs.eventBridge);
    const createBus = !props.eventBus && (props.createEventBus ?? wantsBus);
    const busName = props.eventBus?.eventBusName ?? (createBus ? `${topology.prefix}-outputs` : undefined);
    validateOptions(topology, props);
    checkEnvironmentSize(topology, {
      ...(busName !== undefined ? { eventBusName: busName } : {}),
      ...(props.claimCheckThreshold !== undefined
        ? { claimCheckThresholdBytes: props.claimCheckThreshold }
        : {}),
      ...(props.recipientAccounts !== undefined ? { recipientAccounts: props.recipientAccounts } : {}),
      ...(props.table ? { tableName: props.table.tableName } : {}),
      serviceName: topology.prefix,
      tracing: props.tracing ?? false,
    });
    const key = props.encryptionKey;
    const removalPolicy = props.removalPolicy ?? RemovalPolicy.RETAIN;
    const alarmActions = props.alarmActions ?? [];

    // ---- Queues -------------------------------------------------------------------------------
    const queueScope = new Construct(this, 'Queues');
    const queues = {} as Record<QueueRole, FaninQueue>;
    for (const role of Object.values(QueueRole)) {
      queues[role] = new FaninQueue(queueScope, queueId(role), {
        spec: topology.queues[role],
        alarmActions,
        ...(key ? { encryptionKey: key } : {}),
      });
    }
    this.queues = queues;
    const depthThreshold = props.replyDepthAlarmThreshold ?? 1000;
    this.replyPartitions = topology.replyPartitions.map((spec, index) => {
      const partition = new FaninQueue(queueScope, `Reply${index}`, {
        spec,
        alarmActions,
        ...(key ? { encryptionKey: key } : {}),
      });
      const depth = partition.queue
        .metricApproximateNumberOfMessagesVisible({
          period: Duration.minutes(1),
          statistic: cloudwatch.Stats.MAXIMUM,
        })
        .createAlarm(partition, 'DepthAlarm', {
          alarmName: `${spec.name.replace(/\.fifo$/, '')}-depth`,
          alarmDescription: `${spec.name} has held at least ${depthThreshold} messages for 5 minutes: its consumer is behind or stalled.`,
          threshold: depthThreshold,
          comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
          evaluationPeriods: 5,
          treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
        });
      for (const action of alarmActions) depth.addAlarmAction(action);
      return partition;
    });

    // ---- State --------------------------------------------------------------------------------
    // The table and the bucket fanin creates (infra/state-resources.ts), or the user's own.
    this.table =
      props.table ??
      createStateTable(this, topology, {
        removalPolicy,
        deletionProtection: props.deletionProtection ?? false,
        ...(key ? { encryptionKey: key } : {}),
      });
    this.bucket =
      props.bucket ??
      createPayloadBucket(this, {
        expirationDays: this.payloadExpirationDays,
        removalPolicy,
        autoDeleteObjects: props.autoDeleteObjects ?? false,
        ...(props.serverAccessLogsBucket ? { serverAccessLogsBucket: props.serverAccessLogsBucket } : {}),
        ...(key ? { encryptionKey: key } : {}),
      });
    if (props.bucket && !(props.bucket instanceof s3.Bucket)) {
      Annotations.of(this).addWarningV2(
        'fanin:importedBucket',
        `the payload bucket is imported: fanin cannot add its lifecycle rule (objects must expire after at least ${this.payloadExpirationDays} days) nor its policy denying writes under state/, requests/ and outputs/ to other principals; add both to the bucket (README, construct options)`,
      );
    }

    // ---- Output bus ---------------------------------------------------------------------------
    if (props.eventBus) {
      this.eventBus = props.eventBus;
    } else if (createBus) {
      this.eventBus = new events.EventBus(this, 'OutputBus', { eventBusName: `${topology.prefix}-outputs` });
    }

    // ---- Handlers -----------------------------------------------------------------------------
    const environment = handlerEnvironment({
      tableName: this.table.tableName,
      queueUrls: Object.fromEntries(
        Object.values(QueueRole).map((role) => [role, queues[role].queue.queueUrl]),
      ) as Record<QueueRole, string>,
      replyQueueUrls: this.replyPartitions.map((p) => p.queue.queueUrl),
      bucketName: this.bucket.bucketName,
      partitioning: topology.partitioning,
      ...(this.eventBus ? { eventBusName: this.eventBus.eventBusName } : {}),
      ...(props.claimCheckThreshold !== undefined
        ? { claimCheckThresholdBytes: props.claimCheckThreshold }
        : {}),
      completionLeaseSeconds: topology.completionLeaseSeconds,
      ...(props.recipientAccounts !== undefined ? { recipientAccounts: props.recipientAccounts } : {}),
      serviceName: topology.prefix,
      tracing: props.tracing ?? false,
    });
    const reserved = (role: FunctionRole) =>
      props.reservedConcurrency?.[role] !== undefined
        ? { reservedConcurrentExecutions: props.reservedConcurrency[role] }
        : {};
    const common = {
      projectRoot: props.projectRoot ?? DEFAULT_PROJECT_ROOT,
      timeout: functionTimeout,
      memorySize: props.functionMemorySize ?? 512,
      logRetention: props.logRetention ?? logs.RetentionDays.ONE_MONTH,
      logRemovalPolicy: removalPolicy,
      environment,
      definitionsJson: JSON.stringify(definitions),
      ...(props.architecture ? { architecture: props.architecture } : {}),
      tracing: props.tracing ?? false,
      ...(key ? { logEncryptionKey: key } : {}),
    };
    this.functions = {
      fanOut: new FaninFunction(this, 'FanOut', {
        ...common,
        ...reserved('fanOut'),
        handler: HandlerName.FAN_OUT,
        description: 'fanin: opens an aggregate, then sends its sub-requests',
      }),
      reply: new FaninFunction(this, 'Reply', {
        ...common,
        ...reserved('reply'),
        handler: HandlerName.REPLY,
        description: 'fanin: records replies once, completes aggregates',
      }),
      timer: new FaninFunction(this, 'Timer', {
        ...common,
        ...reserved('timer'),
        handler: HandlerName.TIMER,
        description: 'fanin: deadlines of aggregates and held replies',
      }),
      sweeper: new FaninFunction(this, 'Sweeper', {
        ...common,
        ...reserved('sweeper'),
        handler: HandlerName.SWEEPER,
        description: 'fanin: safety net for overdue aggregates and lost timers',
        // The next sweep is the retry.
        retryAttempts: 0,
      }),
      control: new FaninFunction(this, 'Control', {
        ...common,
        ...reserved('control'),
        handler: HandlerName.CONTROL,
        description: 'fanin: control commands and external events',
      }),
      distributor: new FaninFunction(this, 'Distributor', {
        ...common,
        ...reserved('distributor'),
        handler: HandlerName.DISTRIBUTOR,
        description: 'fanin: feeds the reply partitions from the backlog between watermarks',
        // The next cycle is the retry; a retried cycle would only race the next one.
        retryAttempts: 0,
      }),
    };
    const { fanOut, reply, timer, sweeper, control, distributor } = this.functions;

    // ---- Event sources and schedules ----------------------------------------------------------
    fanOut.addEventSource(eventSource(queues[QueueRole.INGRESS].queue, topology.consumers.fanOut));
    this.replyPartitions.forEach((partition, index) => {
      reply.addEventSource(
        eventSource(partition.queue, topology.replyConsumers[index] ?? topology.consumers.reply),
      );
    });
    timer.addEventSource(eventSource(queues[QueueRole.TIMER].queue, topology.consumers.timer));
    control.addEventSource(eventSource(queues[QueueRole.CONTROL].queue, topology.consumers.control));
    this.sweepSchedule = new events.Rule(this, 'SweepSchedule', {
      description: `${topology.prefix}: sweep overdue aggregates (fanin)`,
      schedule: events.Schedule.rate(Duration.seconds(topology.sweepIntervalSeconds)),
      targets: [new targets.LambdaFunction(sweeper, { retryAttempts: 0 })],
    });
    // The backlog has no event source: only the distributor reads it, a cycle at a time.
    this.distributeSchedule = new events.Rule(this, 'DistributeSchedule', {
      description: `${topology.prefix}: feed the reply partitions from the backlog (fanin)`,
      schedule: events.Schedule.rate(Duration.seconds(topology.partitioning.distributorIntervalSeconds)),
      targets: [new targets.LambdaFunction(distributor, { retryAttempts: 0 })],
    });

    // ---- Grants -------------------------------------------------------------------------------
    // Each role allows what its handler's use cases call and nothing else (the call sites are
    // listed in docs/security.md; test/unit/infra/iam.test.ts compares each policy action by
    // action). Consuming a queue is granted by its event source (CDK's consume grant).
    for (const [name, fn] of Object.entries(this.functions) as [keyof FaninFunctions, FaninFunction][]) {
      const access = HANDLER_ACCESS[name];
      for (const items of access.items) {
        // Fine-grained access: every item the call reads or writes (each item of a transaction)
        // has a partition key of this form. On the table only: an index query is keyed by the
        // index's own partition key, which these patterns do not describe.
        iam.Grant.addToPrincipal({
          grantee: fn,
          actions: [...items.actions],
          resourceArns: [this.table.tableArn],
          conditions: {
            [items.keys.some((k) => k.includes('*'))
              ? 'ForAllValues:StringLike'
              : 'ForAllValues:StringEquals']: {
              'dynamodb:LeadingKeys': [...items.keys],
            },
          },
        });
      }
      if (access.indexes.length > 0) {
        iam.Grant.addToPrincipal({
          grantee: fn,
          actions: ['dynamodb:Query'],
          resourceArns: access.indexes.map((index) => `${this.table.tableArn}/index/${index}`),
        });
      }
      const payloads = s3.BucketGrants.fromBucket(this.bucket);
      if (access.payloads) {
        // Read what producers wrote; read and write stored bodies and large outputs.
        payloads.actionsOnObjectKeys(fn, `${PayloadPrefix.INCOMING}*`, 's3:GetObject');
        payloads.actionsOnObjectKeys(fn, `${PayloadPrefix.STATE}*`, ...PAYLOAD_ACTIONS);
        payloads.actionsOnObjectKeys(fn, `${PayloadPrefix.OUTPUTS}*`, ...PAYLOAD_ACTIONS);
      }
      // Large sub-requests, for the responders to read.
      if (access.sendsRequests) {
        payloads.actionsOnObjectKeys(fn, `${PayloadPrefix.REQUESTS}*`, 's3:PutObject');
      }
      if (access.outputs) {
        for (const role of OUTPUT_ROLES) queues[role].queue.grants.sendMessages(fn);
        this.eventBus?.grantPutEventsTo(fn);
      }
      if (access.armsTimers) queues[QueueRole.TIMER].queue.grants.sendMessages(fn);
    }
    // The fan-out picks each aggregate's reply partition by availability: partition state (a
    // Query of the table) and each partition's depth.
    for (const partition of this.replyPartitions) {
      partition.queue.grants.actions(fanOut, ['sqs:GetQueueAttributes']);
    }
    // The distributor moves messages both ways between the backlog and the partitions (receive,
    // send, delete) and reads the partitions' depths; in the table it only touches the partition
    // state of the reply destination.
    for (const queue of [queues[QueueRole.BACKLOG].queue, ...this.replyPartitions.map((p) => p.queue)]) {
      queue.grants.consumeMessages(distributor);
      queue.grants.sendMessages(distributor);
    }
    const targetArns = [
      ...fanOutTargetArns(Stack.of(this), definitions),
      ...(props.extraTargetQueueArns ?? []),
    ];
    if (targetArns.length > 0) {
      // External queues known only by ARN (wildcards allowed): no queue object to grant on. The
      // sender resolves queue names with GetQueueUrl, then sends in batches (SendMessage).
      iam.Grant.addToPrincipal({
        grantee: fanOut,
        actions: ['sqs:SendMessage', 'sqs:GetQueueUrl'],
        resourceArns: [...new Set(targetArns)],
      });
    }
    // A recipient named in a request must never be one of fanin's own inbound queues (a forged
    // request, reply or control command sent with the fan-out's role), whatever a wildcard target
    // ARN matches: the fan-out's role refuses them outright. The outputs and the timer queue, which
    // it does send to, are the runtime's to refuse as recipients.
    fanOut.addToRolePolicy(
      new iam.PolicyStatement({
        sid: 'NeverSendToOwnInboundQueues',
        effect: iam.Effect.DENY,
        actions: ['sqs:SendMessage'],
        resources: [
          queues[QueueRole.INGRESS].queue.queueArn,
          queues[QueueRole.CONTROL].queue.queueArn,
          queues[QueueRole.BACKLOG].queue.queueArn,
          ...this.replyPartitions.map((p) => p.queue.queueArn),
          ...[...Object.values(queues), ...this.replyPartitions].map((q) => q.deadLetterQueue.queueArn),
        ],
      }),
    );

    // ---- Who may send, who may write to the bucket --------------------------------------------
    if (props.ingressSenders) {
      restrictSenders(queues[QueueRole.INGRESS].queue, props.ingressSenders, []);
    }
    if (props.replySenders) {
      for (const queue of [queues[QueueRole.BACKLOG].queue, ...this.replyPartitions.map((p) => p.queue)]) {
        restrictSenders(queue, props.replySenders, [distributor.role!.roleArn]);
      }
    }
    // (the control queue's restriction is added with the external-event rules below)
    const payloadRoles = (Object.keys(HANDLER_ACCESS) as (keyof FaninFunctions)[])
      .filter((name) => HANDLER_ACCESS[name].payloads)
      .map((name) => this.functions[name].role!.roleArn);
    // Producers write under incoming/ only; what fanin's state references (state/) and what it
    // sends (requests/, outputs/) is written by fanin's roles alone, whatever other principals'
    // IAM allows.
    this.bucket.addToResourcePolicy(
      new iam.PolicyStatement({
        sid: 'OnlyFaninWritesStateAndOutputs',
        effect: iam.Effect.DENY,
        principals: [new iam.AnyPrincipal()],
        actions: ['s3:PutObject'],
        resources: FANIN_WRITTEN_PREFIXES.map((prefix) => this.bucket.arnForObjects(`${prefix}*`)),
        conditions: { StringNotLike: { 'aws:PrincipalArn': payloadRoles } },
      }),
    );

    // ---- Alarms the use cases raise -----------------------------------------------------------
    // The handlers log them at error level with the JSON field `alarm` (shared/ports.ts); every
    // handler's log group feeds one metric per alarm value, and each metric has its alarm.
    const alarmScope = new Construct(this, 'UseCaseAlarms');
    const useCaseAlarms = {} as Record<Alarm, cloudwatch.Alarm>;
    for (const value of Object.values(Alarm)) {
      const metricName = `${topology.prefix}-${value}`;
      for (const [name, fn] of Object.entries(this.functions) as [string, FaninFunction][]) {
        new logs.MetricFilter(alarmScope, `${name}-${value}`, {
          logGroup: fn.logGroup,
          filterPattern: logs.FilterPattern.stringValue('$.alarm', '=', value),
          metricNamespace: ALARM_NAMESPACE,
          metricName,
          metricValue: '1',
        });
      }
      const alarm = new cloudwatch.Metric({
        namespace: ALARM_NAMESPACE,
        metricName,
        statistic: cloudwatch.Stats.SUM,
        period: Duration.minutes(5),
      }).createAlarm(alarmScope, value, {
        alarmName: metricName,
        alarmDescription: `A fanin handler logged alarm "${value}" (${ALARM_DESCRIPTIONS[value]}): see its log group for the aggregate.`,
        threshold: 1,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      });
      for (const action of alarmActions) alarm.addAlarmAction(action);
      useCaseAlarms[value] = alarm;
    }
    this.useCaseAlarms = useCaseAlarms;
    this.acknowledgeGrantWildcards(props.extraTargetQueueArns ?? []);
    const openLists = definitions
      .filter((d) => d.fanOut?.type === 'recipient-list' && !d.fanOut.recipients)
      .map((d) => d.name);
    if (openLists.length > 0 && (props.extraTargetQueueArns ?? []).length === 0) {
      Annotations.of(this).addWarningV2(
        'fanin:recipientsUnknownAtSynth',
        `definitions ${JSON.stringify(openLists)} take their recipients from the request, but no extraTargetQueueArns allow the fan-out to send to them`,
      );
    }

    // ---- External events ----------------------------------------------------------------------
    const rules = new Map<string, events.Rule>();
    for (const definition of definitions) {
      if (!definition.externalEventPattern) continue;
      const rule = new events.Rule(this, `ExternalEvent-${definition.name}`, {
        description: `${topology.prefix}: external events of definition ${definition.name} (fanin)`,
        ...(props.externalEventBus ? { eventBus: props.externalEventBus } : {}),
        // The definition's pattern is EventBridge's own JSON; CDK passes unknown keys through.
        eventPattern: definition.externalEventPattern as events.EventPattern,
      });
      // The raw event: the control handler recognises an EventBridge envelope and completes the
      // aggregate named in `detail.aggregateId` (or every open one of the matching definition).
      rule.addTarget(
        new targets.SqsQueue(queues[QueueRole.CONTROL].queue, {
          deadLetterQueue: queues[QueueRole.CONTROL].deadLetterQueue,
        }),
      );
      rules.set(definition.name, rule);
    }
    this.externalEventRules = rules;
    if (props.controlSenders) {
      restrictSenders(
        queues[QueueRole.CONTROL].queue,
        props.controlSenders,
        [],
        [...rules.values()].map((rule) => rule.ruleArn),
      );
    }

    // ---- Customer managed key, tracing ---------------------------------------------------------
    if (key) grantKeyUse(key, Object.values(this.functions));
    if (props.tracing) acknowledgeTracing(Object.values(this.functions));

    // ---- Dashboard and alarms (infra/observability.ts) ------------------------------------------
    const queueAlarms = [...Object.values(queues), ...this.replyPartitions].flatMap((q) =>
      q.node.children.filter((c): c is cloudwatch.Alarm => c instanceof cloudwatch.Alarm),
    );
    const working = (role: QueueRole, delayed = false) => ({
      name: topology.queues[role].name,
      queue: queues[role].queue,
      ...(delayed ? { delayed } : {}),
    });
    this.observability = new FaninObservability(this, 'Observability', {
      prefix: topology.prefix,
      serviceName: topology.prefix,
      functions: { ...this.functions },
      table: this.table,
      workingQueues: [
        working(QueueRole.INGRESS),
        working(QueueRole.CONTROL),
        working(QueueRole.TIMER, true),
        working(QueueRole.BACKLOG),
        ...this.replyPartitions.map((p, index) => ({
          name: topology.replyPartitions[index]?.name ?? `reply-${index}`,
          queue: p.queue,
        })),
      ],
      deadLetterQueues: [...Object.values(queues), ...this.replyPartitions].map((q) => q.deadLetterQueue),
      replyQueues: [...this.replyPartitions.map((p) => p.queue), queues[QueueRole.BACKLOG].queue],
      sweepIntervalSeconds: topology.sweepIntervalSeconds,
      distributorIntervalSeconds: topology.partitioning.distributorIntervalSeconds,
      oldestMessageAgeAlarm: props.oldestMessageAgeAlarm ?? Duration.minutes(15),
      alarmActions,
      dashboard: props.dashboard ?? true,
      existingAlarms: [...Object.values(useCaseAlarms), ...queueAlarms],
    });
    this.alarms = [...queueAlarms, ...Object.values(useCaseAlarms), ...this.observability.alarms];
  }

  /**
   * Lets a producer or responder send large messages: `s3:PutObject` under `incoming/` of the
   * payload bucket, the only prefix fanin follows a pointer to in a message it consumes, and the
   * bucket key's `kms:GenerateDataKey` / `kms:Decrypt` when it has one (`encryptionKey`). (Sending
   * to the queues is granted separately, e.g. `fanin.queues.ingress.queue.grantSendMessages`.)
   */
  public grantLargeMessageWrites(grantee: iam.IGrantable): iam.Grant {
    // With a KMS-encrypted bucket (encryptionKey), an upload also needs a data key from its key.
    const kmsActions = this.bucket.encryptionKey ? ['kms:GenerateDataKey', 'kms:Decrypt'] : [];
    return s3.BucketGrants.fromBucket(this.bucket).actionsOnObjectKeys(
      grantee,
      `${PayloadPrefix.INCOMING}*`,
      's3:PutObject',
      ...kmsActions,
    );
  }

  /**
   * Lets a responder or a consumer of the outputs read the large messages fanin sends:
   * `s3:GetObject` under `requests/`, `outputs/` and `incoming/` (a forwarded body), never `state/`;
   * and `kms:Decrypt` on the bucket's key when it has one (`encryptionKey`).
   */
  public grantLargeMessageReads(grantee: iam.IGrantable): iam.Grant {
    const kmsActions = this.bucket.encryptionKey ? ['kms:Decrypt'] : [];
    const grants = READER_PREFIXES.map((prefix) =>
      s3.BucketGrants.fromBucket(this.bucket).actionsOnObjectKeys(
        grantee,
        `${prefix}*`,
        's3:GetObject',
        ...kmsActions,
      ),
    );
    return grants.reduce((all, grant) => all.combine(grant));
  }

  /**
   * The wildcards that cdk-nag reports and that are intended: an object grant covers the objects
   * under a prefix of the bucket (`<bucket>/state/*`), and an extra target ARN with `*` or `?` is the
   * user's own choice.
   */
  private acknowledgeGrantWildcards(extraTargetQueueArns: readonly string[]): void {
    const stack = Stack.of(this);
    // The resource as cdk-nag writes it: `<Payloads….Arn>/state/*` for the bucket fanin creates,
    // the user's bucket's ARN otherwise.
    const objects = (prefix: string): string =>
      nagResource(stack.resolve(this.bucket.arnForObjects(`${prefix}*`)));
    for (const [name, fn] of Object.entries(this.functions) as [keyof FaninFunctions, FaninFunction][]) {
      const access = HANDLER_ACCESS[name];
      const prefixes = [
        ...(access.payloads ? [PayloadPrefix.INCOMING, PayloadPrefix.STATE, PayloadPrefix.OUTPUTS] : []),
        ...(access.sendsRequests ? [PayloadPrefix.REQUESTS] : []),
      ];
      for (const prefix of prefixes) {
        Validations.of(fn.role!).acknowledge({
          id: `AwsSolutions-IAM5[Resource::${objects(prefix)}]`,
          reason:
            prefix === PayloadPrefix.INCOMING
              ? 'Producers name the claim-check objects they write under incoming/; s3:GetObject only, on that prefix of the payload bucket.'
              : `Object keys under ${prefix} are generated per message; s3:GetObject and/or s3:PutObject only, on that prefix of the payload bucket.`,
        });
      }
    }
    for (const arn of extraTargetQueueArns) {
      if (Token.isUnresolved(arn) || !/[*?]/.test(arn)) continue;
      Validations.of(this.functions.fanOut.role!).acknowledge({
        id: `AwsSolutions-IAM5[Resource::${arn}]`,
        reason:
          'A wildcard target queue given in extraTargetQueueArns: the recipients of a recipient list come from the request, and this pattern is what the deployment allows them to be.',
      });
    }
  }
}

/** The CloudWatch namespace of the use cases' alarm metrics (`<prefix>-<alarm>`). */
export const ALARM_NAMESPACE = 'fanin';

const ALARM_DESCRIPTIONS: Readonly<Record<Alarm, string>> = {
  [Alarm.OUTPUT_CHANNEL_FAILED]: 'an output channel keeps failing; the other outputs were not re-sent',
  [Alarm.DUE_ITEM_FAILED]: 'a due item failed in the sweeper and was set aside',
  [Alarm.COMPLETION_STUCK]: 'a completion could not be finished',
};

/**
 * Adds to a queue's policy a `Deny` of `sqs:SendMessage` to every principal that is not one of the
 * senders (nor one of `alwaysRoles`, nor delivering for one of `alwaysSources`). The conditions of
 * one block are ANDed: the request is refused only if its principal ARN, its account and its source
 * ARN all fail to match; a key missing from the request (no source ARN for an IAM principal, no
 * principal ARN for a service) counts as not matching.
 */
function restrictSenders(
  queue: sqs.Queue,
  senders: readonly FaninSender[],
  alwaysRoles: readonly string[],
  alwaysSources: readonly string[] = [],
): void {
  const principalArns = [...alwaysRoles];
  const accounts: string[] = [];
  const sources = [...alwaysSources];
  for (const sender of senders) {
    if (typeof sender !== 'string') principalArns.push(sender.roleArn);
    else if (ACCOUNT_ID.test(sender)) accounts.push(sender);
    else if (IAM_PRINCIPAL_ARN.test(sender)) principalArns.push(sender);
    else sources.push(sender);
  }
  queue.addToResourcePolicy(
    new iam.PolicyStatement({
      sid: 'OnlyListedSenders',
      effect: iam.Effect.DENY,
      principals: [new iam.AnyPrincipal()],
      actions: ['sqs:SendMessage'],
      resources: [queue.queueArn],
      conditions: {
        ...(principalArns.length > 0 ? { StringNotLike: { 'aws:PrincipalArn': principalArns } } : {}),
        ...(accounts.length > 0 ? { StringNotEquals: { 'aws:PrincipalAccount': accounts } } : {}),
        ...(sources.length > 0 ? { ArnNotLike: { 'aws:SourceArn': sources } } : {}),
      },
    }),
  );
}

/**
 * What each handler does outside its own log group and the queue it consumes, from the use cases
 * it runs (docs/security.md lists the call sites):
 * - `items`: DynamoDB actions on items of the state table, by the partition keys they may touch
 *   (`dynamodb:LeadingKeys`). Writes inside a TransactWriteItems are authorized as PutItem /
 *   UpdateItem / DeleteItem, each item under its own key. No handler scans, batch-gets,
 *   batch-writes or describes the table.
 * - `indexes`: the indexes it queries (Query only).
 * - `payloads`: reads claim-check objects producers wrote (`incoming/`), reads and writes the
 *   bodies fanin stores (`state/`) and its large outputs (`outputs/`).
 * - `sendsRequests`: writes large sub-requests (`requests/`).
 * - `outputs`: sends to the output queues and, with a bus, puts events on it.
 * - `armsTimers`: sends delayed messages to the timer queue.
 */
interface HandlerAccess {
  readonly items: readonly { readonly keys: readonly string[]; readonly actions: readonly string[] }[];
  readonly indexes: readonly string[];
  readonly payloads: boolean;
  /** Stores large sub-requests under `requests/` (the fan-out's sender). */
  readonly sendsRequests?: boolean;
  readonly outputs: boolean;
  readonly armsTimers: boolean;
}

/** Aggregate items: open, record, hold, consolidate, count late, complete and close. */
const AGGREGATE_ACTIONS = [
  'dynamodb:DeleteItem',
  'dynamodb:GetItem',
  'dynamodb:PutItem',
  'dynamodb:Query',
  'dynamodb:UpdateItem',
] as const;

/** s3:GetObject resolves a pointer or a stored payload; s3:PutObject stores one. */
const PAYLOAD_ACTIONS = ['s3:GetObject', 's3:PutObject'] as const;

const AGGREGATES = { keys: [AGGREGATE_KEYS], actions: AGGREGATE_ACTIONS };
/** The effective parameters of a definition, read when an aggregate opens. */
const READ_PARAMETERS = { keys: [PARAMETER_KEYS], actions: ['dynamodb:GetItem'] };

const HANDLER_ACCESS: Readonly<Record<keyof FaninFunctions, HandlerAccess>> = {
  // The fan-out also reads the reply destination's partition state to choose a reply-to partition.
  fanOut: {
    items: [AGGREGATES, READ_PARAMETERS, { keys: [PARTITION_STATE_KEY], actions: ['dynamodb:Query'] }],
    indexes: [],
    payloads: true,
    sendsRequests: true,
    outputs: true,
    armsTimers: true,
  },
  // Self-starting aggregates open on a reply, with their definition's parameters.
  reply: {
    items: [AGGREGATES, READ_PARAMETERS],
    indexes: [],
    payloads: true,
    outputs: true,
    armsTimers: true,
  },
  timer: { items: [AGGREGATES], indexes: [], payloads: true, outputs: true, armsTimers: true },
  // The sweeper finds due items in `due` and acts on them without re-arming their timers (it is
  // the timers' safety net).
  sweeper: { items: [AGGREGATES], indexes: ['due'], payloads: true, outputs: true, armsTimers: false },
  // Control lists (the `due` index, then each aggregate), completes and purges, and sets parameters
  // (PutItem of `D#<definition>`); it never consolidates held replies, the only delete.
  control: {
    items: [
      { keys: [AGGREGATE_KEYS], actions: AGGREGATE_ACTIONS.filter((a) => a !== 'dynamodb:DeleteItem') },
      { keys: [PARAMETER_KEYS], actions: ['dynamodb:PutItem'] },
    ],
    indexes: ['due'],
    payloads: true,
    outputs: true,
    armsTimers: false,
  },
  // Partition state only: Query (load) and UpdateItem (enabled flag, cycle bookkeeping).
  distributor: {
    items: [{ keys: [PARTITION_STATE_KEY], actions: ['dynamodb:Query', 'dynamodb:UpdateItem'] }],
    indexes: [],
    payloads: false,
    outputs: false,
    armsTimers: false,
  },
};

function queueId(role: QueueRole): string {
  return role
    .split('-')
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join('');
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

/** The ARNs of the queues the definitions fan out to (names in this account and region, or URLs). */
function fanOutTargetArns(stack: Stack, definitions: readonly Definition[]): string[] {
  const arns: string[] = [];
  for (const definition of definitions) {
    const fanOut = definition.fanOut;
    if (!fanOut) continue;
    const names =
      fanOut.type === 'splitter'
        ? [fanOut.target]
        : fanOut.type === 'recipient-list'
          ? (fanOut.recipients ?? [])
          : [];
    for (const target of names) {
      const url = QUEUE_URL.exec(target);
      if (url) {
        arns.push(`arn:${Aws.PARTITION}:sqs:${url[1]}:${url[2]}:${url[3]}`);
      } else {
        arns.push(stack.formatArn({ service: 'sqs', resource: target }));
      }
    }
  }
  return arns;
}

interface Rule {
  readonly ok: (props: FaninProps) => boolean;
  readonly message: (props: FaninProps) => string;
}

const whole = (d: Duration, unit: 'seconds' | 'days'): number =>
  unit === 'seconds' ? d.toSeconds({ integral: false }) : d.toDays({ integral: false });

/**
 * Rules on the props alone; topology options (prefix, partitions, receives, partitioning values and
 * their order) are checked by describeTopology, whose messages also name the value received.
 */
const RULES: readonly Rule[] = [
  {
    ok: (p) => Array.isArray(p.definitions) && p.definitions.length > 0,
    message: (p) =>
      `definitions must hold at least one definition (given ${p.definitions?.length ?? 'nothing'})`,
  },
  {
    ok: (p) => {
      if (p.functionTimeout === undefined) return true;
      const s = whole(p.functionTimeout, 'seconds');
      return Number.isInteger(s) && s >= 1 && s <= 900;
    },
    message: (p) =>
      `functionTimeout must be a whole number of seconds between 1 and 900 inclusive (given ${p.functionTimeout?.toHumanString()})`,
  },
  {
    ok: (p) =>
      p.functionMemorySize === undefined ||
      (Number.isInteger(p.functionMemorySize) &&
        p.functionMemorySize >= 128 &&
        p.functionMemorySize <= 10240),
    message: (p) =>
      `functionMemorySize must be an integer between 128 and 10240 MiB inclusive (given ${p.functionMemorySize})`,
  },
  {
    ok: (p) => {
      if (p.payloadExpiration === undefined) return true;
      const days = whole(p.payloadExpiration, 'days');
      return Number.isInteger(days) && days >= 1;
    },
    message: (p) =>
      `payloadExpiration must be a whole number of days, at least 1 (given ${p.payloadExpiration?.toHumanString()})`,
  },
  {
    ok: (p) => p.dlqRetention === undefined || whole(p.dlqRetention, 'seconds') === MAX_RETENTION_SECONDS,
    message: (p) =>
      `dlqRetention must be 14 days, the retention of every fanin queue and DLQ, so that a failed message can be redriven within the window its aggregate's tombstone covers; leave it unset (given ${p.dlqRetention?.toHumanString()})`,
  },
  {
    ok: (p) =>
      p.replyDepthAlarmThreshold === undefined ||
      (Number.isInteger(p.replyDepthAlarmThreshold) && p.replyDepthAlarmThreshold >= 1),
    message: (p) =>
      `replyDepthAlarmThreshold must be an integer of at least 1 (given ${p.replyDepthAlarmThreshold})`,
  },
  {
    // EventBridge rate schedules are whole minutes (CDK refuses `rate(90 seconds)`); rounding up
    // would silently run the distributor less often than asked, so the value is refused instead.
    ok: (p) => {
      const interval = p.partitioning?.distributorIntervalSeconds;
      return interval === undefined || (Number.isInteger(interval) && interval >= 60 && interval % 60 === 0);
    },
    message: (p) =>
      `partitioning.distributorIntervalSeconds must be a whole number of minutes in seconds (60, 120, ...): it becomes an EventBridge rate schedule (given ${p.partitioning?.distributorIntervalSeconds})`,
  },
  {
    ok: (p) =>
      p.claimCheckThreshold === undefined ||
      (Number.isInteger(p.claimCheckThreshold) &&
        p.claimCheckThreshold >= 1 &&
        p.claimCheckThreshold <= MAX_CLAIM_CHECK_THRESHOLD),
    message: (p) =>
      `claimCheckThreshold must be an integer between 1 and ${MAX_CLAIM_CHECK_THRESHOLD} bytes inclusive (given ${p.claimCheckThreshold})`,
  },
  {
    ok: (p) => p.removalPolicy !== RemovalPolicy.SNAPSHOT,
    message: () =>
      'removalPolicy must be RETAIN, RETAIN_ON_UPDATE_OR_DELETE or DESTROY: the table, bucket and log groups have no snapshot (given snapshot)',
  },
  {
    ok: (p) => !(p.autoDeleteObjects && (p.removalPolicy ?? RemovalPolicy.RETAIN) !== RemovalPolicy.DESTROY),
    message: (p) =>
      `autoDeleteObjects needs removalPolicy RemovalPolicy.DESTROY (given ${p.removalPolicy ?? 'the default, retain'})`,
  },
  {
    ok: (p) => !(p.eventBus && p.createEventBus),
    message: () =>
      'eventBus and createEventBus cannot both be given (given an eventBus and createEventBus: true)',
  },
  ...(['ingressSenders', 'replySenders', 'controlSenders'] as const).map(
    (key): Rule => ({
      ok: (p) => (p[key] ?? []).every((sender) => typeof sender !== 'string' || validSender(sender)),
      message: (p) =>
        `${key} must be 12-digit account ids, IAM role or user ARNs (wildcards allowed), source ARNs (an SNS topic, an EventBridge rule) or roles; a deploy-time string cannot be classified, pass the role itself (given ${JSON.stringify(
          (p[key] ?? []).filter((sender) => typeof sender === 'string' && !validSender(sender)),
        )})`,
    }),
  ),
  {
    ok: (p) => (p.recipientAccounts ?? []).every((a) => typeof a === 'string' && ACCOUNT_ID.test(a)),
    message: (p) =>
      `recipientAccounts must be 12-digit AWS account ids, known at synth (given ${JSON.stringify(
        (p.recipientAccounts ?? []).filter((a) => typeof a !== 'string' || !ACCOUNT_ID.test(a)),
      )})`,
  },
  {
    ok: (p) => (p.extraTargetQueueArns ?? []).every((arn) => Token.isUnresolved(arn) || QUEUE_ARN.test(arn)),
    message: (p) =>
      `extraTargetQueueArns must be SQS queue ARNs such as arn:aws:sqs:us-east-1:123456789012:bank-a (given ${JSON.stringify(
        (p.extraTargetQueueArns ?? []).filter((arn) => !Token.isUnresolved(arn) && !QUEUE_ARN.test(arn)),
      )})`,
  },
];

const NUMERIC_TOKENS: readonly (keyof FaninProps)[] = [
  'replyPartitions',
  'maxReceiveCount',
  'functionMemorySize',
  'replyDepthAlarmThreshold',
  'claimCheckThreshold',
];

function validateProps(props: FaninProps): void {
  // Numbers that shape resources, schedules or the bundle's environment must be known at synth.
  const numbers: [string, unknown][] = [
    ...NUMERIC_TOKENS.map((key): [string, unknown] => [key, props[key]]),
    ...Object.entries(props.partitioning ?? {}).map(([key, value]): [string, unknown] => [
      `partitioning.${key}`,
      value,
    ]),
  ];
  for (const [key, value] of numbers) {
    if (typeof value === 'number' && Token.isUnresolved(value)) {
      throw new Error(
        `${key} must be known at synth, not a deploy-time token (given ${Token.asString(value)})`,
      );
    }
  }
  for (const rule of RULES) {
    if (!rule.ok(props)) throw new Error(rule.message(props));
  }
}

function validSender(sender: string): boolean {
  return (
    !Token.isUnresolved(sender) &&
    (ACCOUNT_ID.test(sender) || IAM_PRINCIPAL_ARN.test(sender) || SOURCE_ARN.test(sender))
  );
}

/**
 * The payload bucket's expiration in days: the prop, or the shortest allowed. Aggregate state may
 * reference a stored body for `topology.stateLifeSeconds`; a day more covers the lifecycle's own
 * granularity (S3 rounds an expiration to the next midnight UTC) and clocks.
 */
function payloadExpirationDays(topology: Topology, props: FaninProps): number {
  const minimum = Math.ceil(topology.stateLifeSeconds / DAY_SECONDS) + 1;
  if (props.payloadExpiration === undefined) return minimum;
  const days = whole(props.payloadExpiration, 'days');
  if (days < minimum) {
    throw new Error(
      `payloadExpiration must be at least ${minimum} days: aggregate state may reference a stored body for ${topology.stateLifeSeconds} s (unknown-reply timeout, open time, completion lease and tombstone retention of the longest-lived definition), plus a day (given ${props.payloadExpiration.toHumanString()})`,
    );
  }
  return days;
}

/**
 * Request-time recipients go only to queues of fanin's own account and region, or of
 * `recipientAccounts` (in fanin's region): an extra target ARN elsewhere would grant what the
 * runtime refuses. Checked where the stack's account and region are known at synth.
 */
function validateTargetsAgainstAccounts(stack: Stack, props: FaninProps): void {
  const allowed = new Set(props.recipientAccounts ?? []);
  const ownAccount = Token.isUnresolved(stack.account) ? undefined : stack.account;
  const ownRegion = Token.isUnresolved(stack.region) ? undefined : stack.region;
  for (const arn of props.extraTargetQueueArns ?? []) {
    if (Token.isUnresolved(arn)) continue;
    const [, , , region, account] = arn.split(':');
    const accountOk = allowed.has(account ?? '') || ownAccount === undefined || account === ownAccount;
    const regionOk = ownRegion === undefined || region === ownRegion;
    if (!accountOk || !regionOk) {
      throw new Error(
        `extraTargetQueueArns must name queues of fanin's own account${ownAccount ? ` (${ownAccount})` : ''} or of recipientAccounts, in fanin's region${ownRegion ? ` (${ownRegion})` : ''} (given ${arn})`,
      );
    }
    if (ownAccount === undefined && !allowed.has(account ?? '')) {
      Annotations.of(stack).addInfo(
        `fanin: extraTargetQueueArns entry ${arn} is usable for request-time recipients only if ${account} is the deployment account or is listed in recipientAccounts`,
      );
    }
  }
}

/**
 * An extra target pattern must not match one of fanin's own queues (in fanin's account): the
 * fan-out may send to its timer and output queues, so a request naming one as a recipient would
 * forge a timer or an output with fanin's own role. (The inbound queues are denied in the role.)
 */
function validateTargetsAgainstOwnQueues(topology: Topology, props: FaninProps): void {
  const own = [...Object.values(topology.queues), ...topology.replyPartitions].flatMap((q) => [
    q.name,
    q.dlqName,
  ]);
  const foreign = new Set(props.recipientAccounts ?? []);
  for (const arn of props.extraTargetQueueArns ?? []) {
    if (Token.isUnresolved(arn)) continue;
    const [, , , , account, name = ''] = arn.split(':');
    if (foreign.has(account ?? '')) continue;
    const pattern = new RegExp(
      `^${name
        .replace(/[.+^${}()|[\]\\]/g, '\\$&')
        .replace(/\*/g, '.*')
        .replace(/\?/g, '.')}$`,
    );
    const hit = own.filter((queue) => pattern.test(queue));
    if (hit.length > 0) {
      throw new Error(
        `extraTargetQueueArns must not match fanin's own queues (${hit.join(', ')}): a request naming one as a recipient would forge a message with the fan-out's role (given ${arn})`,
      );
    }
  }
}

function validateDefinitionsAgainstProps(definitions: readonly Definition[], props: FaninProps): void {
  const needBus = definitions.filter((d) => d.outputs.eventBridge).map((d) => d.name);
  if (needBus.length > 0 && props.createEventBus === false && !props.eventBus) {
    throw new Error(
      `definitions ${JSON.stringify(needBus)} emit to EventBridge, so an output bus is needed: pass eventBus or leave createEventBus unset (given createEventBus: false)`,
    );
  }
  for (const definition of definitions) {
    const fanOut = definition.fanOut;
    if (!fanOut || fanOut.type === 'none') continue;
    const names = fanOut.type === 'splitter' ? [fanOut.target] : (fanOut.recipients ?? []);
    for (const name of names) {
      if (!QUEUE_NAME.test(name) && !QUEUE_URL.test(name)) {
        throw new Error(
          `definition "${definition.name}": a fan-out target must be an SQS queue name or URL (given "${name}")`,
        );
      }
    }
  }
}

/**
 * Lets every handler use the customer managed key of the queues, the table, the bucket and the log
 * groups: the data-key and encrypt/decrypt calls SQS, DynamoDB and S3 make on its behalf (the
 * queues' own grants add theirs too). With a key of this stack, CloudWatch Logs may use it for the
 * log groups (an imported key's policy is its owner's).
 */
function grantKeyUse(key: kms.IKey, functions: readonly FaninFunction[]): void {
  for (const fn of functions) {
    key.grant(fn, 'kms:Decrypt', 'kms:DescribeKey', 'kms:Encrypt', 'kms:GenerateDataKey');
    for (const action of ['kms:GenerateDataKey*', 'kms:ReEncrypt*']) {
      Validations.of(fn.role!).acknowledge({
        id: `AwsSolutions-IAM5[Action::${action}]`,
        reason:
          "CDK's send grant on a queue encrypted with the customer managed key (encryptionKey) adds this action family, on that one key only.",
      });
    }
  }
  const region = Stack.of(key).region;
  key.addToResourcePolicy(
    new iam.PolicyStatement({
      sid: 'FaninLogGroups',
      principals: [new iam.ServicePrincipal(`logs.${region}.amazonaws.com`)],
      actions: ['kms:Decrypt', 'kms:Encrypt', 'kms:GenerateDataKey*', 'kms:ReEncrypt*', 'kms:Describe*'],
      resources: ['*'],
      conditions: {
        ArnLike: {
          'kms:EncryptionContext:aws:logs:arn': Stack.of(key).formatArn({
            service: 'logs',
            resource: 'log-group',
            resourceName: '*',
            arnFormat: ArnFormat.COLON_RESOURCE_NAME,
          }),
        },
      },
    }),
    /* allowNoOp */ true,
  );
}

/**
 * Lambda active tracing adds `xray:PutTraceSegments` and `xray:PutTelemetryRecords` on `*` to
 * each role: X-Ray has no resource-level permissions for them, so the wildcard is the only form.
 */
function acknowledgeTracing(functions: readonly FaninFunction[]): void {
  for (const fn of functions) {
    Validations.of(fn.role!).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason:
        'Lambda active tracing (the tracing prop): xray:PutTraceSegments and xray:PutTelemetryRecords support no resource-level permissions, so their resource is *.',
    });
  }
}

/** A resolved CloudFormation value as cdk-nag names it in a finding: `<Id>`, `<Id.Attr>`, joins concatenated. */
function nagResource(value: unknown): string {
  if (typeof value === 'string') return value;
  const v = value as Record<string, unknown>;
  if (v && 'Ref' in v) return `<${String(v.Ref)}>`;
  if (v && 'Fn::GetAtt' in v) return `<${(v['Fn::GetAtt'] as string[]).join('.')}>`;
  if (v && 'Fn::Join' in v) {
    const [separator, parts] = v['Fn::Join'] as [string, unknown[]];
    return parts.map(nagResource).join(separator);
  }
  return JSON.stringify(value);
}
