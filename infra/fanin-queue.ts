import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { QueueSpec } from '../shared/topology/topology.ts';

/** Properties of a {@link FaninQueue}. */
export interface FaninQueueProps {
  /** Name, FIFO-ness, visibility timeout, redrive limit and DLQ name, from the topology. */
  readonly spec: QueueSpec;
  /** How long the dead-letter queue keeps a message. */
  readonly dlqRetention: Duration;
  /** SQS deduplicates FIFO messages by a hash of their body when the sender gives no id. @default false */
  readonly contentBasedDeduplication?: boolean;
  /** Alarm when the dead-letter queue holds any message. @default true */
  readonly dlqAlarm?: boolean;
  /** Actions of the dead-letter-queue alarm. @default - none */
  readonly alarmActions?: readonly cloudwatch.IAlarmAction[];
  /** @default RemovalPolicy.DESTROY (CDK's default for queues) */
  readonly removalPolicy?: RemovalPolicy;
}

/**
 * One queue of the topology and its dead-letter queue: SSE-SQS encryption at rest, a queue policy
 * that refuses requests without TLS, a redrive after `maxReceiveCount` receives, and an alarm as soon
 * as the dead-letter queue is not empty.
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
    const fifo = spec.fifo
      ? { fifo: true, contentBasedDeduplication: props.contentBasedDeduplication ?? false }
      : {};
    this.deadLetterQueue = new sqs.Queue(this, 'Dlq', {
      queueName: spec.dlqName,
      ...fifo,
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: props.dlqRetention,
      removalPolicy,
    });
    this.queue = new sqs.Queue(this, 'Queue', {
      queueName: spec.name,
      ...fifo,
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      visibilityTimeout: Duration.seconds(spec.visibilityTimeoutSeconds),
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
