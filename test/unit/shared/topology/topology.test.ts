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
