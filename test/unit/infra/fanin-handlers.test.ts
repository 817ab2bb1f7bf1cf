import { describe, expect, it } from 'vitest';
import { synthFanin } from './synth.ts';

/**
 * The reply consumers as the stack builds them (infra/fanin-handlers.ts): each partition's event
 * source takes its own batching window, concurrency and batch size, and a partition drained on a
 * schedule gets a rule instead of an event source.
 */

describe('reply batching window in the stack', () => {
  it('GIVEN a window per partition WHEN synthesized THEN each reply event source has its own', () => {
    // GIVEN
    // WHEN
    const { template } = synthFanin({ replyPartitions: 2, replyBatchingWindowSeconds: [0, 4] });
    // THEN (mutant killed: every partition given partition 0's window)
    const windows = Object.values(template.findResources('AWS::Lambda::EventSourceMapping'))
      .map((m) => m.Properties as { EventSourceArn?: unknown; MaximumBatchingWindowInSeconds?: number })
      .filter((p) => JSON.stringify(p.EventSourceArn).includes('Reply'))
      .map((p) => p.MaximumBatchingWindowInSeconds ?? 0)
      .sort();
    expect(windows).toEqual([0, 4]);
  });
});

describe('reply consumer concurrency in the stack', () => {
  it('reaches the stack: each partition event source gets its own maximum concurrency', () => {
    const { template } = synthFanin({ replyPartitions: 2, replyConcurrency: [40, 5] });
    const concurrencies = Object.values(template.findResources('AWS::Lambda::EventSourceMapping'))
      .map(
        (r) =>
          (r as { Properties: { ScalingConfig?: { MaximumConcurrency?: number } } }).Properties.ScalingConfig
            ?.MaximumConcurrency,
      )
      .filter((c) => c !== undefined);
    expect(concurrencies).toContain(40);
    expect(concurrencies.filter((c) => c === 5).length).toBeGreaterThanOrEqual(1);
  }, 60_000);
});

describe('reply batch size in the stack', () => {
  it('GIVEN a batch size per partition WHEN synthesized THEN each reply event source takes its own', () => {
    // GIVEN
    // WHEN
    const { template } = synthFanin({
      replyPartitions: 2,
      replyBatchingWindowSeconds: [0, 3],
      replyBatchSize: [10, 1000],
    });
    // THEN
    const sizes = Object.values(template.findResources('AWS::Lambda::EventSourceMapping'))
      .map((m) => m.Properties as { EventSourceArn?: unknown; BatchSize?: number })
      .filter((p) => JSON.stringify(p.EventSourceArn).includes('Reply'))
      .map((p) => p.BatchSize ?? 10)
      .sort((a, b) => a - b);
    expect(sizes).toEqual([10, 1000]);
  });
});

describe('reply drain interval in the stack', () => {
  it('GIVEN partition 1 drained every 2 minutes WHEN synthesized THEN it has a schedule naming it, and no event source', () => {
    // GIVEN
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
