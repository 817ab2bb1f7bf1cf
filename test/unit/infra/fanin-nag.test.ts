import { type App, Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import { Annotations, Match } from 'aws-cdk-lib/assertions';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { IConstruct } from 'constructs';
import { beforeAll, describe, expect, it } from 'vitest';
import { Fanin } from '../../../infra/fanin.ts';
import { FaninStack } from '../../../infra/fanin-stack.ts';
import { describeTopology } from '../../../shared/topology/topology.ts';
import { DEFINITIONS, ownTable, synthFanin, testApp } from './synth.ts';

/**
 * cdk-nag 3.x is a CDK validation plugin: `Validations.of(app).addPlugins(new AwsSolutionsChecks(app))`
 * in infra/app.ts fails `cdk synth` on any unacknowledged finding. Here the same pack runs on the
 * construct tree directly (`validateScope`), and the report must be empty.
 */

interface Finding {
  readonly rule: string;
  readonly path: string;
}

function nagFindings(scope: IConstruct): Finding[] {
  const report = new AwsSolutionsChecks().validateScope(scope);
  return report.violations.flatMap((v) =>
    v.violatingResources.map((r) => ({
      rule: v.ruleName,
      path: r.constructPath ?? r.resourceLogicalId ?? '?',
    })),
  );
}

function acknowledgments(scope: IConstruct): { path: string; id: string; reason: unknown }[] {
  return scope.node.findAll().flatMap((c) =>
    c.node.metadata
      .filter((m) => m.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY)
      .flatMap((m) =>
        Object.entries(m.data as Record<string, unknown>).map(([id, reason]) => ({
          path: c.node.path,
          id,
          reason,
        })),
      ),
  );
}

describe('cdk-nag AwsSolutions', () => {
  let app: App;
  let example: FaninStack;
  let everything: Stack;
  let ownResources: Stack;

  beforeAll(() => {
    // GIVEN the example app's stack, and a stack using every option of the construct
    app = testApp();
    example = new FaninStack(app, 'Example');
    everything = new Stack(app, 'Everything');
    new Fanin(everything, 'Fanin', {
      definitions: [
        ...DEFINITIONS,
        { name: 'ev', completion: { strategy: 'all' }, outputs: { eventBridge: true } },
      ],
      replyPartitions: 3,
      fifoReplies: true,
      removalPolicy: RemovalPolicy.DESTROY,
      autoDeleteObjects: true,
      deletionProtection: true,
      extraTargetQueueArns: [
        'arn:aws:sqs:us-east-1:111122223333:partner',
        'arn:aws:sqs:us-east-1:111122223333:supplier-*',
      ],
      dlqRetention: Duration.days(14),
      payloadExpiration: Duration.days(90),
      recipientAccounts: ['111122223333'],
      ingressSenders: [
        'arn:aws:iam::111122223333:role/producer-*',
        'arn:aws:sns:us-east-1:111122223333:orders',
      ],
      replySenders: ['111122223333'],
      controlSenders: ['arn:aws:iam::111122223333:role/operator'],
      partitioning: { highWatermark: 500, lowWatermark: 100, distributorIntervalSeconds: 120 },
      claimCheckThreshold: 100_000,
      architecture: lambda.Architecture.X86_64,
      functionMemorySize: 1024,
      reservedConcurrency: { fanOut: 10, reply: 20, sweeper: 1 },
      tracing: true,
      encryptionKey: new kms.Key(everything, 'Key', { enableKeyRotation: true }),
      oldestMessageAgeAlarm: Duration.minutes(30),
    });
    // and a stack whose table and bucket are the user's own
    ownResources = new Stack(app, 'OwnResources');
    const topology = describeTopology({ definitions: DEFINITIONS, prefix: 'own' });
    const ownBucket = new s3.Bucket(ownResources, 'OwnBucket', {
      encryption: s3.BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      lifecycleRules: [{ expiration: Duration.days(60) }],
    });
    Validations.of(ownBucket).acknowledge({
      id: 'AwsSolutions-S1',
      reason: "The user's own bucket: its access logs are the user's decision, as fanin's own bucket's are.",
    });
    new Fanin(ownResources, 'Fanin', {
      definitions: DEFINITIONS,
      prefix: 'own',
      table: ownTable(ownResources, topology),
      bucket: ownBucket,
      dashboard: false,
    });
    // WHEN the app is synthesized (aspects and lazy values resolved)
    app.synth();
  });

  it('reports no unacknowledged error or warning on the example stack', () => {
    // THEN
    expect(nagFindings(example)).toEqual([]);
  });

  it('reports no unacknowledged error or warning with every construct option set', () => {
    expect(nagFindings(everything)).toEqual([]);
  });

  it("reports no unacknowledged error or warning with the user's own table and bucket", () => {
    expect(nagFindings(ownResources)).toEqual([]);
  });

  it('gives a reason in code for each acknowledged rule', () => {
    const acks = [...acknowledgments(example), ...acknowledgments(everything)];
    expect(acks.length).toBeGreaterThan(0);
    for (const ack of acks) {
      expect(typeof ack.reason, `${ack.id} at ${ack.path}`).toBe('string');
      expect(String(ack.reason).length, `${ack.id} at ${ack.path}`).toBeGreaterThan(40);
    }
  });

  it('acknowledges only the wildcards of the object grants (one per bucket prefix) and the bucket access logs', () => {
    // CDK records an id without a known prefix as `Annotation::<id>`; cdk-nag strips that prefix.
    const ids = new Set(
      acknowledgments(example).map((a) => a.id.replace(/^Annotation::/i, '').replace(/<[^>]+>/g, '<id>')),
    );
    expect([...ids].sort()).toEqual([
      'AwsSolutions-IAM5[Resource::<id>/incoming/*]',
      'AwsSolutions-IAM5[Resource::<id>/outputs/*]',
      'AwsSolutions-IAM5[Resource::<id>/requests/*]',
      'AwsSolutions-IAM5[Resource::<id>/state/*]',
      'AwsSolutions-S1',
    ]);
  });

  it('acknowledges a wildcard extra target queue, and only on the fan-out role', () => {
    const wildcard = acknowledgments(everything).filter((a) => a.id.includes('supplier-*'));
    expect(wildcard.map((a) => [a.id.replace(/^Annotation::/i, ''), a.path])).toEqual([
      [
        'AwsSolutions-IAM5[Resource::arn:aws:sqs:us-east-1:111122223333:supplier-*]',
        'Everything/Fanin/FanOutRole',
      ],
    ]);
  });

  it("acknowledges the object grants' wildcards on an imported bucket by its ARN", {
    timeout: 60_000,
  }, () => {
    // GIVEN a bucket imported by name: no logical id, cdk-nag names its ARN
    const stack = new Stack(testApp(), 'Imported');
    new Fanin(stack, 'Fanin', {
      definitions: DEFINITIONS,
      bucket: s3.Bucket.fromBucketName(stack, 'Payloads', 'my-payloads'),
    });
    // THEN the only finding cdk-nag has is none
    expect(nagFindings(stack)).toEqual([]);
    expect(acknowledgments(stack).map((a) => a.id.replace(/^Annotation::/i, ''))).toContain(
      'AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:s3:::my-payloads/state/*]',
    );
  });

  // Three stacks' annotations: a few seconds on a loaded machine (no assertion is timed).
  it('leaves no error or warning annotation on the stacks', { timeout: 60_000 }, () => {
    for (const stack of [example, everything, ownResources]) {
      const annotations = Annotations.fromStack(stack);
      annotations.hasNoError('*', Match.anyValue());
      annotations.hasNoWarning('*', Match.anyValue());
    }
  });

  it('fails synth through the validation plugin when a finding is not acknowledged', () => {
    // GIVEN an app with the plugin as infra/app.ts registers it, and an unencrypted queue without a DLQ
    const bad = testApp();
    const stack = new Stack(bad, 'Bad');
    new sqs.Queue(stack, 'Plain', { encryption: sqs.QueueEncryption.UNENCRYPTED });
    Validations.of(bad).addPlugins(new AwsSolutionsChecks(bad));
    // WHEN / THEN
    expect(() => bad.synth()).toThrow(/AwsSolutions-SQS2[\s\S]*AwsSolutions-SQS3[\s\S]*AwsSolutions-SQS4/);
  });
});

/** The drain warning (shared/topology/drain-warnings.ts) as the construct annotates it at synth. */
describe('definitions that may time out within a drain interval', () => {
  it('GIVEN a 90 s deadline and partitions drained every minute WHEN synthesized THEN a warning names the definition, and only it', () => {
    // GIVEN a short deadline, an inactivity timeout, a request that may ask for a short one, and a long deadline
    const { stack } = synthFanin({
      replyDrainIntervalSeconds: [0, 60],
      definitions: [
        { name: 'quick-quote', completion: { strategy: 'all' }, timeoutSeconds: 90 },
        {
          name: 'idle-bids',
          completion: { strategy: 'all' },
          timeoutSeconds: 3600,
          inactivityTimeoutSeconds: 30,
        },
        {
          name: 'asks-short',
          completion: { strategy: 'all' },
          timeoutSeconds: 3600,
          requestParameters: { timeoutSeconds: { min: 10, max: 3600 } },
        },
        { name: 'slow-survey', completion: { strategy: 'all' }, timeoutSeconds: 600 },
      ],
    });
    // THEN
    const annotations = Annotations.fromStack(stack);
    annotations.hasWarning(
      '/Test/Fanin',
      Match.stringLikeRegexp(
        '\\["quick-quote","idle-bids","asks-short"\\] may time out in less than twice the longest reply drain interval \\(60 s\\)',
      ),
    );
  }, 60_000);

  it('GIVEN no drained partition WHEN synthesized THEN no such warning', () => {
    const { stack } = synthFanin({
      definitions: [{ name: 'quick-quote', completion: { strategy: 'all' }, timeoutSeconds: 5 }],
    });
    Annotations.fromStack(stack).hasNoWarning('/Test/Fanin', Match.stringLikeRegexp('drain interval'));
  }, 60_000);
});
