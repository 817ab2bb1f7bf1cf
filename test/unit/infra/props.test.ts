import { Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import * as events from 'aws-cdk-lib/aws-events';
import { describe, expect, it } from 'vitest';
import type { FaninProps } from '../../../infra/fanin.ts';
import { construct, DEFINITIONS } from './synth.ts';

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
      /dlqRetention must be .* between 60 s and 14 days \(given 15 days\)/,
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
      /replyPartitions 64 with prefix "a-rather-long-prefix-for-fanin" makes the handlers' environment about \d+ bytes, over Lambda's 4096-byte limit/,
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

  it('accepts the limits: 1 and 40 partitions, 1 s and 15 min timeouts, wildcard target ARNs', () => {
    for (const props of [
      { replyPartitions: 1 },
      // 40 partition URLs is what fits Lambda's 4 KB environment with the default prefix.
      { replyPartitions: 40 },
      { functionTimeout: Duration.seconds(1) },
      { functionTimeout: Duration.minutes(15) },
      { extraTargetQueueArns: ['arn:aws:sqs:eu-west-1:111122223333:partner-*'] },
      { definitions: DEFINITIONS, dlqRetention: Duration.minutes(1) },
    ]) {
      expect(construct(props)).not.toThrow();
    }
  });
});
