import { Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import type { FaninProps } from '../../../infra/fanin.ts';
import { FaninQueue } from '../../../infra/fanin-queue.ts';
import { logicalId, type Resource, type Synth, synthFanin, testApp } from './synth.ts';

/**
 * One queue of the topology and its dead-letter queue (docs/security.md, "Encryption at rest and
 * TLS"; docs/observability.md, the `<dlq>-not-empty` alarms): SSE-SQS, a policy refusing requests
 * without TLS, 14 days' retention on both, a redrive after maxReceiveCount receives, and an alarm
 * as soon as the dead-letter queue holds a message. Alone in a stack, then as the construct builds them.
 */

const SPEC = {
  name: 'shop-orders',
  dlqName: 'shop-orders-dlq',
  fifo: false,
  visibilityTimeoutSeconds: 180,
  maxReceiveCount: 5,
};

function queueAlone(props: Partial<ConstructorParameters<typeof FaninQueue>[2]> = {}) {
  const stack = new Stack(testApp(), 'Test');
  const queue = new FaninQueue(stack, 'Orders', { spec: SPEC, ...props });
  return { stack, queue, template: Template.fromStack(stack) };
}

describe('a FaninQueue alone', () => {
  it('GIVEN a spec WHEN synthesized THEN the queue and its DLQ are SSE-SQS, kept 14 days, and the queue redrives to the DLQ after maxReceiveCount receives', () => {
    const { stack, queue, template } = queueAlone();
    template.resourceCountIs('AWS::SQS::Queue', 2);
    template.hasResourceProperties('AWS::SQS::Queue', {
      QueueName: 'shop-orders',
      VisibilityTimeout: 180,
      MessageRetentionPeriod: 1_209_600,
      SqsManagedSseEnabled: true,
      RedrivePolicy: {
        deadLetterTargetArn: { 'Fn::GetAtt': [logicalId(stack, queue.deadLetterQueue), 'Arn'] },
        maxReceiveCount: 5,
      },
    });
    template.hasResourceProperties('AWS::SQS::Queue', {
      QueueName: 'shop-orders-dlq',
      MessageRetentionPeriod: 1_209_600,
      SqsManagedSseEnabled: true,
    });
  });

  it('GIVEN a spec WHEN synthesized THEN both queue policies deny sqs:* when aws:SecureTransport is false', () => {
    const { template } = queueAlone();
    const policies = Object.values(template.findResources('AWS::SQS::QueuePolicy')) as Resource[];
    expect(policies).toHaveLength(2);
    for (const policy of policies) {
      expect(JSON.stringify(policy.Properties.PolicyDocument)).toContain('"aws:SecureTransport":"false"');
    }
    template.hasResourceProperties('AWS::SQS::QueuePolicy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Effect: 'Deny',
            Action: 'sqs:*',
            Condition: { Bool: { 'aws:SecureTransport': 'false' } },
          }),
        ]),
      },
    });
  });

  it('GIVEN the defaults WHEN synthesized THEN an alarm <dlq>-not-empty fires above 0 visible messages for a minute; dlqAlarm false makes none', () => {
    const { queue, template } = queueAlone();
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      AlarmName: 'shop-orders-dlq-not-empty',
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Period: 60,
      Threshold: 0,
      ComparisonOperator: 'GreaterThanThreshold',
      EvaluationPeriods: 1,
    });
    expect(queue.dlqAlarm).toBeDefined();
    const silent = queueAlone({ dlqAlarm: false });
    silent.template.resourceCountIs('AWS::CloudWatch::Alarm', 0);
    expect(silent.queue.dlqAlarm).toBeUndefined();
  });

  it('GIVEN a FIFO spec WHEN synthesized THEN the alarm name drops .fifo and both queues are FIFO', () => {
    const { template } = queueAlone({
      spec: { ...SPEC, name: 'shop-orders.fifo', dlqName: 'shop-orders-dlq.fifo', fifo: true },
    });
    const queues = Object.values(template.findResources('AWS::SQS::Queue')) as Resource[];
    expect(queues.map((q) => q.Properties.FifoQueue)).toEqual([true, true]);
    template.hasResourceProperties('AWS::CloudWatch::Alarm', { AlarmName: 'shop-orders-dlq-not-empty' });
  });
});

describe('every queue keeps messages the topology retention', () => {
  it.each<[string, Partial<FaninProps>]>([
    ['the defaults', {}],
    ['FIFO replies and four partitions', { fifoReplies: true, replyPartitions: 4 }],
  ])(
    'GIVEN %s WHEN synthesized THEN every AWS::SQS::Queue (working, output, backlog, timer, reply partitions, DLQs) has MessageRetentionPeriod = retentionSeconds',
    (_, props) => {
      // Mutant killed: "retentionPeriod only on the DLQ" (329f56a): working queues kept
      // CloudFormation's default of 4 days.
      const { fanin, template } = synthFanin(props);
      const topology = fanin.topology;
      const queues = template.findResources('AWS::SQS::Queue') as Record<string, Resource>;
      const specs = [...Object.values(topology.queues), ...topology.replyPartitions];
      expect(Object.keys(queues)).toHaveLength(2 * specs.length);
      const retention = new Map(
        specs.flatMap((s) => [
          [s.name, s.retentionSeconds],
          [s.dlqName, s.retentionSeconds],
        ]),
      );
      for (const queue of Object.values(queues)) {
        const name = String(queue.Properties.QueueName);
        expect(retention.get(name), name).toBe(1_209_600);
        expect(queue.Properties.MessageRetentionPeriod, name).toBe(retention.get(name));
      }
    },
  );
});

describe('every dead-letter queue raises an alarm', () => {
  let synth: Synth;
  beforeAll(() => {
    synth = synthFanin({ prefix: 'shop' });
  });

  it('GIVEN any DLQ WHEN synthesized THEN an alarm fires as soon as it holds a visible message', () => {
    const { stack, fanin, template } = synth;
    for (const queue of [...Object.values(fanin.queues), ...fanin.replyPartitions]) {
      template.hasResourceProperties('AWS::CloudWatch::Alarm', {
        MetricName: 'ApproximateNumberOfMessagesVisible',
        Dimensions: [
          {
            Name: 'QueueName',
            Value: { 'Fn::GetAtt': [logicalId(stack, queue.deadLetterQueue), 'QueueName'] },
          },
        ],
        Threshold: 0,
        ComparisonOperator: 'GreaterThanThreshold',
      });
    }
  });
});

describe('FIFO queues in high-throughput mode', () => {
  it('GIVEN the defaults WHEN synthesized THEN every FIFO queue deduplicates and throttles per message group', () => {
    // GIVEN / WHEN
    const { template } = synthFanin({ fifoReplies: true });
    // THEN (mutant killed: FIFO queues left in their default mode, about 300 messages per second)
    const fifos = Object.values(template.findResources('AWS::SQS::Queue')).filter(
      (queue) => queue.Properties?.FifoQueue === true,
    );
    expect(fifos.length).toBeGreaterThan(0);
    for (const queue of fifos) {
      expect(queue.Properties).toMatchObject({
        DeduplicationScope: 'messageGroup',
        FifoThroughputLimit: 'perMessageGroupId',
      });
    }
  });
});
