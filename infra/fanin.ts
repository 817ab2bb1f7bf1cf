import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Annotations, Aws, Duration, RemovalPolicy, Stack, Token, Validations } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as iam from 'aws-cdk-lib/aws-iam';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as s3 from 'aws-cdk-lib/aws-s3';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { Definition, DefinitionInput } from '../shared/engine/definition.ts';
import {
  type ConsumerSpec,
  describeTopology,
  OUTPUT_ROLES,
  type PartitioningOptions,
  QueueRole,
  type Topology,
} from '../shared/topology/topology.ts';
import { FaninFunction, HandlerName } from './fanin-function.ts';
import { FaninQueue } from './fanin-queue.ts';
import { environmentSizeBound, handlerEnvironment, LAMBDA_ENV_LIMIT_BYTES } from './handler-environment.ts';

/**
 * The partition key of the reply destination's partition-state items in the state table:
 * `PD#<destination>` (shared/adapters/dynamo-partition-registry.ts) for the destination `replies`
 * (REPLY_DESTINATION in shared/app.ts). The distributor's table access is limited to these items;
 * test/unit/infra/iam.test.ts drives the registry and checks it uses no other key.
 */
export const PARTITION_STATE_KEY = 'PD#replies';

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
   * handlers' 4 KB environment (their URLs are in it): about 40 with the default prefix; checked at synth.
   * @default 2
   */
  readonly replyPartitions?: number;
  /**
   * Reply partitions (and the backlog) as FIFO queues (no batching window: Lambda has none for FIFO
   * sources). @default false
   */
  readonly fifoReplies?: boolean;
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
  /** Retention of the handlers' log groups. @default logs.RetentionDays.ONE_MONTH */
  readonly logRetention?: logs.RetentionDays;
  /** How long a claim-check object stays in the payload bucket (whole days). @default Duration.days(14) */
  readonly payloadExpiration?: Duration;
  /** How long a dead-letter queue keeps a message (60 s to 14 days). @default Duration.days(14) */
  readonly dlqRetention?: Duration;
  /**
   * Alarm when a reply partition holds at least this many visible messages for 5 minutes.
   * @default 1000
   */
  readonly replyDepthAlarmThreshold?: number;
  /** Actions of every alarm (e.g. an SNS topic action). @default - no actions */
  readonly alarmActions?: readonly cloudwatch.IAlarmAction[];
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
   * Directory holding `functions/<handler>.ts` and `package-lock.json`.
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
  public readonly table: dynamodb.Table;
  /** The claim-check bucket for payloads too large for SQS or DynamoDB. */
  public readonly bucket: s3.Bucket;
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
  /** Every alarm: one per dead-letter queue, one per reply partition's depth. */
  public readonly alarms: readonly cloudwatch.Alarm[];

  public constructor(scope: Construct, id: string, props: FaninProps) {
    super(scope, id);
    validateProps(props);
    const functionTimeout = props.functionTimeout ?? Duration.seconds(30);
    this.topology = describeTopology({
      definitions: props.definitions,
      ...(props.prefix !== undefined ? { prefix: props.prefix } : {}),
      ...(props.replyPartitions !== undefined ? { replyPartitions: props.replyPartitions } : {}),
      ...(props.fifoReplies !== undefined ? { fifoReplies: props.fifoReplies } : {}),
      ...(props.maxReceiveCount !== undefined ? { maxReceiveCount: props.maxReceiveCount } : {}),
      ...(props.partitioning !== undefined ? { partitioning: props.partitioning } : {}),
      functionTimeoutSeconds: functionTimeout.toSeconds({ integral: false }),
    });
    const topology = this.topology;
    const definitions = [...topology.definitions.values()];
    validateDefinitionsAgainstProps(definitions, props);
    const wantsBus = definitions.some((d) => d.outputs.eventBridge);
    const createBus = !props.eventBus && (props.createEventBus ?? wantsBus);
    const busName = props.eventBus?.eventBusName ?? (createBus ? `${topology.prefix}-outputs` : undefined);
    checkEnvironmentSize(topology, busName, props.claimCheckThreshold);
    const removalPolicy = props.removalPolicy ?? RemovalPolicy.RETAIN;
    const alarmActions = props.alarmActions ?? [];
    const dlqRetention = props.dlqRetention ?? Duration.days(14);

    // ---- Queues -------------------------------------------------------------------------------
    const queueScope = new Construct(this, 'Queues');
    const queues = {} as Record<QueueRole, FaninQueue>;
    for (const role of Object.values(QueueRole)) {
      queues[role] = new FaninQueue(queueScope, queueId(role), {
        spec: topology.queues[role],
        dlqRetention,
        alarmActions,
      });
    }
    this.queues = queues;
    const depthThreshold = props.replyDepthAlarmThreshold ?? 1000;
    this.replyPartitions = topology.replyPartitions.map((spec, index) => {
      const partition = new FaninQueue(queueScope, `Reply${index}`, {
        spec,
        dlqRetention,
        alarmActions,
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
    const spec = topology.table;
    this.table = new dynamodb.Table(this, 'Table', {
      tableName: spec.name,
      partitionKey: attribute(spec.partitionKey),
      sortKey: attribute(spec.sortKey),
      billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
      timeToLiveAttribute: spec.ttlAttribute,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      // AWS managed key (aws/dynamodb): key use is visible in CloudTrail, no key to pay for or rotate.
      encryption: dynamodb.TableEncryption.AWS_MANAGED,
      // DynamoDB's endpoints also answer plain HTTP; the queues and the bucket refuse it in their
      // policies (CDK's enforceSSL), and the table does the same in its resource policy. `*` is
      // the table itself and its indexes: a table policy cannot name its own ARN before it exists.
      resourcePolicy: new iam.PolicyDocument({
        statements: [
          new iam.PolicyStatement({
            sid: 'DenyInsecureTransport',
            effect: iam.Effect.DENY,
            principals: [new iam.AnyPrincipal()],
            actions: ['dynamodb:*'],
            resources: ['*'],
            conditions: { Bool: { 'aws:SecureTransport': 'false' } },
          }),
        ],
      }),
      deletionProtection: props.deletionProtection ?? false,
      removalPolicy,
    });
    for (const index of spec.indexes) {
      this.table.addGlobalSecondaryIndex({
        indexName: index.name,
        partitionKey: attribute(index.partitionKey),
        sortKey: attribute(index.sortKey),
        projectionType:
          index.projection === 'ALL' ? dynamodb.ProjectionType.ALL : dynamodb.ProjectionType.KEYS_ONLY,
      });
    }

    this.bucket = new s3.Bucket(this, 'Payloads', {
      encryption: s3.BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      minimumTLSVersion: 1.2,
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
      lifecycleRules: [
        {
          id: 'expire-claim-checks',
          expiration: props.payloadExpiration ?? Duration.days(14),
          abortIncompleteMultipartUploadAfter: Duration.days(1),
        },
      ],
      removalPolicy,
      autoDeleteObjects: props.autoDeleteObjects ?? false,
      ...(props.serverAccessLogsBucket
        ? { serverAccessLogsBucket: props.serverAccessLogsBucket, serverAccessLogsPrefix: 'fanin-payloads/' }
        : {}),
    });
    if (!props.serverAccessLogsBucket) {
      Validations.of(this.bucket).acknowledge({
        id: 'AwsSolutions-S1',
        reason:
          'Claim-check objects live for days and are read once by fanin; server access logs would cost more than the data. Pass serverAccessLogsBucket (or use CloudTrail data events) to audit access.',
      });
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
    });
    const common = {
      projectRoot: props.projectRoot ?? DEFAULT_PROJECT_ROOT,
      timeout: functionTimeout,
      memorySize: props.functionMemorySize ?? 512,
      logRetention: props.logRetention ?? logs.RetentionDays.ONE_MONTH,
      logRemovalPolicy: removalPolicy,
      environment,
      definitionsJson: JSON.stringify(definitions),
    };
    this.functions = {
      fanOut: new FaninFunction(this, 'FanOut', {
        ...common,
        handler: HandlerName.FAN_OUT,
        description: 'fanin: opens an aggregate, then sends its sub-requests',
      }),
      reply: new FaninFunction(this, 'Reply', {
        ...common,
        handler: HandlerName.REPLY,
        description: 'fanin: records replies once, completes aggregates',
      }),
      timer: new FaninFunction(this, 'Timer', {
        ...common,
        handler: HandlerName.TIMER,
        description: 'fanin: deadlines of aggregates and held replies',
      }),
      sweeper: new FaninFunction(this, 'Sweeper', {
        ...common,
        handler: HandlerName.SWEEPER,
        description: 'fanin: safety net for overdue aggregates and lost timers',
        // The next sweep is the retry.
        retryAttempts: 0,
      }),
      control: new FaninFunction(this, 'Control', {
        ...common,
        handler: HandlerName.CONTROL,
        description: 'fanin: control commands and external events',
      }),
      distributor: new FaninFunction(this, 'Distributor', {
        ...common,
        handler: HandlerName.DISTRIBUTOR,
        description: 'fanin: feeds the reply partitions from the backlog between watermarks',
        // The next cycle is the retry; a retried cycle would only race the next one.
        retryAttempts: 0,
      }),
    };
    const { fanOut, reply, timer, sweeper, control, distributor } = this.functions;

    // ---- Event sources and schedules ----------------------------------------------------------
    fanOut.addEventSource(eventSource(queues[QueueRole.INGRESS].queue, topology.consumers.fanOut));
    for (const partition of this.replyPartitions) {
      reply.addEventSource(eventSource(partition.queue, topology.consumers.reply));
    }
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
      const state = this.table.grants.actions(fn, ...access.table);
      if (access.leadingKeys) {
        // Fine-grained access: every item the call reads or writes has one of these partition keys.
        state.principalStatement?.addCondition('ForAllValues:StringEquals', {
          'dynamodb:LeadingKeys': [...access.leadingKeys],
        });
      }
      if (access.payloads) this.bucket.grants.actionsOnObjectKeys(fn, '*', ...PAYLOAD_ACTIONS);
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

    this.alarms = [...Object.values(queues), ...this.replyPartitions].flatMap((q) =>
      q.node.children.filter((c): c is cloudwatch.Alarm => c instanceof cloudwatch.Alarm),
    );
  }

  /**
   * The wildcards that cdk-nag reports and that are intended: a table grant covers the table's
   * indexes (`<table>/index/*`), an object grant covers the bucket's objects (`<bucket>/*`), and an
   * extra target ARN with `*` or `?` is the user's own choice.
   */
  private acknowledgeGrantWildcards(extraTargetQueueArns: readonly string[]): void {
    const stack = Stack.of(this);
    const tableId = stack.resolve((this.table.node.defaultChild as dynamodb.CfnTable).logicalId) as string;
    const bucketId = stack.resolve((this.bucket.node.defaultChild as s3.CfnBucket).logicalId) as string;
    for (const [name, fn] of Object.entries(this.functions) as [keyof FaninFunctions, FaninFunction][]) {
      Validations.of(fn.role!).acknowledge({
        id: `AwsSolutions-IAM5[Resource::<${tableId}.Arn>/index/*]`,
        reason:
          "CDK's table grant always covers the table's indexes; only the sweeper (`due`) and the control handler (`open`) query one, and an index allows nothing but Query and Scan, of which no role has Scan.",
      });
      if (HANDLER_ACCESS[name].payloads) {
        Validations.of(fn.role!).acknowledge({
          id: `AwsSolutions-IAM5[Resource::<${bucketId}.Arn>/*]`,
          reason:
            'Claim-check object keys are generated per message (and pointers from producers name any key of the bucket); s3:GetObject and s3:PutObject only, on objects of the payload bucket.',
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

/**
 * What each handler does outside its own log group and the queue it consumes, from the use cases
 * it runs (docs/security.md lists the call sites):
 * - `table`: DynamoDB actions of the state store and the partition registry. Writes inside a
 *   TransactWriteItems are authorized as PutItem / UpdateItem / DeleteItem; BatchWriteItem deletes
 *   replies at close and held replies; Query reads replies, held replies, partition state and the
 *   `due` / `open` indexes. No handler scans, batch-gets or describes the table.
 * - `payloads`: reads and writes claim-check objects (large requests, replies and outputs).
 * - `outputs`: sends to the output queues and, with a bus, puts events on it.
 * - `armsTimers`: sends delayed messages to the timer queue.
 * - `leadingKeys`: the only partition keys its table calls may touch (`dynamodb:LeadingKeys`).
 */
interface HandlerAccess {
  readonly table: readonly string[];
  readonly leadingKeys?: readonly string[];
  readonly payloads: boolean;
  readonly outputs: boolean;
  readonly armsTimers: boolean;
}

/** Aggregate state: read, create, count, complete and close (the fan-out, reply, timer and sweeper paths). */
const STATE_ACTIONS = [
  'dynamodb:BatchWriteItem',
  'dynamodb:DeleteItem',
  'dynamodb:GetItem',
  'dynamodb:PutItem',
  'dynamodb:Query',
  'dynamodb:UpdateItem',
] as const;

/** s3:GetObject resolves a pointer or a stored payload; s3:PutObject stores one. */
const PAYLOAD_ACTIONS = ['s3:GetObject', 's3:PutObject'] as const;

const HANDLER_ACCESS: Readonly<Record<keyof FaninFunctions, HandlerAccess>> = {
  fanOut: { table: STATE_ACTIONS, payloads: true, outputs: true, armsTimers: true },
  reply: { table: STATE_ACTIONS, payloads: true, outputs: true, armsTimers: true },
  timer: { table: STATE_ACTIONS, payloads: true, outputs: true, armsTimers: true },
  // The sweeper acts on due items without re-arming their timers (it is the timers' safety net).
  sweeper: { table: STATE_ACTIONS, payloads: true, outputs: true, armsTimers: false },
  // Control lists, sets parameters (PutItem) and completes; it never consolidates held replies,
  // the only transaction with a Delete.
  control: {
    table: STATE_ACTIONS.filter((a) => a !== 'dynamodb:DeleteItem'),
    payloads: true,
    outputs: true,
    armsTimers: false,
  },
  // Partition state only: Query (load) and UpdateItem (enabled flag, cycle bookkeeping).
  distributor: {
    table: ['dynamodb:Query', 'dynamodb:UpdateItem'],
    leadingKeys: [PARTITION_STATE_KEY],
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

function attribute(key: { readonly name: string; readonly type: 'S' | 'N' }): dynamodb.Attribute {
  return {
    name: key.name,
    type: key.type === 'S' ? dynamodb.AttributeType.STRING : dynamodb.AttributeType.NUMBER,
  };
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
    ok: (p) => {
      if (p.dlqRetention === undefined) return true;
      const s = whole(p.dlqRetention, 'seconds');
      return Number.isInteger(s) && s >= 60 && s <= 14 * 24 * 3600;
    },
    message: (p) =>
      `dlqRetention must be a whole number of seconds between 60 s and 14 days (given ${p.dlqRetention?.toHumanString()})`,
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
 * Lambda refuses a function whose environment exceeds 4 KB; say so at synth, not at deploy. The
 * bound counts every variable the handlers get, with the longest value each deploy-time name can
 * take (see handler-environment.ts).
 */
function checkEnvironmentSize(
  topology: Topology,
  eventBusName: string | undefined,
  claimCheckThresholdBytes: number | undefined,
): void {
  const size = environmentSizeBound(topology, { eventBusName, claimCheckThresholdBytes });
  if (size > LAMBDA_ENV_LIMIT_BYTES) {
    throw new Error(
      `replyPartitions ${topology.replyPartitions.length} with prefix "${topology.prefix}" makes the handlers' environment up to ${size} bytes, over Lambda's ${LAMBDA_ENV_LIMIT_BYTES}-byte limit: use fewer partitions or a shorter prefix`,
    );
  }
}
