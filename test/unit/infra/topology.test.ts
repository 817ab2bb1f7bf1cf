import { describe, expect, it } from 'vitest';
import { describeTopology, QueueRole } from '../../../shared/topology/topology.ts';

/** What the stack takes from the topology: derived visibility timeouts, FIFO limits, the table. */
describe('topology for the stack', () => {
  const definitions = [{ name: 'd', completion: { strategy: 'all' as const } }];

  it('derives each consumed queue visibility timeout from the handler timeout (6 x timeout + batching window)', () => {
    // GIVEN a 20 s handler timeout WHEN the topology is described
    const topology = describeTopology({ definitions, functionTimeoutSeconds: 20 });
    // THEN
    expect(topology.functionTimeoutSeconds).toBe(20);
    expect(topology.queues[QueueRole.INGRESS].visibilityTimeoutSeconds).toBe(120);
    expect(topology.queues[QueueRole.CONTROL].visibilityTimeoutSeconds).toBe(120);
    expect(topology.queues[QueueRole.TIMER].visibilityTimeoutSeconds).toBe(120);
    for (const partition of topology.replyPartitions) expect(partition.visibilityTimeoutSeconds).toBe(120);
    // Output queues are read by the user, not by a fanin handler.
    expect(topology.queues[QueueRole.COMPLETED].visibilityTimeoutSeconds).toBe(60);
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
