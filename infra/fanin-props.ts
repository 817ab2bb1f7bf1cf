import type { Duration, RemovalPolicy } from 'aws-cdk-lib';
import type * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type * as events from 'aws-cdk-lib/aws-events';
import type * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as logs from 'aws-cdk-lib/aws-logs';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import type { LogLevel } from '../shared/observability/metric-names.ts';
import type { TopologyOptions } from '../shared/topology/options.ts';
import type { FaninFunction } from './fanin-function.ts';
import type { FunctionRole } from './validate-options.ts';

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

/**
 * Properties of the {@link Fanin} construct: the topology options (prefix, reply partitions and
 * their consumers, partitioning, receives before dead-lettering, the definitions), declared once
 * in {@link TopologyOptions} for the construct and the local configuration alike, with the
 * handlers' timeout as a `Duration` (`functionTimeout`), and what only a deployment has.
 */
export interface FaninProps extends Omit<TopologyOptions, 'functionTimeoutSeconds'> {
  /**
   * Size in bytes (body and attributes, as SQS counts) above which a message takes the claim-check
   * path: the payload goes to the payload bucket and the message carries a pointer. 1 to 262,144.
   * @default - 262,144, the SQS Extended Client's threshold (the handlers' own default; the variable is not set)
   */
  readonly claimCheckThreshold?: number;
  /**
   * Timeout of every handler invocation: the topology's {@link TopologyOptions.functionTimeoutSeconds}
   * as a `Duration`. The completion lease is this + 90 s, and the visibility timeout of each queue
   * a handler consumes is max(6 x this, this + the lease) + the batching window
   * (docs/configuration.md, docs/data-plane.md). Whole seconds, 1 s to 15 min.
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
   * SQS event sources (fan-out 5, reply: the sum of the partitions' `replyConcurrency`, 5 each by
   * default; timer 2, control 2; sweeper and distributor 1), checked at synth: less would throttle Lambda's pollers and push messages to
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
   * The handlers' log level (`POWERTOOLS_LOG_LEVEL`, Powertools Logger's levels): `TRACE`, `DEBUG`,
   * `INFO`, `WARN`, `ERROR`, `CRITICAL` or `SILENT`. The use cases' alarms read lines logged at
   * error level: above `ERROR` they stop seeing them, so `CRITICAL` and `SILENT` are refused.
   * @default 'INFO' (Powertools' default; the variable is not set)
   */
  readonly logLevel?: LogLevel;
  /**
   * Alarm when a handler's p99 duration reaches this percentage of its timeout (`functionTimeout`)
   * in 2 of 3 five-minute periods: invocations close to being stopped by Lambda. 1 to 100.
   * @default 80
   */
  readonly durationAlarmPercent?: number;
  /**
   * Alarm when the p99 of `CompletionLatency` (an aggregate's open to its seal, every outcome)
   * reaches this, in 3 consecutive five-minute periods. Whole seconds, at least 1.
   * @default - the longest an aggregate may stay open (a definition's timeout or the longest a request may ask for; without a timeout, its `maxOpenSeconds`), plus the completion lease and 2 sweep intervals
   */
  readonly completionLatencyAlarm?: Duration;
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
   * and index (`pk`/`sk` strings; GSI `due` on `dueShard` (S) / `dueAt` (N), keys only), TTL on
   * `expiresAt`, and should deny
   * requests without TLS in its resource policy; a `dynamodb.Table` of the same app is checked at
   * synth, an imported one cannot be. Other fanin instances must not share it.
   * @default - a table `<prefix>-state` (docs/configuration.md, "What the construct creates")
   */
  readonly table?: dynamodb.ITable;
  /**
   * An existing claim-check bucket instead of the one fanin creates. fanin adds its `Deny` of
   * writes under `state/`, `requests/` and `outputs/` by other principals to the bucket's policy
   * when the bucket is of this app (an imported bucket's policy is its owner's: add it there); give
   * it a lifecycle rule expiring objects after at least `Fanin.payloadExpirationDays` days (the
   * `payloadExpiration` prop, never less than the state life), block public access
   * and enforce TLS.
   * @default - a bucket named by CloudFormation (docs/configuration.md, "What the construct creates")
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
