import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Annotations, Aws, Duration, RemovalPolicy, Stack, Token, Validations } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as s3 from 'aws-cdk-lib/aws-s3';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { ConfigEnv } from '../shared/config.ts';
import type { Definition, DefinitionInput } from '../shared/engine/definition.ts';
import {
  type ConsumerSpec,
  describeTopology,
  OUTPUT_ROLES,
  QueueRole,
  type Topology,
} from '../shared/topology/topology.ts';
import { FaninFunction, HandlerName } from './fanin-function.ts';
import { FaninQueue } from './fanin-queue.ts';

/** Environment variable naming the claim-check bucket (the stack lets CloudFormation name it). */
export const BUCKET_ENV = 'FANIN_BUCKET';

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
  /** Reply partitions as FIFO queues (no batching window: Lambda has none for FIFO sources). @default false */
  readonly fifoReplies?: boolean;
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
}

const DEFAULT_PROJECT_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
/** Lambda's limit on the total size of a function's environment variables. */
const LAMBDA_ENV_LIMIT_BYTES = 4096;
/** The longest queue URL a region yields: `https://sqs.<region>.amazonaws.com/<account>/`. */
const URL_OVERHEAD = 'https://sqs.ap-southeast-5.amazonaws.com/123456789012/'.length;
const QUEUE_NAME = /^[A-Za-z0-9_-]{1,80}$|^[A-Za-z0-9_-]{1,75}\.fifo$/;
const QUEUE_URL = /^https:\/\/sqs\.([a-z0-9-]+)\.amazonaws\.com(?:\.cn)?\/(\d{12})\/([A-Za-z0-9_.-]{1,80})$/;
const QUEUE_ARN = /^arn:aws[a-z-]*:sqs:[a-z0-9-]+:\d{12}:[A-Za-z0-9_.*?-]{1,80}$/;

/**
 * fanin in one construct: the queues (ingress, control, timer, reply partitions, FIFO outputs, each
 * with a dead-letter queue and an alarm on it), the state table, the claim-check bucket, the five
 * handlers with their event sources and least-privilege grants, the sweeper's schedule, one rule
 * per definition's external-event pattern, and optionally an output event bus.
 *
 * Everything is built from `describeTopology(...)`, the same description the local runtime uses.
 *
 * @example
 * new Fanin(stack, 'Fanin', {
 *   definitions: [{ name: 'quotes', completion: { strategy: 'all' }, fanOut: { type: 'recipient-list', recipients: ['bank-a', 'bank-b'] } }],
 *   replyPartitions: 4,
 * });
 */
export class Fanin extends Construct {
  /** The resolved topology the resources were built from. */
  public readonly topology: Topology;
  /** The state table (aggregates, replies, tombstones, held replies, runtime parameters). */
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
      functionTimeoutSeconds: functionTimeout.toSeconds({ integral: false }),
    });
    const topology = this.topology;
    const definitions = [...topology.definitions.values()];
    validateDefinitionsAgainstProps(definitions, props);
    checkEnvironmentSize(topology);
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
    const wantsBus = definitions.some((d) => d.outputs.eventBridge);
    if (props.eventBus) {
      this.eventBus = props.eventBus;
    } else if (props.createEventBus ?? wantsBus) {
      this.eventBus = new events.EventBus(this, 'OutputBus', { eventBusName: `${topology.prefix}-outputs` });
    }

    // ---- Handlers -----------------------------------------------------------------------------
    const stack = Stack.of(this);
    const environment: Record<string, string> = {
      [ConfigEnv.TABLE]: this.table.tableName,
      [ConfigEnv.QUEUES]: stack.toJsonString(
        Object.fromEntries(Object.values(QueueRole).map((role) => [role, queues[role].queue.queueUrl])),
      ),
      [ConfigEnv.REPLY_QUEUES]: stack.toJsonString(this.replyPartitions.map((p) => p.queue.queueUrl)),
      [BUCKET_ENV]: this.bucket.bucketName,
      ...(this.eventBus ? { [ConfigEnv.EVENT_BUS]: this.eventBus.eventBusName } : {}),
    };
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
    };
    const { fanOut, reply, timer, sweeper, control } = this.functions;

    // ---- Event sources ------------------------------------------------------------------------
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

    // ---- Grants -------------------------------------------------------------------------------
    const all = [fanOut, reply, timer, sweeper, control];
    for (const fn of all) {
      this.table.grantReadWriteData(fn);
      for (const role of OUTPUT_ROLES) queues[role].queue.grantSendMessages(fn);
      if (this.eventBus) this.eventBus.grantPutEventsTo(fn);
    }
    for (const fn of [fanOut, reply, timer, sweeper]) queues[QueueRole.TIMER].queue.grantSendMessages(fn);
    // The reply path reads claim-check objects (the extended-client pointer format).
    iam.Grant.addToPrincipalOrResource({
      grantee: reply,
      actions: ['s3:GetObject'],
      resourceArns: [this.bucket.arnForObjects('*')],
      resource: this.bucket,
    });
    const targetArns = [...fanOutTargetArns(stack, definitions), ...(props.extraTargetQueueArns ?? [])];
    if (targetArns.length > 0) {
      iam.Grant.addToPrincipal({
        grantee: fanOut,
        actions: ['sqs:SendMessage', 'sqs:GetQueueUrl'],
        resourceArns: [...new Set(targetArns)],
      });
    }
    this.acknowledgeGrantWildcards(all, reply);
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
   * The wildcards that CDK grants produce and that cdk-nag reports: a table grant covers the
   * table's indexes (`<table>/index/*`), an object grant covers the bucket's objects (`<bucket>/*`).
   */
  private acknowledgeGrantWildcards(functions: readonly lambda.Function[], reader: lambda.Function): void {
    const stack = Stack.of(this);
    const tableId = stack.resolve((this.table.node.defaultChild as dynamodb.CfnTable).logicalId) as string;
    const bucketId = stack.resolve((this.bucket.node.defaultChild as s3.CfnBucket).logicalId) as string;
    for (const fn of functions) {
      Validations.of(fn.role!).acknowledge({
        id: `AwsSolutions-IAM5[Resource::<${tableId}.Arn>/index/*]`,
        reason:
          "CDK's table grant covers the table's indexes: the sweeper queries `due`, the control handler `open`; the other handlers share one grant for simplicity of the table's access pattern.",
      });
    }
    Validations.of(reader.role!).acknowledge({
      id: `AwsSolutions-IAM5[Resource::<${bucketId}.Arn>/*]`,
      reason:
        'Claim-check object keys are generated per message; the reply handler may read any object of the payload bucket (s3:GetObject only).',
    });
  }
}

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

/** Rules on the props alone; topology options (prefix, partitions, receives) are checked by describeTopology. */
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
];

function validateProps(props: FaninProps): void {
  for (const key of NUMERIC_TOKENS) {
    const value = props[key];
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

/** Lambda refuses a function whose environment exceeds 4 KB; say so at synth, not at deploy. */
function checkEnvironmentSize(topology: Topology): void {
  const urls = (names: readonly string[]): number =>
    names.reduce((n, name) => n + URL_OVERHEAD + name.length + 3, 2);
  const size =
    ConfigEnv.QUEUES.length +
    urls(Object.values(topology.queues).map((q) => q.name)) +
    Object.keys(topology.queues).join('').length * 2 +
    ConfigEnv.REPLY_QUEUES.length +
    urls(topology.replyPartitions.map((q) => q.name)) +
    ConfigEnv.TABLE.length +
    topology.tableName.length +
    BUCKET_ENV.length +
    63 +
    ConfigEnv.EVENT_BUS.length +
    256 +
    'NODE_OPTIONS--enable-source-maps'.length;
  if (size > LAMBDA_ENV_LIMIT_BYTES) {
    throw new Error(
      `replyPartitions ${topology.replyPartitions.length} with prefix "${topology.prefix}" makes the handlers' environment about ${size} bytes, over Lambda's ${LAMBDA_ENV_LIMIT_BYTES}-byte limit: use fewer partitions or a shorter prefix`,
    );
  }
}
