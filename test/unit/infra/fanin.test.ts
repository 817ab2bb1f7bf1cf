import { Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import * as events from 'aws-cdk-lib/aws-events';
import { beforeAll, describe, expect, it } from 'vitest';
import { Fanin } from '../../../infra/fanin.ts';
import { FaninStack } from '../../../infra/fanin-stack.ts';
import { TOPOLOGY_CHOICES, TOPOLOGY_DEFAULTS } from '../../../shared/topology/options.ts';
import { describeTopology, OUTPUT_ROLES, QueueRole } from '../../../shared/topology/topology.ts';
import { construct, DEFINITIONS, logicalId, render, type Synth, synthFanin, testApp } from './synth.ts';

type Resource = { Properties: Record<string, unknown> };

/** The properties of the five handler functions (not CDK's own custom-resource functions). */
function handlersOf({ stack, fanin, template }: Synth): Record<string, unknown>[] {
  const functions = template.findResources('AWS::Lambda::Function');
  return Object.values(fanin.functions).map((fn) => {
    const resource = functions[logicalId(stack, fn)] as Resource | undefined;
    if (!resource) throw new Error(`no resource for ${fn.node.path}`);
    return resource.Properties;
  });
}

function queuesOf(template: Template): Record<string, Resource> {
  return template.findResources('AWS::SQS::Queue') as Record<string, Resource>;
}

describe('Fanin with its defaults', () => {
  let synth: Synth;
  let template: Template;

  beforeAll(() => {
    // GIVEN a stack WHEN a Fanin with the test definitions and default props is synthesized
    synth = synthFanin();
    template = synth.template;
  });

  describe('queues', () => {
    it('creates every queue of the topology and one DLQ each', () => {
      const topology = synth.fanin.topology;
      const specs = [...Object.values(topology.queues), ...topology.replyPartitions];
      const names = Object.values(queuesOf(template)).map((q) => q.Properties.QueueName);
      expect(names.sort()).toEqual(specs.flatMap((s) => [s.name, s.dlqName]).sort());
    });

    it('gives every queue that is not a DLQ a redrive policy with maxReceiveCount 5', () => {
      const queues = queuesOf(template);
      const dlqIds = new Set<string>();
      for (const queue of Object.values(queues)) {
        const redrive = queue.Properties.RedrivePolicy as
          | { deadLetterTargetArn: unknown; maxReceiveCount: number }
          | undefined;
        if (!redrive) continue;
        expect(redrive.maxReceiveCount).toBe(5);
        dlqIds.add(render(redrive.deadLetterTargetArn).replace(/^<(.*)\.Arn>$/, '$1'));
      }
      for (const [id, queue] of Object.entries(queues)) {
        if (!queue.Properties.RedrivePolicy) {
          expect(dlqIds.has(id), `${String(queue.Properties.QueueName)} has no DLQ and is none`).toBe(true);
          expect(String(queue.Properties.QueueName)).toMatch(/-dlq(\.fifo)?$/);
        }
      }
      expect(dlqIds.size).toBe(Object.keys(queues).length / 2);
    });

    it('encrypts every queue at rest (SSE-SQS) and refuses non-TLS access in its policy', () => {
      const queues = queuesOf(template);
      for (const queue of Object.values(queues)) expect(queue.Properties.SqsManagedSseEnabled).toBe(true);
      const policies = template.findResources('AWS::SQS::QueuePolicy', {
        Properties: {
          PolicyDocument: {
            Statement: Match.arrayWith([
              Match.objectLike({
                Effect: 'Deny',
                Action: 'sqs:*',
                Condition: { Bool: { 'aws:SecureTransport': 'false' } },
              }),
            ]),
          },
        },
      });
      const guarded = new Set(
        Object.values(policies).flatMap((p) =>
          ((p as Resource).Properties.Queues as unknown[]).map((q) => render(q).slice(1, -1)),
        ),
      );
      expect([...guarded].sort()).toEqual(Object.keys(queues).sort());
    });

    it('makes the output queues and their DLQs FIFO without content-based deduplication', () => {
      for (const role of OUTPUT_ROLES) {
        const spec = synth.fanin.topology.queues[role];
        for (const name of [spec.name, spec.dlqName]) {
          expect(name).toMatch(/\.fifo$/);
          template.hasResourceProperties('AWS::SQS::Queue', {
            QueueName: name,
            FifoQueue: true,
            ContentBasedDeduplication: false,
          });
        }
      }
    });

    it('creates the backlog as a standard queue with a DLQ, a redrive and an alarm on the DLQ', () => {
      // The backlog is the reply destination's overflow, read only by the distributor.
      const { stack, fanin } = synth;
      const backlog = fanin.queues[QueueRole.BACKLOG];
      expect(fanin.topology.queues[QueueRole.BACKLOG].name).toBe('fanin-backlog');
      template.hasResourceProperties('AWS::SQS::Queue', {
        QueueName: 'fanin-backlog',
        FifoQueue: Match.absent(),
        SqsManagedSseEnabled: true,
        RedrivePolicy: {
          deadLetterTargetArn: { 'Fn::GetAtt': [logicalId(stack, backlog.deadLetterQueue), 'Arn'] },
          maxReceiveCount: 5,
        },
      });
      template.hasResourceProperties('AWS::SQS::Queue', { QueueName: 'fanin-backlog-dlq' });
      template.hasResourceProperties('AWS::CloudWatch::Alarm', {
        AlarmName: 'fanin-backlog-dlq-not-empty',
        Dimensions: [
          {
            Name: 'QueueName',
            Value: { 'Fn::GetAtt': [logicalId(stack, backlog.deadLetterQueue), 'QueueName'] },
          },
        ],
        Threshold: 0,
      });
      expect(fanin.alarms).toContain(backlog.dlqAlarm);
    });

    it('keeps messages 14 days in every queue, DLQs included (adversity.test.ts pins it per queue)', () => {
      for (const queue of Object.values(queuesOf(template))) {
        expect(queue.Properties.MessageRetentionPeriod).toBe(14 * 24 * 3600);
      }
    });

    it('sets the visibility timeout of each consumed queue to at least 6 x the function timeout', () => {
      const { topology } = synth.fanin;
      const consumed = [
        topology.queues[QueueRole.INGRESS],
        topology.queues[QueueRole.CONTROL],
        topology.queues[QueueRole.TIMER],
        ...topology.replyPartitions,
      ];
      for (const spec of consumed) {
        expect(spec.visibilityTimeoutSeconds).toBeGreaterThanOrEqual(6 * 30);
        template.hasResourceProperties('AWS::SQS::Queue', {
          QueueName: spec.name,
          VisibilityTimeout: spec.visibilityTimeoutSeconds,
        });
      }
      template.hasResourceProperties('AWS::Lambda::Function', { Timeout: 30 });
    });
  });

  describe('event sources', () => {
    it('gives every reply partition its own event source with ReportBatchItemFailures and the topology settings', () => {
      const { stack, fanin } = synth;
      const reply = fanin.topology.consumers.reply;
      for (const partition of fanin.replyPartitions) {
        template.resourcePropertiesCountIs(
          'AWS::Lambda::EventSourceMapping',
          {
            EventSourceArn: { 'Fn::GetAtt': [logicalId(stack, partition.queue), 'Arn'] },
            FunctionName: { Ref: logicalId(stack, fanin.functions.reply) },
            FunctionResponseTypes: ['ReportBatchItemFailures'],
            BatchSize: reply.batchSize,
            MaximumBatchingWindowInSeconds:
              reply.maxBatchingWindowSeconds > 0 ? reply.maxBatchingWindowSeconds : Match.absent(),
            ScalingConfig: { MaximumConcurrency: reply.maxConcurrency },
          },
          1,
        );
      }
    });

    it.each([
      ['fanOut', QueueRole.INGRESS, 'fanOut'],
      ['timer', QueueRole.TIMER, 'timer'],
      ['control', QueueRole.CONTROL, 'control'],
    ] as const)('wires the %s handler to the %s queue', (fn, role, consumer) => {
      const { stack, fanin } = synth;
      const spec = fanin.topology.consumers[consumer];
      template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
        EventSourceArn: { 'Fn::GetAtt': [logicalId(stack, fanin.queues[role].queue), 'Arn'] },
        FunctionName: { Ref: logicalId(stack, fanin.functions[fn]) },
        FunctionResponseTypes: ['ReportBatchItemFailures'],
        BatchSize: spec.batchSize,
        ScalingConfig: { MaximumConcurrency: spec.maxConcurrency },
      });
    });

    it('has one event source per consumed queue and none for the sweeper, the distributor or the backlog', () => {
      const { stack, fanin } = synth;
      template.resourceCountIs('AWS::Lambda::EventSourceMapping', 3 + fanin.replyPartitions.length);
      for (const fn of [fanin.functions.sweeper, fanin.functions.distributor]) {
        template.resourcePropertiesCountIs(
          'AWS::Lambda::EventSourceMapping',
          { FunctionName: { Ref: logicalId(stack, fn) } },
          0,
        );
      }
      template.resourcePropertiesCountIs(
        'AWS::Lambda::EventSourceMapping',
        {
          EventSourceArn: { 'Fn::GetAtt': [logicalId(stack, fanin.queues[QueueRole.BACKLOG].queue), 'Arn'] },
        },
        0,
      );
    });

    it('runs the distributor every partitioning.distributorIntervalSeconds, without retries', () => {
      const { stack, fanin } = synth;
      const distributor = fanin.functions.distributor;
      expect(fanin.topology.partitioning.distributorIntervalSeconds).toBe(60);
      template.hasResourceProperties('AWS::Events::Rule', {
        Description: 'fanin: feed the reply partitions from the backlog (fanin)',
        ScheduleExpression: 'rate(1 minute)',
        State: 'ENABLED',
        Targets: [
          Match.objectLike({
            Arn: { 'Fn::GetAtt': [logicalId(stack, distributor), 'Arn'] },
            RetryPolicy: { MaximumRetryAttempts: 0 },
          }),
        ],
      });
      template.hasResourceProperties('AWS::Lambda::EventInvokeConfig', {
        FunctionName: { Ref: logicalId(stack, distributor) },
        MaximumRetryAttempts: 0,
      });
      template.hasResourceProperties('AWS::Lambda::Permission', {
        Action: 'lambda:InvokeFunction',
        Principal: 'events.amazonaws.com',
        FunctionName: { 'Fn::GetAtt': [logicalId(stack, distributor), 'Arn'] },
        SourceArn: { 'Fn::GetAtt': [logicalId(stack, fanin.distributeSchedule), 'Arn'] },
      });
    });

    it('runs the sweeper on a schedule of topology.sweepIntervalSeconds, without retries', () => {
      const { stack, fanin } = synth;
      template.hasResourceProperties('AWS::Events::Rule', {
        ScheduleExpression: 'rate(1 minute)',
        State: 'ENABLED',
        Targets: [
          Match.objectLike({
            Arn: { 'Fn::GetAtt': [logicalId(stack, fanin.functions.sweeper), 'Arn'] },
            RetryPolicy: { MaximumRetryAttempts: 0 },
          }),
        ],
      });
      template.hasResourceProperties('AWS::Lambda::Permission', {
        Action: 'lambda:InvokeFunction',
        Principal: 'events.amazonaws.com',
        FunctionName: { 'Fn::GetAtt': [logicalId(stack, fanin.functions.sweeper), 'Arn'] },
      });
    });

    it('delivers the events of each definition with an externalEventPattern to the control queue', () => {
      const { stack, fanin } = synth;
      const withPattern = DEFINITIONS.filter((d) => d.externalEventPattern);
      expect(withPattern.length).toBeGreaterThan(0);
      template.resourcePropertiesCountIs(
        'AWS::Events::Rule',
        { EventPattern: Match.anyValue() },
        withPattern.length,
      );
      for (const definition of withPattern) {
        template.hasResourceProperties('AWS::Events::Rule', {
          // Only the events of fanin's own account (no controlSenders): see fanin-access.test.ts.
          EventPattern: { ...definition.externalEventPattern, account: [{ Ref: 'AWS::AccountId' }] },
          Targets: [
            Match.objectLike({
              Arn: { 'Fn::GetAtt': [logicalId(stack, fanin.queues[QueueRole.CONTROL].queue), 'Arn'] },
              DeadLetterConfig: {
                Arn: {
                  'Fn::GetAtt': [logicalId(stack, fanin.queues[QueueRole.CONTROL].deadLetterQueue), 'Arn'],
                },
              },
            }),
          ],
        });
      }
      // EventBridge may send to the control queue, and only from those rules.
      template.hasResourceProperties('AWS::SQS::QueuePolicy', {
        Queues: [{ Ref: logicalId(stack, fanin.queues[QueueRole.CONTROL].queue) }],
        PolicyDocument: {
          Statement: Match.arrayWith([
            Match.objectLike({
              Effect: 'Allow',
              Principal: { Service: 'events.amazonaws.com' },
              Action: ['sqs:GetQueueAttributes', 'sqs:GetQueueUrl', 'sqs:SendMessage'],
              Condition: { ArnEquals: { 'aws:SourceArn': Match.anyValue() } },
            }),
          ]),
        },
      });
    });
  });

  describe('state', () => {
    it('refuses every request to the table that does not use TLS, in its resource policy', () => {
      template.hasResourceProperties('AWS::DynamoDB::Table', {
        TableName: 'fanin-state',
        ResourcePolicy: {
          PolicyDocument: {
            Statement: [
              {
                Sid: 'DenyInsecureTransport',
                Effect: 'Deny',
                Principal: { AWS: '*' },
                Action: 'dynamodb:*',
                Resource: '*',
                Condition: { Bool: { 'aws:SecureTransport': 'false' } },
              },
            ],
          },
        },
      });
    });

    it('creates the on-demand table with its keys, TTL, PITR, encryption and its one index', () => {
      template.hasResourceProperties('AWS::DynamoDB::Table', {
        TableName: 'fanin-state',
        BillingMode: 'PAY_PER_REQUEST',
        KeySchema: [
          { AttributeName: 'pk', KeyType: 'HASH' },
          { AttributeName: 'sk', KeyType: 'RANGE' },
        ],
        TimeToLiveSpecification: { AttributeName: 'expiresAt', Enabled: true },
        PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
        // SSE on without a key of ours: the AWS managed key aws/dynamodb.
        SSESpecification: { SSEEnabled: true },
        DeletionProtectionEnabled: false,
        // One index: every open aggregate is due some day (its allowed life), so listing reads
        // `due` too, and an aggregate costs no second index's writes.
        GlobalSecondaryIndexes: [
          {
            IndexName: 'due',
            KeySchema: [
              { AttributeName: 'dueShard', KeyType: 'HASH' },
              { AttributeName: 'dueAt', KeyType: 'RANGE' },
            ],
            Projection: { ProjectionType: 'KEYS_ONLY' },
          },
        ],
        AttributeDefinitions: Match.arrayWith([{ AttributeName: 'dueAt', AttributeType: 'N' }]),
      });
    });

    it('retains the table and the bucket by default', () => {
      template.hasResource('AWS::DynamoDB::Table', {
        DeletionPolicy: 'Retain',
        UpdateReplacePolicy: 'Retain',
      });
      template.hasResource('AWS::S3::Bucket', { DeletionPolicy: 'Retain', UpdateReplacePolicy: 'Retain' });
    });

    it('creates an encrypted, private, TLS 1.2+ only claim-check bucket whose objects expire after the state life plus a day (46 days)', () => {
      const { stack, fanin } = synth;
      template.hasResourceProperties('AWS::S3::Bucket', {
        BucketEncryption: {
          ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }],
        },
        OwnershipControls: { Rules: [{ ObjectOwnership: 'BucketOwnerEnforced' }] },
        PublicAccessBlockConfiguration: {
          BlockPublicAcls: true,
          BlockPublicPolicy: true,
          IgnorePublicAcls: true,
          RestrictPublicBuckets: true,
        },
        LifecycleConfiguration: {
          Rules: [Match.objectLike({ ExpirationInDays: 46, Status: 'Enabled' })],
        },
      });
      template.hasResourceProperties('AWS::S3::BucketPolicy', {
        Bucket: { Ref: logicalId(stack, fanin.bucket) },
        PolicyDocument: {
          Statement: Match.arrayWith([
            Match.objectLike({
              Effect: 'Deny',
              Action: 's3:*',
              Condition: { Bool: { 'aws:SecureTransport': 'false' } },
            }),
            Match.objectLike({
              Effect: 'Deny',
              Action: 's3:*',
              Condition: { NumericLessThan: { 's3:TlsVersion': 1.2 } },
            }),
          ]),
        },
      });
      template.resourceCountIs('Custom::S3AutoDeleteObjects', 0);
    });
  });

  describe('handlers', () => {
    it('runs six arm64 functions on the newest Node.js with a log group each', () => {
      template.resourceCountIs('AWS::Lambda::Function', 6);
      template.allResourcesProperties('AWS::Lambda::Function', {
        Runtime: 'nodejs24.x',
        Architectures: ['arm64'],
        Handler: 'index.handler',
        MemorySize: 512,
        Timeout: 30,
        LoggingConfig: { LogGroup: Match.anyValue() },
      });
      template.resourceCountIs('AWS::Logs::LogGroup', 6);
      template.allResourcesProperties('AWS::Logs::LogGroup', { RetentionInDays: 30 });
    });

    it('passes the runtime configuration as environment variables, definitions excluded', () => {
      const { stack, fanin } = synth;
      const functions = template.findResources('AWS::Lambda::Function');
      for (const fn of Object.values(functions)) {
        const variables = (fn as Resource).Properties.Environment as { Variables: Record<string, unknown> };
        expect(Object.keys(variables.Variables).sort()).toEqual(
          [
            'FANIN_BUCKET',
            'FANIN_LEASE_SECONDS',
            'FANIN_PARTITIONING',
            'FANIN_QUEUES',
            'FANIN_REPLY_QUEUES',
            'FANIN_TABLE',
            'FANIN_TRUSTED_MOVERS',
            'NODE_OPTIONS',
            'POWERTOOLS_SERVICE_NAME',
          ].sort(),
        );
        // the metrics' service dimension is the prefix: two instances' alarms never mix
        expect(variables.Variables.POWERTOOLS_SERVICE_NAME).toBe(fanin.topology.prefix);
        expect(variables.Variables.FANIN_TABLE).toEqual({ Ref: logicalId(stack, fanin.table) });
        expect(variables.Variables.FANIN_BUCKET).toEqual({ Ref: logicalId(stack, fanin.bucket) });
        expect(variables.Variables.FANIN_LEASE_SECONDS).toBe(String(fanin.topology.completionLeaseSeconds));
        expect(JSON.parse(String(variables.Variables.FANIN_PARTITIONING))).toEqual(
          fanin.topology.partitioning,
        );
        const queues = render(variables.Variables.FANIN_QUEUES);
        for (const role of Object.values(QueueRole)) {
          expect(queues).toContain(`"${role}":"<${logicalId(stack, fanin.queues[role].queue)}>"`);
        }
        expect(render(variables.Variables.FANIN_REPLY_QUEUES)).toBe(
          `[${fanin.replyPartitions.map((p) => `"<${logicalId(stack, p.queue)}>"`).join(',')}]`,
        );
      }
    });

    it('enables no payload logging: no event-logging switch, no debug log level, no log target', () => {
      // The handlers log ids and reasons only; nothing in the stack may turn on logging of events.
      for (const fn of Object.values(template.findResources('AWS::Lambda::Function'))) {
        const props = (fn as Resource).Properties as {
          Environment: { Variables: Record<string, unknown> };
          LoggingConfig: Record<string, unknown>;
        };
        const variables = props.Environment.Variables;
        // Powertools' Logger logs every incoming event when this is true.
        expect(variables.POWERTOOLS_LOGGER_LOG_EVENT).toBeUndefined();
        for (const [name, value] of Object.entries(variables)) {
          if (/LOG_LEVEL$/.test(name)) expect(String(value), name).not.toMatch(/^(debug|trace)$/i);
        }
        expect(Object.keys(props.LoggingConfig)).toEqual(['LogGroup']);
      }
      for (const rule of Object.values(template.findResources('AWS::Events::Rule'))) {
        for (const target of ((rule as Resource).Properties.Targets ?? []) as { Arn: unknown }[]) {
          expect(render(target.Arn)).not.toMatch(/:logs:|LogGroup/);
        }
      }
      template.resourceCountIs('AWS::Logs::ResourcePolicy', 0);
      template.resourceCountIs('AWS::Logs::SubscriptionFilter', 0);
    });
  });

  describe('alarms', () => {
    it('alarms on every DLQ as soon as it holds a message', () => {
      const { stack, fanin } = synth;
      const owners = [...Object.values(fanin.queues), ...fanin.replyPartitions];
      for (const owner of owners) {
        template.hasResourceProperties('AWS::CloudWatch::Alarm', {
          MetricName: 'ApproximateNumberOfMessagesVisible',
          Namespace: 'AWS/SQS',
          Dimensions: [
            {
              Name: 'QueueName',
              Value: { 'Fn::GetAtt': [logicalId(stack, owner.deadLetterQueue), 'QueueName'] },
            },
          ],
          ComparisonOperator: 'GreaterThanThreshold',
          Threshold: 0,
          EvaluationPeriods: 1,
        });
      }
    });

    it('alarms on each reply partition held at the depth threshold for 5 minutes', () => {
      const { stack, fanin } = synth;
      for (const partition of fanin.replyPartitions) {
        template.hasResourceProperties('AWS::CloudWatch::Alarm', {
          MetricName: 'ApproximateNumberOfMessagesVisible',
          Dimensions: [
            { Name: 'QueueName', Value: { 'Fn::GetAtt': [logicalId(stack, partition.queue), 'QueueName'] } },
          ],
          ComparisonOperator: 'GreaterThanOrEqualToThreshold',
          Threshold: 1000,
          EvaluationPeriods: 5,
        });
      }
      // one per DLQ, one per partition's depth, one per use-case alarm (adversity.test.ts), and
      // observability's (observability.test.ts): errors and throttles of 6 handlers, 2 table
      // throttles, the oldest message of 4 + N working queues, failing sweeps and cycles, and
      // (observability.test.ts) the 6 handlers' durations and the completion latency
      const n = fanin.replyPartitions.length;
      const count = Object.keys(fanin.queues).length + 2 * n + 3 + (12 + 2 + (4 + n) + 2) + (6 + 1);
      template.resourceCountIs('AWS::CloudWatch::Alarm', count);
      expect(fanin.alarms).toHaveLength(count);
    });
  });

  it('creates no event bus when no definition emits to EventBridge', () => {
    template.resourceCountIs('AWS::Events::EventBus', 0);
  });
});

describe('Fanin with its props set', () => {
  let synth: Synth;

  beforeAll(() => {
    // GIVEN FIFO replies, four partitions and every tunable prop WHEN synthesized
    synth = synthFanin({
      prefix: 'shop',
      replyPartitions: 4,
      fifoReplies: true,
      maxReceiveCount: 3,
      functionTimeout: Duration.seconds(20),
      functionMemorySize: 1024,
      payloadExpiration: Duration.days(60),
      replyDepthAlarmThreshold: 50,
      deletionProtection: true,
      removalPolicy: RemovalPolicy.DESTROY,
      autoDeleteObjects: true,
      createEventBus: true,
      partitioning: {
        highThreshold: 5000,
        highWatermark: 200,
        lowWatermark: 50,
        stallSeconds: 120,
        distributorIntervalSeconds: 300,
      },
      claimCheckThreshold: 65_536,
    });
  });

  it('makes the backlog FIFO with the partitions, with a FIFO DLQ and no content-based deduplication', () => {
    const { template } = synth;
    for (const name of ['shop-backlog.fifo', 'shop-backlog-dlq.fifo']) {
      template.hasResourceProperties('AWS::SQS::Queue', {
        QueueName: name,
        FifoQueue: true,
        ContentBasedDeduplication: false,
      });
    }
    template.hasResourceProperties('AWS::SQS::Queue', {
      QueueName: 'shop-backlog.fifo',
      RedrivePolicy: { maxReceiveCount: 3, deadLetterTargetArn: Match.anyValue() },
    });
  });

  it('passes the partitioning and the claim-check threshold to every handler, and schedules the distributor by it', () => {
    const { stack, fanin, template } = synth;
    for (const fn of handlersOf(synth)) {
      const variables = (fn.Environment as { Variables: Record<string, unknown> }).Variables;
      expect(JSON.parse(String(variables.FANIN_PARTITIONING))).toEqual({
        highThreshold: 5000,
        highWatermark: 200,
        lowWatermark: 50,
        stallSeconds: 120,
        distributorIntervalSeconds: 300,
        // no partition drained on a schedule: the distributor may judge any of them stalled
        drained: [],
      });
      expect(variables.FANIN_CLAIM_CHECK_THRESHOLD).toBe('65536');
    }
    template.hasResourceProperties('AWS::Events::Rule', {
      ScheduleExpression: 'rate(5 minutes)',
      Targets: [
        Match.objectLike({ Arn: { 'Fn::GetAtt': [logicalId(stack, fanin.functions.distributor), 'Arn'] } }),
      ],
    });
    // The sweeper keeps its own minute.
    template.hasResourceProperties('AWS::Events::Rule', {
      ScheduleExpression: 'rate(1 minute)',
      Targets: [
        Match.objectLike({ Arn: { 'Fn::GetAtt': [logicalId(stack, fanin.functions.sweeper), 'Arn'] } }),
      ],
    });
  });

  it('makes the reply partitions FIFO, each with its own event source and no batching window', () => {
    const { stack, fanin, template } = synth;
    expect(fanin.replyPartitions).toHaveLength(4);
    for (const [index, partition] of fanin.replyPartitions.entries()) {
      template.hasResourceProperties('AWS::SQS::Queue', {
        QueueName: `shop-reply-${index}.fifo`,
        FifoQueue: true,
        VisibilityTimeout: 20 + 110, // the timeout and the lease (20 + 90 s)
        RedrivePolicy: { maxReceiveCount: 3, deadLetterTargetArn: Match.anyValue() },
      });
      const mappings = template.findResources('AWS::Lambda::EventSourceMapping', {
        Properties: { EventSourceArn: { 'Fn::GetAtt': [logicalId(stack, partition.queue), 'Arn'] } },
      });
      expect(Object.values(mappings)).toHaveLength(1);
      const props = (Object.values(mappings)[0] as Resource).Properties;
      expect(props.MaximumBatchingWindowInSeconds).toBeUndefined();
      expect(props.FunctionResponseTypes).toEqual(['ReportBatchItemFailures']);
    }
  });

  it('applies the Lambda, retention, alarm and deletion settings', () => {
    const { template } = synth;
    for (const fn of handlersOf(synth)) expect(fn).toMatchObject({ MemorySize: 1024, Timeout: 20 });
    template.hasResourceProperties('AWS::DynamoDB::Table', {
      TableName: 'shop-state',
      DeletionProtectionEnabled: true,
    });
    template.hasResource('AWS::DynamoDB::Table', { DeletionPolicy: 'Delete' });
    template.hasResourceProperties('AWS::S3::Bucket', {
      LifecycleConfiguration: { Rules: [Match.objectLike({ ExpirationInDays: 60 })] },
    });
    template.resourceCountIs('Custom::S3AutoDeleteObjects', 1);
    template.hasResourceProperties('AWS::SQS::Queue', {
      QueueName: 'shop-ingress-dlq',
      MessageRetentionPeriod: 14 * 24 * 3600,
    });
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      AlarmName: 'shop-reply-3-depth',
      Threshold: 50,
    });
  });

  it('creates the output bus and tells every handler its name', () => {
    const { stack, fanin, template } = synth;
    // No LogConfig: EventBridge bus logging could write event details (results) to a log group.
    template.hasResourceProperties('AWS::Events::EventBus', {
      Name: 'shop-outputs',
      LogConfig: Match.absent(),
    });
    for (const fn of handlersOf(synth)) {
      expect(fn).toMatchObject({
        Environment: { Variables: { FANIN_EVENT_BUS: { Ref: logicalId(stack, fanin.eventBus as never) } } },
      });
    }
  });
});

describe("Fanin's topology", () => {
  // GIVEN every topology option a value other than its default, over two constructs (FIFO
  // replies exclude windows, drains and batches above 10)
  const fifo = {
    prefix: 'shop',
    replyPartitions: 3,
    fifoReplies: true,
    maxReceiveCount: 3,
    replyConcurrency: [2, 3, 4],
    partitioning: { highThreshold: 5000, highWatermark: 200, lowWatermark: 50, stallSeconds: 120 },
  } as const;
  const batched = {
    replyBatchingWindowSeconds: [1, 0],
    replyDrainIntervalSeconds: [0, 60],
    replyBatchSize: [100, 500],
  } as const;

  it('is described from every topology option the props give, as the local configuration is', () => {
    const given = { ...fifo, ...batched, functionTimeoutSeconds: 20 } as Record<string, unknown>;
    const defaults = TOPOLOGY_DEFAULTS as Record<string, unknown>;
    expect(TOPOLOGY_CHOICES.filter((c) => given[c] === undefined || given[c] === defaults[c])).toEqual([]);
    // WHEN constructed THEN the topology is what describeTopology makes of the same options
    for (const options of [fifo, batched]) {
      const fanin = construct({ ...options, functionTimeout: Duration.seconds(20) })();
      const expected = describeTopology({ ...options, functionTimeoutSeconds: 20, definitions: DEFINITIONS });
      expect(fanin.topology).toEqual(expected);
      expect(fanin.topology).not.toEqual(describeTopology({ definitions: DEFINITIONS }));
    }
  });
});

describe('Fanin output bus choices', () => {
  it('creates a bus by default when a definition emits to EventBridge', () => {
    // GIVEN a definition with outputs.eventBridge WHEN synthesized THEN a bus exists
    const { template } = synthFanin({
      definitions: [{ name: 'events', completion: { strategy: 'all' }, outputs: { eventBridge: true } }],
    });
    template.resourceCountIs('AWS::Events::EventBus', 1);
  });

  it('uses a bus it is given and creates none', () => {
    const app = testApp();
    const stack = new Stack(app, 'Test');
    const bus = events.EventBus.fromEventBusName(stack, 'Default', 'default');
    const fanin = new Fanin(stack, 'Fanin', {
      definitions: [{ name: 'events', completion: { strategy: 'all' }, outputs: { eventBridge: true } }],
      eventBus: bus,
    });
    const template = Template.fromStack(stack);
    template.resourceCountIs('AWS::Events::EventBus', 0);
    expect(fanin.eventBus).toBe(bus);
    template.allResourcesProperties('AWS::Lambda::Function', {
      Environment: { Variables: Match.objectLike({ FANIN_EVENT_BUS: 'default' }) },
    });
  });
});

describe('FaninStack (the example app)', () => {
  it('exports the payload bucket name, which CloudFormation chooses, for the CLI', () => {
    // GIVEN the example stack WHEN synthesized THEN its outputs name the bucket
    const stack = new FaninStack(testApp(), 'Example');
    Template.fromStack(stack).hasOutput('PayloadBucket', {
      Value: { Ref: logicalId(stack, stack.fanin.bucket) },
    });
  });
});

describe('Fanin warnings', () => {
  it('warns when recipients come from the request but no extra target ARNs are allowed', () => {
    // GIVEN a recipient list without recipients WHEN synthesized THEN a warning names the definition
    const { stack } = synthFanin({
      definitions: [
        { name: 'open-list', completion: { strategy: 'all' }, fanOut: { type: 'recipient-list' } },
      ],
    });
    Annotations.fromStack(stack).hasWarning('/Test/Fanin', Match.stringLikeRegexp('open-list'));
  });
});
