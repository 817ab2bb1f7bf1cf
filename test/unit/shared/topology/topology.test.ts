import { describe, expect, it } from 'vitest';
import { describeTopology, QueueRole } from '../../../../shared/topology/topology.ts';

/** What the stack takes from the topology: derived visibility timeouts, FIFO limits, the table. */
describe('topology for the stack', () => {
  const definitions = [{ name: 'd', completion: { strategy: 'all' as const } }];

  it('keeps each consumed queue message invisible past the handler timeout and the completion lease it may take', () => {
    // GIVEN a 20 s handler timeout (lease 20 + 90 s) WHEN the topology is described
    const topology = describeTopology({ definitions, functionTimeoutSeconds: 20 });
    // THEN a message comes back only after the invocation and its lease have both run out
    // (mutant killed: the former 6 x timeout, 120 s, under the 130 s a crashed completer's lease
    // can last: its redelivery would find the lease live and leave the aggregate to its deadline)
    expect(topology.functionTimeoutSeconds).toBe(20);
    expect(topology.completionLeaseSeconds).toBe(110);
    expect(topology.queues[QueueRole.INGRESS].visibilityTimeoutSeconds).toBe(130);
    expect(topology.queues[QueueRole.CONTROL].visibilityTimeoutSeconds).toBe(130);
    expect(topology.queues[QueueRole.TIMER].visibilityTimeoutSeconds).toBe(130);
    for (const partition of topology.replyPartitions) expect(partition.visibilityTimeoutSeconds).toBe(130);
    // Output queues are read by the user, not by a fanin handler.
    expect(topology.queues[QueueRole.COMPLETED].visibilityTimeoutSeconds).toBe(60);
  });

  it('keeps six handler timeouts (AWS guidance for Lambda sources) when that is longer', () => {
    const topology = describeTopology({ definitions, functionTimeoutSeconds: 60 });
    expect(topology.queues[QueueRole.INGRESS].visibilityTimeoutSeconds).toBe(360);
    for (const partition of topology.replyPartitions) expect(partition.visibilityTimeoutSeconds).toBe(360);
  });

  it('defaults to a 30 s handler timeout', () => {
    const topology = describeTopology({ definitions });
    expect(topology.functionTimeoutSeconds).toBe(30);
    expect(topology.queues[QueueRole.INGRESS].visibilityTimeoutSeconds).toBe(180);
  });

  it('drops the reply batching window on FIFO partitions (Lambda has none for FIFO sources)', () => {
    const topology = describeTopology({ definitions, fifoReplies: true });
    expect(topology.consumers.reply.maxBatchingWindowSeconds).toBe(0);
    expect(topology.replyPartitions[0]?.name).toBe('fanin-reply-0.fifo');
    expect(topology.replyPartitions[0]?.visibilityTimeoutSeconds).toBe(180);
  });

  it.each([0, 901, 2.5])('fails if functionTimeoutSeconds is %s', (value) => {
    expect(() => describeTopology({ definitions, functionTimeoutSeconds: value })).toThrow(
      `functionTimeoutSeconds must be an integer between 1 and 900 inclusive (given ${value})`,
    );
  });

  it('describes the state table: keys, TTL and its one index', () => {
    const { table, tableName } = describeTopology({ definitions, prefix: 'shop' });
    expect(table.name).toBe(tableName);
    expect(table).toEqual({
      name: 'shop-state',
      partitionKey: { name: 'pk', type: 'S' },
      sortKey: { name: 'sk', type: 'S' },
      ttlAttribute: 'expiresAt',
      indexes: [
        {
          name: 'due',
          partitionKey: { name: 'dueShard', type: 'S' },
          sortKey: { name: 'dueAt', type: 'N' },
          projection: 'KEYS_ONLY',
        },
      ],
    });
  });
});

/** The reply consumers' batching window, concurrency, batch size and drain interval, as the topology takes and checks them. */
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
});

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
});
