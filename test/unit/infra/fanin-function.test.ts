import { Stack } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { describe, expect, it } from 'vitest';
import { Fanin, type FaninProps } from '../../../infra/fanin.ts';
import { describeTopology } from '../../../shared/topology/topology.ts';
import { allowedActions, construct, DEFINITIONS, logicalId, ownTable, synthFanin, testApp } from './synth.ts';

/** The construct options users of AWS Solutions Constructs expect. */

type Resource = { Properties: Record<string, unknown> };

/** GIVEN a stack holding whatever `extra` builds, and a Fanin given those resources WHEN synthesized. */
function synthWith<T>(
  extra: (stack: Stack) => T,
  props: (resources: T) => Partial<FaninProps>,
): { stack: Stack; fanin: Fanin; template: Template; resources: T } {
  const stack = new Stack(testApp(), 'Test');
  const resources = extra(stack);
  const fanin = new Fanin(stack, 'Fanin', { definitions: DEFINITIONS, ...props(resources) });
  return { stack, fanin, template: Template.fromStack(stack), resources };
}

/** A synth takes a few seconds on a loaded machine (several per test here); no assertion is timed. */
const SYNTH_TIMEOUT = 60_000;

describe('architecture and memory', { timeout: SYNTH_TIMEOUT }, () => {
  it('runs every handler on arm64 by default', () => {
    synthFanin().template.allResourcesProperties('AWS::Lambda::Function', { Architectures: ['arm64'] });
  });

  it('runs every handler on x86_64 with the memory asked', () => {
    const { template } = synthFanin({ architecture: lambda.Architecture.X86_64, functionMemorySize: 1024 });
    template.resourceCountIs('AWS::Lambda::Function', 6);
    template.allResourcesProperties('AWS::Lambda::Function', { Architectures: ['x86_64'], MemorySize: 1024 });
  });
});

describe('reserved concurrency', { timeout: SYNTH_TIMEOUT }, () => {
  it('reserves concurrency for the named handlers only', () => {
    const { template, stack, fanin } = synthFanin({ reservedConcurrency: { reply: 12, sweeper: 1 } });
    const functions = template.findResources('AWS::Lambda::Function') as Record<string, Resource>;
    const reserved = (fn: lambda.IFunction) =>
      functions[logicalId(stack, fn)]?.Properties.ReservedConcurrentExecutions;
    expect(reserved(fanin.functions.reply)).toBe(12);
    expect(reserved(fanin.functions.sweeper)).toBe(1);
    for (const fn of [fanin.functions.fanOut, fanin.functions.timer, fanin.functions.control]) {
      expect(reserved(fn)).toBeUndefined();
    }
  });

  it.each<[string, FaninProps['reservedConcurrency'], RegExp]>([
    // 2 reply partitions x 5 (mutant killed: no minimum, which throttles the pollers)
    [
      'reply under its event sources',
      { reply: 9 },
      /reservedConcurrency.reply must be an integer of at least 10, .*\(given 9\)/,
    ],
    [
      'the fan-out at 0',
      { fanOut: 0 },
      /reservedConcurrency.fanOut must be an integer of at least 5, .*\(given 0\)/,
    ],
    ['a fraction', { sweeper: 1.5 }, /reservedConcurrency.sweeper must be an integer .*\(given 1.5\)/],
    [
      'an unknown role',
      { replies: 10 } as never,
      /reservedConcurrency keys must be handler roles .*\(given "replies"\)/,
    ],
  ])('refuses %s, naming the value', (_, reservedConcurrency, message) => {
    expect(construct({ reservedConcurrency })).toThrow(message);
  });

  it('scales the reply minimum with the partitions', () => {
    expect(construct({ replyPartitions: 4, reservedConcurrency: { reply: 19 } })).toThrow(/at least 20/);
    expect(construct({ replyPartitions: 4, reservedConcurrency: { reply: 20 } })).not.toThrow();
  });
});

describe('tracing', { timeout: SYNTH_TIMEOUT }, () => {
  it('is off by default: no active tracing, no X-Ray permission, no trace variable', () => {
    const { template, stack, fanin } = synthFanin();
    for (const fn of Object.values(template.findResources('AWS::Lambda::Function')) as Resource[]) {
      expect(fn.Properties.TracingConfig).toBeUndefined();
      const variables = (fn.Properties.Environment as { Variables: Record<string, unknown> }).Variables;
      expect(variables.POWERTOOLS_TRACE_ENABLED).toBeUndefined();
    }
    expect(
      allowedActions(template, logicalId(stack, fanin.functions.reply.role as never)).has(
        'xray:PutTraceSegments',
      ),
    ).toBe(false);
  });

  it("turns on active tracing, the X-Ray permissions and the handlers' Powertools Tracer", () => {
    const { template, stack, fanin } = synthFanin({ tracing: true });
    template.allResourcesProperties('AWS::Lambda::Function', {
      TracingConfig: { Mode: 'Active' },
      Environment: {
        Variables: Match.objectLike({ POWERTOOLS_TRACE_ENABLED: 'true', POWERTOOLS_SERVICE_NAME: 'fanin' }),
      },
    });
    for (const fn of Object.values(fanin.functions)) {
      const allowed = allowedActions(template, logicalId(stack, fn.role as never));
      expect([...(allowed.get('xray:PutTraceSegments') ?? [])]).toEqual(['*']);
      expect([...(allowed.get('xray:PutTelemetryRecords') ?? [])]).toEqual(['*']);
    }
  });
});

describe('a customer managed key', { timeout: SYNTH_TIMEOUT }, () => {
  const keyed = () =>
    synthWith(
      (stack) => new kms.Key(stack, 'Key', { enableKeyRotation: true }),
      (key) => ({ encryptionKey: key }),
    );

  it('encrypts the queues, the table, the bucket and the log groups with it', () => {
    const { template, stack, resources: key } = keyed();
    const keyArn = { 'Fn::GetAtt': [logicalId(stack, key), 'Arn'] };
    template.allResourcesProperties('AWS::SQS::Queue', { KmsMasterKeyId: keyArn });
    template.hasResourceProperties('AWS::DynamoDB::Table', {
      SSESpecification: { SSEEnabled: true, SSEType: 'KMS', KMSMasterKeyId: keyArn },
    });
    template.hasResourceProperties('AWS::S3::Bucket', {
      BucketEncryption: {
        ServerSideEncryptionConfiguration: [
          {
            ServerSideEncryptionByDefault: { SSEAlgorithm: 'aws:kms', KMSMasterKeyID: keyArn },
            BucketKeyEnabled: true,
          },
        ],
      },
    });
    template.allResourcesProperties('AWS::Logs::LogGroup', { KmsKeyId: keyArn });
  });

  it("lets every handler's role use it, and CloudWatch Logs in the key policy", () => {
    const { template, stack, fanin, resources: key } = keyed();
    const keyArn = `<${logicalId(stack, key)}.Arn>`;
    for (const fn of Object.values(fanin.functions)) {
      const allowed = allowedActions(template, logicalId(stack, fn.role as never));
      for (const action of ['kms:Decrypt', 'kms:Encrypt', 'kms:GenerateDataKey']) {
        expect([...(allowed.get(action) ?? [])], action).toContain(keyArn);
      }
    }
    template.hasResourceProperties('AWS::KMS::Key', {
      KeyPolicy: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Sid: 'FaninLogGroups',
            Principal: { Service: { 'Fn::Join': ['', ['logs.', { Ref: 'AWS::Region' }, '.amazonaws.com']] } },
          }),
        ]),
      },
    });
  });

  it("lets producers and responders use the bucket's key for large messages", () => {
    // GIVEN a producer and a responder role granted large-message writes and reads
    const stack = new Stack(testApp(), 'Test');
    const key = new kms.Key(stack, 'Key', { enableKeyRotation: true });
    const fanin = new Fanin(stack, 'Fanin', { definitions: DEFINITIONS, encryptionKey: key });
    const producer = new iam.Role(stack, 'Producer', { assumedBy: new iam.AccountRootPrincipal() });
    const responder = new iam.Role(stack, 'Responder', { assumedBy: new iam.AccountRootPrincipal() });
    fanin.grantLargeMessageWrites(producer);
    fanin.grantLargeMessageReads(responder);
    const after = Template.fromStack(stack);
    const keyArn = `<${logicalId(stack, key)}.Arn>`;
    // THEN the writer may get a data key and the reader decrypt (mutant killed: S3 actions only,
    // which a KMS-encrypted bucket refuses)
    const writes = allowedActions(after, logicalId(stack, producer));
    expect([...(writes.get('kms:GenerateDataKey') ?? [])]).toContain(keyArn);
    const reads = allowedActions(after, logicalId(stack, responder));
    expect([...(reads.get('kms:Decrypt') ?? [])]).toContain(keyArn);
  });

  it('keeps AWS managed encryption without a key', () => {
    const { template } = synthFanin();
    template.allResourcesProperties('AWS::SQS::Queue', { SqsManagedSseEnabled: true });
    template.hasResourceProperties('AWS::DynamoDB::Table', { SSESpecification: { SSEEnabled: true } });
    template.resourceCountIs('AWS::KMS::Key', 0);
  });
});

describe('bring your own table and bucket (the output bus: eventBus, fanin.test.ts)', {
  timeout: SYNTH_TIMEOUT,
}, () => {
  const topology = describeTopology({ definitions: DEFINITIONS });

  it("uses the user's table and bucket: creates neither, gives their names to the handlers and grants on them", () => {
    // GIVEN a table and a bucket of the user's stack
    const { template, stack, fanin, resources } = synthWith(
      (s) => ({ table: ownTable(s, topology), bucket: new s3.Bucket(s, 'OwnBucket') }),
      (r) => ({ table: r.table, bucket: r.bucket }),
    );
    // THEN fanin creates no table nor bucket of its own
    template.resourceCountIs('AWS::DynamoDB::Table', 1);
    template.resourceCountIs('AWS::S3::Bucket', 1);
    expect(fanin.table).toBe(resources.table);
    expect(fanin.bucket).toBe(resources.bucket);
    template.allResourcesProperties('AWS::Lambda::Function', {
      Environment: {
        Variables: Match.objectLike({
          FANIN_TABLE: { Ref: logicalId(stack, resources.table) },
          FANIN_BUCKET: { Ref: logicalId(stack, resources.bucket) },
        }),
      },
    });
    const reply = allowedActions(template, logicalId(stack, fanin.functions.reply.role as never));
    expect([...(reply.get('dynamodb:PutItem') ?? [])].join()).toContain(
      `<${logicalId(stack, resources.table)}.Arn>`,
    );
    expect([...(reply.get('s3:GetObject') ?? [])]).toContain(
      `<${logicalId(stack, resources.bucket)}.Arn>/state/*`,
    );
    // and its bucket gets fanin's deny of writes to what fanin reads back
    template.hasResourceProperties('AWS::S3::BucketPolicy', {
      PolicyDocument: {
        Statement: Match.arrayWith([Match.objectLike({ Sid: 'OnlyFaninWritesStateAndOutputs' })]),
      },
    });
  });

  it('warns at synth that an imported bucket gets neither the lifecycle rule nor the deny', () => {
    const { stack } = synthWith(
      (s) => s3.Bucket.fromBucketName(s, 'Imported', 'my-payloads'),
      (bucket) => ({ bucket }),
    );
    Annotations.fromStack(stack).hasWarning(
      '/Test/Fanin',
      Match.stringLikeRegexp('the payload bucket is imported: .*at least 46 days.*'),
    );
  });

  it("refuses a table of the app whose keys or indexes are not the topology's, naming them", () => {
    const wrong = (stack: Stack) =>
      new dynamodb.Table(stack, 'Wrong', {
        partitionKey: { name: 'id', type: dynamodb.AttributeType.STRING },
      });
    expect(() => synthWith(wrong, (table) => ({ table }))).toThrow(
      /table: the table must have the keys partition \/ sort pk \(S\) \/ sk \(S\), .*\(given id \(S\) \/ none\)/,
    );
    const noIndexes = (stack: Stack) =>
      new dynamodb.Table(stack, 'NoIndexes', {
        partitionKey: { name: 'pk', type: dynamodb.AttributeType.STRING },
        sortKey: { name: 'sk', type: dynamodb.AttributeType.STRING },
      });
    expect(() => synthWith(noIndexes, (table) => ({ table }))).toThrow(
      /table: index due must have the keys .*\(given no such index\)/,
    );
  });

  it('refuses deletionProtection with a table of the user', () => {
    expect(() =>
      synthWith(
        (s) => ownTable(s, topology),
        (table) => ({ table, deletionProtection: true }),
      ),
    ).toThrow(/deletionProtection applies to the table fanin creates/);
  });
});
