import { Annotations, type CfnOutput, Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import type * as iam from 'aws-cdk-lib/aws-iam';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import type { Definition } from '../shared/engine/definition.ts';
import type { Alarm } from '../shared/ports.ts';
import { topologyOptionsOf } from '../shared/topology/options.ts';
import {
  describeTopology,
  QueueRole,
  type Topology,
  type TopologyOptions,
} from '../shared/topology/topology.ts';
import {
  externalEventAccounts,
  fencedEventPattern,
  fenceExternalEventBus,
  grantHandlerAccess,
  grantKeyUse,
  PayloadPrefix,
  READER_PREFIXES,
  restrictSenders,
  restrictWriters,
} from './fanin-access.ts';
import { connectEventSources, createHandlers, DEFAULT_FUNCTION_TIMEOUT } from './fanin-handlers.ts';
import {
  acknowledgeGrantWildcards,
  acknowledgeTracing,
  warnOfTimeoutsWithinDrains,
  warnOfUngrantedRecipients,
} from './fanin-nag.ts';
import { createOutputs } from './fanin-outputs.ts';
import type { FaninFunctions, FaninProps } from './fanin-props.ts';
import { FaninQueue } from './fanin-queue.ts';
import { FaninObservability } from './observability.ts';
import { claimPrefix } from './physical-names.ts';
import { createPayloadBucket, createStateTable } from './state-resources.ts';
import { createUseCaseAlarms } from './use-case-alarms.ts';
import { validateAgainstTopology, validateProps } from './validate-props.ts';

// The construct's parts live beside it, as aws-cdk splits its own: the props (fanin-props.ts),
// their validation (validate-props.ts, validate-options.ts, environment-check.ts), the handlers
// and their event sources (fanin-handlers.ts), who may do what (fanin-access.ts), the cdk-nag
// acknowledgements (fanin-nag.ts) and the alarms (use-case-alarms.ts, observability.ts). What
// they export for users is exported here, as before the split.
export {
  AGGREGATE_KEYS,
  PARAMETER_KEYS,
  PARTITION_STATE_KEY,
  PayloadPrefix,
} from './fanin-access.ts';
export type { FaninFunctions, FaninProps, FaninSender } from './fanin-props.ts';
export { ALARM_NAMESPACE } from './use-case-alarms.ts';

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
  /**
   * The rules that drain reply partitions on a schedule (`replyDrainIntervalSeconds`), in
   * partition order of the drained ones; empty when every partition has an event source.
   */
  public readonly replyDrainSchedules: readonly events.Rule[];
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
  /**
   * The stack outputs (infra/fanin-outputs.ts), by name: `Prefix`, `<Role>QueueUrl` for every
   * queue, `ReplyQueue<i>Url`, `ReplyPartitions`, `StateTableName`, `PayloadBucketName` and
   * `OutputBusName` when there is a bus. Their keys in the stack start with this construct's path.
   */
  public readonly outputs: Readonly<Record<string, CfnOutput>>;

  public constructor(scope: Construct, id: string, props: FaninProps) {
    super(scope, id);
    // ---- Props, topology, validation (infra/validate-props.ts) ----------------------------------
    validateProps(props);
    this.topology = describeTopology(topologyOptions(props));
    const definitions = [...this.topology.definitions.values()];
    const bus = outputBus(this.topology, props);
    this.payloadExpirationDays = validateAgainstTopology(Stack.of(this), this.topology, props, bus.name);
    // Names are the prefix's: no other instance of this app may hold it (infra/physical-names.ts).
    claimPrefix(this, this.topology.prefix);

    // ---- Queues ---------------------------------------------------------------------------------
    const { queues, replyPartitions } = this.createQueues(props);
    this.queues = queues;
    this.replyPartitions = replyPartitions;
    // ---- State ----------------------------------------------------------------------------------
    const { table, bucket } = this.createState(props);
    this.table = table;
    this.bucket = bucket;
    // ---- Output bus -----------------------------------------------------------------------------
    const eventBus = this.createOutputBus(props, bus.create);
    if (eventBus) this.eventBus = eventBus;
    // ---- Handlers (infra/fanin-handlers.ts) -----------------------------------------------------
    this.functions = createHandlers(this, props, definitions);
    // ---- Event sources and schedules (infra/fanin-handlers.ts) ----------------------------------
    const { sweepSchedule, distributeSchedule, replyDrainSchedules } = connectEventSources(
      this,
      this.functions,
    );
    this.sweepSchedule = sweepSchedule;
    this.distributeSchedule = distributeSchedule;
    this.replyDrainSchedules = replyDrainSchedules;
    // ---- Grants (infra/fanin-access.ts) ---------------------------------------------------------
    grantHandlerAccess(this, definitions, props.extraTargetQueueArns ?? []);
    // ---- Who may send, who may write to the bucket (infra/fanin-access.ts) ----------------------
    restrictWriters(this, props);
    // ---- Alarms the use cases raise (infra/use-case-alarms.ts) ----------------------------------
    this.useCaseAlarms = createUseCaseAlarms(
      this,
      this.topology.prefix,
      this.functions,
      props.alarmActions ?? [],
    );
    // ---- cdk-nag acknowledgements, recipients no grant covers (infra/fanin-nag.ts) --------------
    acknowledgeGrantWildcards(this, props.extraTargetQueueArns ?? []);
    warnOfUngrantedRecipients(this, definitions, props.extraTargetQueueArns ?? []);
    warnOfTimeoutsWithinDrains(
      this,
      definitions,
      this.topology.replyConsumers.map((c) => c.drainIntervalSeconds ?? 0),
    );
    // ---- External events ------------------------------------------------------------------------
    this.externalEventRules = this.createExternalEventRules(props, definitions);
    // ---- Customer managed key, tracing ----------------------------------------------------------
    if (props.encryptionKey) grantKeyUse(props.encryptionKey, Object.values(this.functions));
    if (props.tracing) acknowledgeTracing(Object.values(this.functions));
    // ---- Dashboard and alarms (infra/observability.ts) ------------------------------------------
    const { observability, queueAlarms } = this.createObservability(props);
    this.observability = observability;
    this.alarms = [...queueAlarms, ...Object.values(this.useCaseAlarms), ...observability.alarms];
    // ---- Stack outputs: what producers, responders, consumers and the CLI find (fanin-outputs.ts) --
    this.outputs = createOutputs(this);
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

  /** The queues by role and the reply partitions, each with its dead-letter queue and alarms. */
  private createQueues(props: FaninProps): {
    queues: Record<QueueRole, FaninQueue>;
    replyPartitions: FaninQueue[];
  } {
    const topology = this.topology;
    const key = props.encryptionKey;
    const alarmActions = props.alarmActions ?? [];
    const queueScope = new Construct(this, 'Queues');
    const queues = {} as Record<QueueRole, FaninQueue>;
    for (const role of Object.values(QueueRole)) {
      queues[role] = new FaninQueue(queueScope, queueId(role), {
        spec: topology.queues[role],
        alarmActions,
        ...(key ? { encryptionKey: key } : {}),
      });
    }
    const depthThreshold = props.replyDepthAlarmThreshold ?? 1000;
    const replyPartitions = topology.replyPartitions.map((spec, index) => {
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
    return { queues, replyPartitions };
  }

  /** The table and the bucket fanin creates (infra/state-resources.ts), or the user's own. */
  private createState(props: FaninProps): { table: dynamodb.ITable; bucket: s3.IBucket } {
    const key = props.encryptionKey;
    const removalPolicy = props.removalPolicy ?? RemovalPolicy.RETAIN;
    const table =
      props.table ??
      createStateTable(this, this.topology, {
        removalPolicy,
        deletionProtection: props.deletionProtection ?? false,
        ...(key ? { encryptionKey: key } : {}),
      });
    const bucket =
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
        `the payload bucket is imported: fanin cannot add its lifecycle rule (objects must expire after at least ${this.payloadExpirationDays} days) nor its policy denying writes under state/, requests/ and outputs/ to other principals; add both to the bucket (docs/configuration.md)`,
      );
    }
    return { table, bucket };
  }

  /** The user's output bus, or the bus `<prefix>-outputs` when one is to be created. */
  private createOutputBus(props: FaninProps, create: boolean): events.IEventBus | undefined {
    if (props.eventBus) return props.eventBus;
    if (create)
      return new events.EventBus(this, 'OutputBus', { eventBusName: `${this.topology.prefix}-outputs` });
    return undefined;
  }

  /**
   * One rule per definition's `externalEventPattern`, delivering to the control queue, matching
   * only events of the accounts `controlSenders` allows (fanin's own without it), with a bus
   * policy fencing other principals on a bus of this app; then the control queue's
   * `controlSenders` restriction, which always lets these rules through.
   */
  private createExternalEventRules(
    props: FaninProps,
    definitions: readonly Definition[],
  ): Map<string, events.Rule> {
    const { topology, queues } = this;
    const rules = new Map<string, events.Rule>();
    const external = definitions.filter((d) => d.externalEventPattern);
    if (external.length === 0) return rules;
    // An event is control input: the rules take only events put by the accounts allowed to send
    // control commands, and a bus of this app refuses the listed sources to other principals.
    const accounts = externalEventAccounts(Stack.of(this), props.controlSenders);
    if (props.controlSenders && props.externalEventBus) {
      fenceExternalEventBus(props.externalEventBus, props.controlSenders, external);
    }
    for (const definition of external) {
      const rule = new events.Rule(this, `ExternalEvent-${definition.name}`, {
        description: `${topology.prefix}: external events of definition ${definition.name} (fanin)`,
        ...(props.externalEventBus ? { eventBus: props.externalEventBus } : {}),
        // The definition's pattern is EventBridge's own JSON; CDK passes unknown keys through.
        eventPattern: fencedEventPattern(definition, accounts) as events.EventPattern,
      });
      // The raw event: the control handler recognises an EventBridge envelope and completes the
      // aggregate named in `detail.aggregateId`, when that aggregate's definition matches it.
      rule.addTarget(
        new targets.SqsQueue(queues[QueueRole.CONTROL].queue, {
          deadLetterQueue: queues[QueueRole.CONTROL].deadLetterQueue,
        }),
      );
      rules.set(definition.name, rule);
    }
    if (props.controlSenders) {
      // The control function's own continuations (a complete or purge of a whole definition
      // going on from its cursor) always pass, as the rules' events do.
      restrictSenders(
        queues[QueueRole.CONTROL].queue,
        props.controlSenders,
        [this.functions.control.role!.roleArn],
        [...rules.values()].map((rule) => rule.ruleArn),
      );
    }
    return rules;
  }

  /** The dashboard and the alarms on the handlers, the table, the queues' ages and the cycles. */
  private createObservability(props: FaninProps): {
    observability: FaninObservability;
    queueAlarms: cloudwatch.Alarm[];
  } {
    const { topology, queues } = this;
    const queueAlarms = [...Object.values(queues), ...this.replyPartitions].flatMap((q) =>
      q.node.children.filter((c): c is cloudwatch.Alarm => c instanceof cloudwatch.Alarm),
    );
    const working = (role: QueueRole, delayed = false) => ({
      name: topology.queues[role].name,
      queue: queues[role].queue,
      ...(delayed ? { delayed } : {}),
    });
    const observability = new FaninObservability(this, 'Observability', {
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
      alarmActions: props.alarmActions ?? [],
      dashboard: props.dashboard ?? true,
      existingAlarms: [...Object.values(this.useCaseAlarms), ...queueAlarms],
      functionTimeout: props.functionTimeout ?? DEFAULT_FUNCTION_TIMEOUT,
      durationAlarmPercent: props.durationAlarmPercent ?? DEFAULT_DURATION_ALARM_PERCENT,
      completionLatencyAlarm: props.completionLatencyAlarm ?? defaultCompletionLatencyAlarm(topology),
    });
    return { observability, queueAlarms };
  }
}

/** A handler's duration alarm fires at this percentage of its timeout unless `durationAlarmPercent` says otherwise. */
export const DEFAULT_DURATION_ALARM_PERCENT = 80;

/**
 * The completion latency alarm's default threshold: the longest an aggregate of any definition may
 * stay open (its timeout or the longest timeout a request may ask for; without a timeout, its
 * `maxOpenSeconds`), plus a completion lease and two sweep intervals. A p99 above it means
 * aggregates close later than any deadline allows: the sweeper or the completions are failing.
 */
export function defaultCompletionLatencyAlarm(topology: Topology): Duration {
  const open = Math.max(
    0,
    ...[...topology.definitions.values()].map((d) =>
      // A deadline decides deadlineSettleSeconds after it (engine/completion/deadline.ts, decisionDueAt).
      Math.max(
        d.timeoutSeconds === undefined ? d.maxOpenSeconds : d.timeoutSeconds + (d.deadlineSettleSeconds ?? 0),
        (d.requestParameters?.timeoutSeconds?.max ?? 0) + (d.deadlineSettleSeconds ?? 0),
      ),
    ),
  );
  return Duration.seconds(open + topology.completionLeaseSeconds + 2 * topology.sweepIntervalSeconds);
}

/**
 * The topology options the props give, as the local configuration gives them (options.ts), with
 * the handlers' timeout in seconds (it sets the visibility timeouts and the completion lease).
 */
function topologyOptions(props: FaninProps): TopologyOptions {
  return {
    ...topologyOptionsOf(props),
    definitions: props.definitions,
    functionTimeoutSeconds: (props.functionTimeout ?? DEFAULT_FUNCTION_TIMEOUT).toSeconds({
      integral: false,
    }),
  };
}

/**
 * The output bus: the user's (`eventBus`), or one fanin creates (`createEventBus`, by default when a
 * definition emits to EventBridge); its name, for the handlers' environment.
 */
function outputBus(topology: Topology, props: FaninProps): { create: boolean; name?: string } {
  const wantsBus = [...topology.definitions.values()].some((d) => d.outputs.eventBridge);
  const create = !props.eventBus && (props.createEventBus ?? wantsBus);
  const name = props.eventBus?.eventBusName ?? (create ? `${topology.prefix}-outputs` : undefined);
  return name !== undefined ? { create, name } : { create };
}

function queueId(role: QueueRole): string {
  return role
    .split('-')
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join('');
}
