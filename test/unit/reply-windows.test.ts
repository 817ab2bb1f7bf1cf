import { describe, expect, it } from 'vitest';
import { describeTopology } from '../../shared/topology/topology.ts';

/**
 * The reply consumers' batching window: with independent responders a window holds the last
 * reply of an aggregate until it runs out, so completion waits for it (issue "Cost at the floor").
 */
describe('reply batching window', () => {
  const definitions = [{ name: 'd', completion: { strategy: 'all' as const } }];

  it('is 0 by default, so the last reply of an aggregate is handled as soon as it arrives', () => {
    // Act
    const topology = describeTopology({ definitions, replyPartitions: 3 });

    // Assess (mutant killed: the former 1 s default)
    expect(topology.replyConsumers.map((c) => c.maxBatchingWindowSeconds)).toEqual([0, 0, 0]);
    expect(topology.consumers.reply.maxBatchingWindowSeconds).toBe(0);
  });

  it('is set per partition, and each partition visibility timeout follows its own window', () => {
    // Act
    const topology = describeTopology({
      definitions,
      replyPartitions: 2,
      functionTimeoutSeconds: 20,
      replyBatchingWindowSeconds: [0, 5],
    });

    // Assess
    expect(topology.replyConsumers.map((c) => c.maxBatchingWindowSeconds)).toEqual([0, 5]);
    expect(topology.replyPartitions.map((p) => p.visibilityTimeoutSeconds)).toEqual([130, 135]); // 20 s + a 110 s lease, plus each window
  });

  it('applies one value to every partition', () => {
    const topology = describeTopology({ definitions, replyPartitions: 2, replyBatchingWindowSeconds: 2 });
    expect(topology.replyConsumers.map((c) => c.maxBatchingWindowSeconds)).toEqual([2, 2]);
  });

  it.each([
    [{ replyBatchingWindowSeconds: [1] }, 'must have one value per reply partition (given 1 for 2)'],
    [{ replyBatchingWindowSeconds: 301 }, 'between 0 and 300 inclusive (given 301)'],
    [{ replyBatchingWindowSeconds: 0.5 }, '(given 0.5)'],
    [{ replyBatchingWindowSeconds: 1, fifoReplies: true }, 'must be 0 with fifoReplies'],
  ])('fails for %j', (options, message) => {
    expect(() => describeTopology({ definitions, replyPartitions: 2, ...options })).toThrow(message);
  });
});

describe('reply batching window in the stack', () => {
  it('GIVEN a window per partition WHEN synthesized THEN each reply event source has its own', async () => {
    // GIVEN
    const { synthFanin } = await import('./infra/synth.ts');
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

describe('reply consumer concurrency', () => {
  const definitions = [{ name: 'd', completion: { strategy: 'all' as const } }];

  it('is 5 per partition unless configured, one value or one per partition', () => {
    expect(describeTopology({ definitions }).replyConsumers.map((c) => c.maxConcurrency)).toEqual([5, 5]);
    expect(
      describeTopology({ definitions, replyConcurrency: 25 }).replyConsumers.map((c) => c.maxConcurrency),
    ).toEqual([25, 25]);
    const mixed = describeTopology({ definitions, replyPartitions: 2, replyConcurrency: [40, 5] });
    expect(mixed.replyConsumers.map((c) => c.maxConcurrency)).toEqual([40, 5]);
    // the window and the concurrency of a partition are set independently
    expect(mixed.replyConsumers.map((c) => c.maxBatchingWindowSeconds)).toEqual([0, 0]);
  });

  it('refuses what Lambda refuses, naming the value (below 2, above 1000, not one per partition)', () => {
    expect(() => describeTopology({ definitions, replyConcurrency: 1 })).toThrow(
      /between 2 and 1000.*given 1\)/,
    );
    expect(() => describeTopology({ definitions, replyConcurrency: 1001 })).toThrow(/given 1001/);
    expect(() => describeTopology({ definitions, replyConcurrency: [5] })).toThrow(
      /one value per reply partition/,
    );
  });

  it('reaches the stack: each partition event source gets its own maximum concurrency', async () => {
    const { synthFanin } = await import('./infra/synth.ts');
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

describe('reply batch size', () => {
  const definitions = [{ name: 'd', completion: { strategy: 'all' as const } }];

  it('is 10 per partition unless configured; above 10 with a window, one value or one per partition', () => {
    expect(describeTopology({ definitions }).replyConsumers.map((c) => c.batchSize)).toEqual([10, 10]);
    const mixed = describeTopology({
      definitions,
      replyPartitions: 2,
      replyBatchingWindowSeconds: [0, 2],
      replyBatchSize: [10, 500],
    });
    // Mutant killed: every partition given partition 0's batch size.
    expect(mixed.replyConsumers.map((c) => c.batchSize)).toEqual([10, 500]);
    expect(
      describeTopology({
        definitions,
        replyBatchingWindowSeconds: 1,
        replyBatchSize: 100,
      }).replyConsumers.map((c) => c.batchSize),
    ).toEqual([100, 100]);
  });

  it.each([
    [{ replyBatchSize: 0 }, 'between 1 and 10000 inclusive (given 0)'],
    [{ replyBatchSize: 10_001, replyBatchingWindowSeconds: 1 }, '(given 10001)'],
    [{ replyBatchSize: [10] }, 'must have one value per reply partition (given 1 for 2)'],
    // Lambda refuses a batch size above 10 without a window of at least 1 s, and for FIFO sources.
    [
      { replyBatchSize: 11 },
      'needs a replyBatchingWindowSeconds of at least 1, or a replyDrainIntervalSeconds, for its partition (given 11 for partition 0',
    ],
    [
      { replyBatchSize: [10, 50], replyBatchingWindowSeconds: [1, 0] },
      'given 50 for partition 1, whose window is 0',
    ],
    [{ replyBatchSize: 20, fifoReplies: true }, 'at most 10 with fifoReplies'],
  ])('fails for %j, naming the value', (options, message) => {
    expect(() => describeTopology({ definitions, replyPartitions: 2, ...options })).toThrow(message);
  });

  it('GIVEN a batch size per partition WHEN synthesized THEN each reply event source takes its own', async () => {
    // GIVEN
    const { synthFanin } = await import('./infra/synth.ts');
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
