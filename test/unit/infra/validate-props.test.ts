import { Duration, Fn, RemovalPolicy, Stack, Token } from 'aws-cdk-lib';
import * as events from 'aws-cdk-lib/aws-events';
import { describe, expect, it } from 'vitest';
import type { FaninProps } from '../../../infra/fanin.ts';
import { Fanin } from '../../../infra/fanin.ts';
import { construct, DEFINITIONS, testApp } from './synth.ts';

/** Props are validated in the constructor; every message names the value it was given. */
describe('Fanin props validation', () => {
  it.each<[string, Partial<FaninProps>, RegExp]>([
    ['replyPartitions is 0', { replyPartitions: 0 }, /replyPartitions must be .* \(given 0\)/],
    ['replyPartitions is 65', { replyPartitions: 65 }, /replyPartitions must be .* \(given 65\)/],
    [
      'replyPartitions is 1.5',
      { replyPartitions: 1.5 },
      /replyPartitions must be an integer .* \(given 1\.5\)/,
    ],
    ['maxReceiveCount is 0', { maxReceiveCount: 0 }, /maxReceiveCount must be .* \(given 0\)/],
    ['prefix has capitals', { prefix: 'Shop' }, /prefix must be lowercase .* \(given "Shop"\)/],
    [
      'definitions is empty',
      { definitions: [] },
      /definitions must hold at least one definition \(given 0\)/,
    ],
    [
      'a definition is invalid',
      { definitions: [{ name: 'bad name', completion: { strategy: 'all' } }] },
      /name: must be 1-64 letters, digits, - or _; received "bad name"/,
    ],
    [
      'a definition cancels its recipients without a fan-out',
      { definitions: [{ name: 'asked', completion: { strategy: 'all' }, cancelOutstanding: true }] },
      /cancelOutstanding: needs a 'splitter' or 'recipient-list' fan-out.*; received true/,
    ],
    [
      'a definition retries its sub-requests after its recipients have passed their deadline',
      {
        definitions: [
          {
            name: 'late-retry',
            completion: { strategy: 'all' },
            fanOut: { type: 'splitter', itemsPath: '$.items', target: 'pickers' },
            timeoutSeconds: 60,
            responders: { timeoutSeconds: 20, retry: { attempts: 1, intervalSeconds: 20 } },
          },
        ],
      },
      /responders\.retry\.intervalSeconds: the first retry \(20 s after the open\) must come before the longest recipient deadline \(20 s\)/,
    ],
    [
      'functionTimeout is not whole seconds',
      { functionTimeout: Duration.millis(1500) },
      /functionTimeout must be a whole number of seconds .* \(given 1 second 500 millis\)/,
    ],
    [
      'functionTimeout is over 15 minutes',
      { functionTimeout: Duration.minutes(16) },
      /functionTimeout must be .* between 1 and 900 .* \(given 16 minutes\)/,
    ],
    ['functionMemorySize is 64', { functionMemorySize: 64 }, /functionMemorySize must be .* \(given 64\)/],
    [
      'payloadExpiration is 12 hours',
      { payloadExpiration: Duration.hours(12) },
      /payloadExpiration must be a whole number of days, at least 1 \(given 12 hours\)/,
    ],
    [
      'dlqRetention is 15 days',
      { dlqRetention: Duration.days(15) },
      /dlqRetention must be 14 days, .* \(given 15 days\)/,
    ],
    [
      'replyDepthAlarmThreshold is 0',
      { replyDepthAlarmThreshold: 0 },
      /replyDepthAlarmThreshold must be an integer of at least 1 \(given 0\)/,
    ],
    [
      'autoDeleteObjects is set without removalPolicy DESTROY',
      { autoDeleteObjects: true },
      /autoDeleteObjects needs removalPolicy RemovalPolicy.DESTROY \(given the default, retain\)/,
    ],
    [
      'autoDeleteObjects is set with removalPolicy RETAIN_ON_UPDATE_OR_DELETE',
      { autoDeleteObjects: true, removalPolicy: RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE },
      /autoDeleteObjects needs removalPolicy RemovalPolicy.DESTROY \(given retain-on-update-or-delete\)/,
    ],
    [
      'removalPolicy is SNAPSHOT',
      { removalPolicy: RemovalPolicy.SNAPSHOT },
      /removalPolicy must be RETAIN, RETAIN_ON_UPDATE_OR_DELETE or DESTROY.*\(given snapshot\)/,
    ],
    [
      'an extra target is not an SQS ARN',
      { extraTargetQueueArns: ['arn:aws:sns:us-east-1:111122223333:topic'] },
      /extraTargetQueueArns must be SQS queue ARNs .* \(given \["arn:aws:sns:us-east-1:111122223333:topic"\]\)/,
    ],
    [
      'a fan-out target is neither a queue name nor a URL',
      {
        definitions: [
          {
            name: 'split',
            completion: { strategy: 'all' },
            fanOut: { type: 'splitter', itemsPath: '$.items', target: 'not a queue!' },
          },
        ],
      },
      /definition "split": a fan-out target must be an SQS queue name or URL \(given "not a queue!"\)/,
    ],
    [
      'createEventBus is false while a definition emits to EventBridge',
      {
        createEventBus: false,
        definitions: [{ name: 'ev', completion: { strategy: 'all' }, outputs: { eventBridge: true } }],
      },
      /definitions \["ev"\] emit to EventBridge.*\(given createEventBus: false\)/,
    ],
    [
      'the handlers environment would pass 4 KB',
      { replyPartitions: 64, prefix: 'a-rather-long-prefix-for-fanin' },
      /replyPartitions 64 with prefix "a-rather-long-prefix-for-fanin" makes the handlers' environment up to \d+ bytes .*over the 3840 bytes allowed .*: at most 17 reply partitions fit/,
    ],
    [
      'partitioning.lowWatermark is not below highWatermark',
      { partitioning: { highWatermark: 50, lowWatermark: 50 } },
      /partitioning.lowWatermark must be below highWatermark \(given 50 and 50\)/,
    ],
    [
      'partitioning.highWatermark exceeds highThreshold',
      { partitioning: { highThreshold: 100, highWatermark: 500 } },
      /partitioning.highWatermark must not exceed highThreshold \(given 500 and 100\)/,
    ],
    [
      'partitioning.stallSeconds is 0',
      { partitioning: { stallSeconds: 0 } },
      /partitioning.stallSeconds must be an integer >= 1 \(given 0\)/,
    ],
    [
      'partitioning.highThreshold is 1.5',
      { partitioning: { highThreshold: 1.5 } },
      /partitioning.highThreshold must be an integer >= 1 \(given 1\.5\)/,
    ],
    [
      'partitioning.lowWatermark is negative',
      { partitioning: { lowWatermark: -1 } },
      /partitioning.lowWatermark must be an integer >= 0 \(given -1\)/,
    ],
    [
      'partitioning.distributorIntervalSeconds is under a minute',
      { partitioning: { distributorIntervalSeconds: 30 } },
      /partitioning.distributorIntervalSeconds must be a whole number of minutes .* rate schedule \(given 30\)/,
    ],
    [
      'partitioning.distributorIntervalSeconds is not whole minutes',
      { partitioning: { distributorIntervalSeconds: 90 } },
      /partitioning.distributorIntervalSeconds must be a whole number of minutes .*\(given 90\)/,
    ],
    [
      'partitioning.highWatermark is a deploy-time token',
      { partitioning: { highWatermark: Token.asNumber(Fn.importValue('watermark')) } },
      /partitioning.highWatermark must be known at synth, not a deploy-time token/,
    ],
    [
      'claimCheckThreshold is 0',
      { claimCheckThreshold: 0 },
      /claimCheckThreshold must be an integer between 1 and 262144 bytes inclusive \(given 0\)/,
    ],
    [
      'claimCheckThreshold is over 256 KiB',
      { claimCheckThreshold: 262_145 },
      /claimCheckThreshold must be .* \(given 262145\)/,
    ],
  ])('fails if %s', (_, props, message) => {
    // GIVEN props with one invalid value WHEN the construct is created THEN it throws, naming the value
    expect(construct(props)).toThrow(message);
  });

  it('fails if eventBus and createEventBus are both given', () => {
    // GIVEN an existing bus and createEventBus
    const bus = events.EventBus.fromEventBusName(new Stack(), 'Bus', 'default');
    // WHEN / THEN
    expect(construct({ eventBus: bus, createEventBus: true })).toThrow(
      /eventBus and createEventBus cannot both be given/,
    );
  });

  // 25 partition URLs is what fits Lambda's 4 KB environment, less the margin, with the default
  // prefix and LocalStack's queue URLs (handler-environment.test.ts).
  it.each<[string, Partial<FaninProps>]>([
    ['1 partition', { replyPartitions: 1 }],
    ['25 partitions', { replyPartitions: 25 }],
    [
      'the tightest partitioning',
      { partitioning: { lowWatermark: 0, highWatermark: 1, highThreshold: 1, stallSeconds: 1 } },
    ],
    ['a distributor every minute', { partitioning: { distributorIntervalSeconds: 60 } }],
    ['a distributor every hour', { partitioning: { distributorIntervalSeconds: 3600 } }],
    ['a 1-byte claim-check threshold', { claimCheckThreshold: 1 }],
    ['a 256 KiB claim-check threshold', { claimCheckThreshold: 262_144 }],
    ['a 1 s timeout', { functionTimeout: Duration.seconds(1) }],
    ['a 15 min timeout', { functionTimeout: Duration.minutes(15) }],
    ['a wildcard target ARN', { extraTargetQueueArns: ['arn:aws:sqs:eu-west-1:111122223333:partner-*'] }],
    ['the one DLQ retention left', { definitions: DEFINITIONS, dlqRetention: Duration.days(14) }],
  ])('accepts the limit: %s', (_, props) => {
    expect(construct(props)).not.toThrow();
  });
});

describe('props the construct refuses, naming the value', () => {
  it('GIVEN a dlqRetention other than 14 days WHEN the construct is created THEN it throws naming the value', () => {
    // Mutant killed: "dlqRetention accepted shorter" (329f56a accepted 60 s to 14 days).
    expect(construct({ dlqRetention: Duration.days(4) })).toThrow(
      /dlqRetention must be 14 days.*\(given 4 days\)/,
    );
    expect(construct({ dlqRetention: Duration.days(14) })).not.toThrow();
  });

  it('GIVEN payloadExpiration shorter than the state life WHEN the construct is created THEN it throws naming the value; the minimum itself is accepted', () => {
    // Mutant killed: "no synth check of payloadExpiration against stateLifeSeconds" (329f56a).
    expect(construct({ payloadExpiration: Duration.days(14) })).toThrow(
      /payloadExpiration must be at least 46 days: .*\(given 14 days\)/,
    );
    expect(construct({ payloadExpiration: Duration.days(45) })).toThrow(/\(given 45 days\)/);
    expect(construct({ payloadExpiration: Duration.days(46) })).not.toThrow();
  });

  it.each<[string, Partial<FaninProps>, RegExp]>([
    [
      'an STS session ARN',
      { ingressSenders: ['arn:aws:sts::111122223333:assumed-role/r/s'] },
      /ingressSenders must be .*\(given \["arn:aws:sts::111122223333:assumed-role\/r\/s"\]\)/,
    ],
    [
      'an 11-digit account',
      { replySenders: ['12345678901'] },
      /replySenders must be .*\(given \["12345678901"\]\)/,
    ],
    [
      'a deploy-time string',
      { controlSenders: [Fn.importValue('operator-role-arn')] },
      /controlSenders must be .*\(given/,
    ],
  ])(
    'GIVEN %s as a sender WHEN the construct is created THEN it throws naming the value',
    (_, props, message) => {
      expect(construct(props)).toThrow(message);
    },
  );

  it("GIVEN an extra target pattern that matches one of fanin's own queues WHEN the construct is created THEN it throws naming them", () => {
    // Mutant killed: "no check of extra targets against the topology's queue names": a request naming
    // `fanin-out-completed.fifo` as a recipient would forge a result with the fan-out's own role.
    expect(construct({ extraTargetQueueArns: ['arn:aws:sqs:us-east-1:111122223333:fanin-*'] })).toThrow(
      /extraTargetQueueArns must not match fanin's own queues \(fanin-ingress, .*fanin-out-completed\.fifo.*\(given arn:aws:sqs:us-east-1:111122223333:fanin-\*\)/,
    );
    expect(construct({ extraTargetQueueArns: ['arn:aws:sqs:us-east-1:111122223333:fanin-timer'] })).toThrow(
      /\(fanin-timer\)/,
    );
    expect(
      construct({ extraTargetQueueArns: ['arn:aws:sqs:us-east-1:111122223333:fanin-bank-?'] }),
    ).not.toThrow();
    // the same names in a recipient account are another account's queues
    expect(
      construct({
        extraTargetQueueArns: ['arn:aws:sqs:us-east-1:444455556666:fanin-*'],
        recipientAccounts: ['444455556666'],
      }),
    ).not.toThrow();
  });

  it('GIVEN a recipient account that is not 12 digits WHEN the construct is created THEN it throws naming it', () => {
    expect(construct({ recipientAccounts: ['444455556666', '4444-5555-6666'] })).toThrow(
      /recipientAccounts must be 12-digit AWS account ids, known at synth \(given \["4444-5555-6666"\]\)/,
    );
  });

  it('GIVEN a stack in a known account and region WHEN an extra target queue is in another account or region THEN the construct throws unless that account is a recipient account', () => {
    // Mutant killed: "extraTargetQueueArns unchecked against recipientAccounts": the fan-out's IAM
    // would allow queues the runtime refuses (or the reverse).
    const make = (props: Partial<FaninProps>) => () =>
      new Fanin(
        new Stack(testApp(), 'Test', { env: { account: '111122223333', region: 'eu-west-1' } }),
        'Fanin',
        { definitions: DEFINITIONS, ...props },
      );
    const partner = 'arn:aws:sqs:eu-west-1:444455556666:partner-*';
    expect(make({ extraTargetQueueArns: [partner] })).toThrow(
      /extraTargetQueueArns must name queues of fanin's own account \(111122223333\) or of recipientAccounts, in fanin's region \(eu-west-1\) \(given arn:aws:sqs:eu-west-1:444455556666:partner-\*\)/,
    );
    expect(make({ extraTargetQueueArns: [partner], recipientAccounts: ['444455556666'] })).not.toThrow();
    expect(make({ extraTargetQueueArns: ['arn:aws:sqs:eu-west-1:111122223333:mine-*'] })).not.toThrow();
    expect(
      make({
        extraTargetQueueArns: ['arn:aws:sqs:us-east-1:444455556666:x'],
        recipientAccounts: ['444455556666'],
      }),
    ).toThrow(/\(given arn:aws:sqs:us-east-1:444455556666:x\)/);
  });
});
