import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as kms from 'aws-cdk-lib/aws-kms';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { QueueSpec } from '../shared/topology/topology.ts';

/** Properties of a {@link FaninQueue}. */
export interface FaninQueueProps {
  /** Name, FIFO-ness, visibility timeout, redrive limit, DLQ name and retention, from the topology. */
  readonly spec: QueueSpec;
  /** SQS deduplicates FIFO messages by a hash of their body when the sender gives no id. @default false */
  readonly contentBasedDeduplication?: boolean;
  /** Alarm when the dead-letter queue holds any message. @default true */
  readonly dlqAlarm?: boolean;
  /** Actions of the dead-letter-queue alarm. @default - none */
  readonly alarmActions?: readonly cloudwatch.IAlarmAction[];
  /** @default RemovalPolicy.DESTROY (CDK's default for queues) */
  readonly removalPolicy?: RemovalPolicy;
  /** A customer managed KMS key for both queues (SSE-KMS). @default - SSE-SQS */
  readonly encryptionKey?: kms.IKey;
}

/** SQS's longest retention, the topology's default: 14 days. */
export const MAX_RETENTION_SECONDS = 14 * 24 * 3600;

/**
 * One queue of the topology and its dead-letter queue: SSE-SQS encryption at rest (SSE-KMS with a
 * customer managed key when one is given), a queue policy
 * that refuses requests without TLS, the topology's retention on both (14 days: a consumer's outage
 * loses nothing, and the tombstones are kept longer than a message can live here and in the DLQ),
 * a redrive after `maxReceiveCount` receives, and an alarm as soon as the dead-letter queue is not empty.
 */
export class FaninQueue extends Construct {
  /** The queue. */
  public readonly queue: sqs.Queue;
  /** Its dead-letter queue (FIFO when the queue is). */
  public readonly deadLetterQueue: sqs.Queue;
  /** `ApproximateNumberOfMessagesVisible > 0` on the dead-letter queue, unless disabled. */
  public readonly dlqAlarm?: cloudwatch.Alarm;

  public constructor(scope: Construct, id: string, props: FaninQueueProps) {
    super(scope, id);
    const { spec } = props;
    const removalPolicy = props.removalPolicy ?? RemovalPolicy.DESTROY;
    const retentionPeriod = Duration.seconds(spec.retentionSeconds ?? MAX_RETENTION_SECONDS);
    const encryption = props.encryptionKey
      ? { encryption: sqs.QueueEncryption.KMS, encryptionMasterKey: props.encryptionKey }
      : { encryption: sqs.QueueEncryption.SQS_MANAGED };
    // FIFO queues in high-throughput mode: ordering and deduplication per message group (fanin's
    // groups are aggregates), so an output queue is not capped near 300 messages per second.
    const fifo = spec.fifo
      ? {
          fifo: true,
          contentBasedDeduplication: props.contentBasedDeduplication ?? false,
          deduplicationScope: sqs.DeduplicationScope.MESSAGE_GROUP,
          fifoThroughputLimit: sqs.FifoThroughputLimit.PER_MESSAGE_GROUP_ID,
        }
      : {};
    this.deadLetterQueue = new sqs.Queue(this, 'Dlq', {
      queueName: spec.dlqName,
      ...fifo,
      ...encryption,
      enforceSSL: true,
      retentionPeriod,
      removalPolicy,
    });
    this.queue = new sqs.Queue(this, 'Queue', {
      queueName: spec.name,
      ...fifo,
      ...encryption,
      enforceSSL: true,
      visibilityTimeout: Duration.seconds(spec.visibilityTimeoutSeconds),
      retentionPeriod,
      deadLetterQueue: { queue: this.deadLetterQueue, maxReceiveCount: spec.maxReceiveCount },
      removalPolicy,
    });
    if (props.dlqAlarm ?? true) {
      const alarm = this.deadLetterQueue
        .metricApproximateNumberOfMessagesVisible({
          period: Duration.minutes(1),
          statistic: cloudwatch.Stats.MAXIMUM,
        })
        .createAlarm(this, 'DlqAlarm', {
          alarmName: `${spec.dlqName.replace(/\.fifo$/, '')}-not-empty`,
          alarmDescription: `Messages in ${spec.dlqName}: they failed ${spec.maxReceiveCount} times on ${spec.name}.`,
          threshold: 0,
          comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
          evaluationPeriods: 1,
          treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
        });
      for (const action of props.alarmActions ?? []) alarm.addAlarmAction(action);
      this.dlqAlarm = alarm;
    }
  }
}
