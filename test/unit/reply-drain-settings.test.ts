import { describe, expect, it } from 'vitest';
import { describeTopology } from '../../shared/topology/topology.ts';

/**
 * `replyDrainIntervalSeconds` (issue "Cost at the floor"): a reply partition drained on a
 * schedule instead of an event source. The topology validates it as EventBridge and SQS would
 * take it, and the stack gives a drained partition a schedule instead of an event source.
 */
describe('reply drain interval', () => {
  const definitions = [{ name: 'd', completion: { strategy: 'all' as const } }];

  it('is 0 by default: every partition has an event source', () => {
    const topology = describeTopology({ definitions, replyPartitions: 2 });
    expect(topology.replyConsumers.map((c) => c.drainIntervalSeconds)).toEqual([0, 0]);
    expect(topology.partitioning.drained).toEqual([]);
  });

  it('is set per partition; a drained partition takes batches of 1,000 unless told, and is known to the distributor', () => {
    // Act
    const topology = describeTopology({
      definitions,
      replyPartitions: 3,
      replyDrainIntervalSeconds: [0, 60, 300],
    });

    // Assess (mutants killed: every partition given partition 0's interval; a drained partition
    // left at the event source's 10 a batch, which splits an aggregate's replies between packs)
    expect(topology.replyConsumers.map((c) => c.drainIntervalSeconds)).toEqual([0, 60, 300]);
    expect(topology.replyConsumers.map((c) => c.batchSize)).toEqual([10, 1000, 1000]);
    expect(topology.partitioning.drained).toEqual([1, 2]);
  });

  it('takes a batch size above 10 without a window on a drained partition', () => {
    const topology = describeTopology({ definitions, replyDrainIntervalSeconds: 120, replyBatchSize: 5000 });
    expect(topology.replyConsumers.map((c) => c.batchSize)).toEqual([5000, 5000]);
  });

  it.each([
    [{ replyDrainIntervalSeconds: 30 }, 'must be 0 or whole minutes from 60 to 3600 (given 30)'],
    [{ replyDrainIntervalSeconds: 90 }, '(given 90)'],
    [{ replyDrainIntervalSeconds: 3660 }, '(given 3660)'],
    [{ replyDrainIntervalSeconds: -60 }, '(given -60)'],
    [{ replyDrainIntervalSeconds: [60] }, 'must have one value per reply partition (given 1 for 2)'],
    [{ replyDrainIntervalSeconds: 60, fifoReplies: true }, 'must be 0 with fifoReplies'],
    [
      { replyDrainIntervalSeconds: [0, 60], replyBatchingWindowSeconds: [5, 5] },
      'exclude each other on a partition (given 60 and 5 for partition 1)',
    ],
  ])('fails for %j, naming the value', (options, message) => {
    expect(() => describeTopology({ definitions, replyPartitions: 2, ...options })).toThrow(message);
  });

  it('GIVEN partition 1 drained every 2 minutes WHEN synthesized THEN it has a schedule naming it, and no event source', async () => {
    // GIVEN
    const { synthFanin } = await import('./infra/synth.ts');
    // WHEN
    const { template } = synthFanin({ replyPartitions: 2, replyDrainIntervalSeconds: [0, 120] });
    // THEN: one reply event source (partition 0's) ...
    const replySources = Object.values(template.findResources('AWS::Lambda::EventSourceMapping'))
      .map((m) => JSON.stringify((m.Properties as { EventSourceArn?: unknown }).EventSourceArn))
      .filter((arn) => arn.includes('Reply'));
    expect(replySources).toHaveLength(1);
    expect(replySources[0]).toContain('Reply0');
    // ... and one rule every 2 minutes whose constant input names partition 1 by index, no URL
    const rules = Object.values(template.findResources('AWS::Events::Rule')).filter(
      (r) => (r.Properties as { ScheduleExpression?: string }).ScheduleExpression === 'rate(2 minutes)',
    );
    expect(rules).toHaveLength(1);
    const targets =
      (rules[0]?.Properties as { Targets?: { Input: string; Arn: unknown }[] } | undefined)?.Targets ?? [];
    expect(JSON.parse(targets[0]?.Input ?? '{}')).toEqual({ drain: { partition: 1, batchSize: 1000 } });
    expect(JSON.stringify(targets[0]?.Arn)).toContain('Reply');
    // A failed drain is not retried by Lambda's asynchronous invocation: the next interval is the retry
    const replyInvokeConfigs = Object.values(template.findResources('AWS::Lambda::EventInvokeConfig'))
      .map((r) => r.Properties as { FunctionName?: unknown; MaximumRetryAttempts?: number })
      .filter((p) => JSON.stringify(p.FunctionName).includes('Reply'));
    expect(replyInvokeConfigs.map((p) => p.MaximumRetryAttempts)).toEqual([0]);
    // The reply function may receive and delete on the drained queue (no event source grants it)
    const statements = Object.values(template.findResources('AWS::IAM::Policy')).flatMap(
      (p) =>
        (p.Properties as { PolicyDocument: { Statement: { Action: unknown; Resource: unknown }[] } })
          .PolicyDocument.Statement,
    );
    const onReply1 = statements.filter((s) => JSON.stringify(s.Resource).includes('Reply1'));
    expect(onReply1.flatMap((s) => [s.Action].flat())).toEqual(
      expect.arrayContaining(['sqs:ReceiveMessage', 'sqs:DeleteMessage']),
    );
  }, 60_000);
});

describe('definitions that may time out within a drain interval', () => {
  it('GIVEN a 90 s deadline and partitions drained every minute WHEN synthesized THEN a warning names the definition, and only it', async () => {
    const { Annotations, Match } = await import('aws-cdk-lib/assertions');
    const { synthFanin } = await import('./infra/synth.ts');
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

  it('GIVEN no drained partition WHEN synthesized THEN no such warning', async () => {
    const { Annotations, Match } = await import('aws-cdk-lib/assertions');
    const { synthFanin } = await import('./infra/synth.ts');
    const { stack } = synthFanin({
      definitions: [{ name: 'quick-quote', completion: { strategy: 'all' }, timeoutSeconds: 5 }],
    });
    Annotations.fromStack(stack).hasNoWarning('/Test/Fanin', Match.stringLikeRegexp('drain interval'));
  }, 60_000);
});

describe('the reply function’s entry point', () => {
  it('tells a drain schedule’s event from an event source’s batch', async () => {
    const { isReplyDrainEvent } = await import('../../functions/handlers.ts');
    expect(isReplyDrainEvent({ drain: { partition: 0, batchSize: 1000 } })).toBe(true);
    // An event source's batch, even one that also carries a `drain` field, is a batch of records
    expect(isReplyDrainEvent({ Records: [] })).toBe(false);
    expect(isReplyDrainEvent({ Records: [], drain: { partition: 0, batchSize: 1 } })).toBe(false);
    expect(isReplyDrainEvent(null)).toBe(false);
    expect(isReplyDrainEvent('drain')).toBe(false);
  });
});
