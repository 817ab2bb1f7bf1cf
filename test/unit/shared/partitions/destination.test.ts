import { describe, expect, it } from 'vitest';
import { NoPartitionAvailableError } from '../../../../shared/errors.ts';
import { PartitionedDestination } from '../../../../shared/partitions/destination.ts';
import { affinityOrder } from '../../../../shared/partitions/routing.ts';
import {
  MemoryPartitionQueues,
  MemoryPartitionRegistry,
  memoryPartitions,
  partitionUrl,
} from '../../../support/memory-partitions.ts';

/**
 * The partitioned destination over the in-memory ports (test/support/memory-partitions.ts):
 * availability, routing, the shared and cached read of states and depths, sends that fail over,
 * batches routed before they are sent, the gathering reader. Against the emulator:
 * test/integration/features/partitions.test.ts.
 */
describe('partitioned destination over in-memory queues', () => {
  it('routings made at once with a cold cache share one read of the registry and of each partition depth', async () => {
    // Prepare
    const { destination, queues, registry } = memoryPartitions(3);

    // Act
    await Promise.all(
      Array.from({ length: 10 }, (_, i) => destination.choose({ kind: 'affinity', key: `cold-${i}` })),
    );

    // Assess
    expect(registry.loads).toBe(1);
    expect(queues.calls).toEqual([0, 1, 2].map((i) => `depth ${partitionUrl(i)}`));
  });

  it('reuses a read for cacheMs, reads again after it, at once when asked for a fresh one or after setEnabled', async () => {
    // Prepare
    const { destination, registry, now } = memoryPartitions(2, { destination: { cacheMs: 2_000 } });
    await destination.status();

    // Act
    now.at += 1_999;
    await destination.status();
    const cached = registry.loads;
    now.at += 1;
    await destination.status();
    const expired = registry.loads;
    await destination.status(true);
    const fresh = registry.loads;
    await destination.setEnabled(1, false);
    const afterDisable = await destination.status();

    // Assess
    expect([cached, expired, fresh]).toEqual([1, 2, 3]);
    expect(afterDisable.map((s) => s.available)).toEqual([true, false]);
  });

  it('says why each partition is unavailable, and the error of a send that finds none says it for each', async () => {
    // Prepare: 0 at its threshold, 1 disabled, 2 unreachable, 3 disabled and unreachable
    const { destination, queues } = memoryPartitions(4, { destination: { highThreshold: 5 } });
    queues.put(partitionUrl(0), 5);
    await destination.setEnabled(1, false);
    await destination.setEnabled(3, false);
    queues.unreachable.add(partitionUrl(2));
    queues.unreachable.add(partitionUrl(3));

    // Act
    const statuses = await destination.status(true);
    const failure = await destination.send({ body: '{}' }, { kind: 'balanced' }).catch((e: unknown) => e);

    // Assess
    expect(statuses).toMatchObject([
      { index: 0, available: false, reason: 'at-high-threshold', depth: 5, visible: 5, inFlight: 0 },
      { index: 1, available: false, reason: 'send-disabled', enabled: false, depth: 0 },
      { index: 2, available: false, reason: 'unreachable', detail: `${partitionUrl(2)} is unreachable` },
      { index: 3, available: false, reason: 'send-disabled', detail: `${partitionUrl(3)} is unreachable` },
    ]);
    expect(statuses[2]?.depth).toBeUndefined();
    expect(failure).toBeInstanceOf(NoPartitionAvailableError);
    expect((failure as NoPartitionAvailableError).partitions).toEqual([
      { index: 0, reason: 'at-high-threshold' },
      { index: 1, reason: 'send-disabled' },
      { index: 2, reason: 'unreachable', detail: `${partitionUrl(2)} is unreachable` },
      { index: 3, reason: 'send-disabled', detail: `${partitionUrl(3)} is unreachable` },
    ]);
    expect(queues.calls.filter((c) => c.startsWith('send'))).toEqual([]);
  });

  it('affinity: a key keeps its partition while it is available, moves when it is disabled, and comes back', async () => {
    // Prepare
    const { destination } = memoryPartitions(3);
    const [home, second] = affinityOrder('agg-1', [0, 1, 2]);

    // Act
    const first = await destination.choose({ kind: 'affinity', key: 'agg-1' });
    await destination.setEnabled(home ?? -1, false);
    const moved = await destination.choose({ kind: 'affinity', key: 'agg-1' });
    await destination.setEnabled(home ?? -1, true);
    const back = await destination.choose({ kind: 'affinity', key: 'agg-1' });

    // Assess
    expect([first.index, moved.index, back.index]).toEqual([home, second, home]);
  });

  it('balanced picks the least deep partition; prefer-local its own while it is available', async () => {
    // Prepare
    const { destination, queues } = memoryPartitions(3);
    queues.put(partitionUrl(0), 3);
    queues.put(partitionUrl(1), 1);
    queues.put(partitionUrl(2), 2);

    // Act
    const balanced = await destination.choose({ kind: 'balanced' });
    const local = await destination.choose({ kind: 'prefer-local', local: 2 });
    await destination.setEnabled(2, false);
    const elsewhere = await destination.choose({ kind: 'prefer-local', local: 2 });

    // Assess
    expect([balanced.index, local.index, elsewhere.index]).toEqual([1, 2, 1]);
  });

  it('a send that fails goes to the next available partition; when every send fails, the error says why for each', async () => {
    // Prepare
    const { destination, queues } = memoryPartitions(2);
    queues.refusing.add(partitionUrl(0));

    // Act
    const sent = await destination.send({ body: '{"a":1}' }, { kind: 'prefer-local', local: 0 });
    queues.refusing.add(partitionUrl(1));
    const failure = await destination
      .send({ body: '{"a":2}' }, { kind: 'prefer-local', local: 0 })
      .catch((e: unknown) => e);

    // Assess
    expect(sent).toEqual({ partition: 1, messageId: queues.visible(partitionUrl(1))[0]?.messageId });
    expect((failure as NoPartitionAvailableError).partitions).toEqual([
      {
        index: 0,
        reason: 'unreachable',
        detail: `send to ${partitionUrl(0)} failed: ${partitionUrl(0)} refused the send`,
      },
      {
        index: 1,
        reason: 'unreachable',
        detail: `send to ${partitionUrl(1)} failed: ${partitionUrl(1)} refused the send`,
      },
    ]);
    expect(queues.depthOf(partitionUrl(0)) + queues.depthOf(partitionUrl(1))).toBe(1);
  });

  it('a batch is routed before anything is sent: one send per partition, and nothing when one message cannot be routed', async () => {
    // Prepare
    const { destination, queues } = memoryPartitions(2);

    // Act
    const routed = await destination.sendBatch([
      { message: { body: 'a' }, policy: { kind: 'prefer-local', local: 0 } },
      { message: { body: 'b' }, policy: { kind: 'prefer-local', local: 1 } },
      { message: { body: 'c' }, policy: { kind: 'prefer-local', local: 0 } },
    ]);
    const sends = queues.calls.filter((c) => c.startsWith('send'));
    await destination.setEnabled(1, false);
    const none = await destination
      .sendBatch([
        { message: { body: 'd' }, policy: { kind: 'prefer-local', local: 0 } },
        { message: { body: 'e' }, policy: { kind: 'prefer-local', local: 1 } },
      ])
      .then(() => undefined)
      .catch((e: unknown) => e);
    await destination.setEnabled(0, false);
    const failure = await destination
      .sendBatch([
        { message: { body: 'f' }, policy: { kind: 'prefer-local', local: 0 } },
        { message: { body: 'g' }, policy: { kind: 'balanced' } },
      ])
      .catch((e: unknown) => e);

    // Assess: a disabled partition's messages go to another; with none available, nothing is sent
    expect(routed).toEqual([0, 1, 0]);
    expect(sends).toEqual([`sendBatch ${partitionUrl(0)}`, `sendBatch ${partitionUrl(1)}`]);
    expect(queues.visible(partitionUrl(0)).map((m) => m.body)).toEqual(['a', 'c', 'd', 'e']);
    expect(none).toBeUndefined();
    expect(failure).toBeInstanceOf(NoPartitionAvailableError);
    expect(queues.depthOf(partitionUrl(0)) + queues.depthOf(partitionUrl(1))).toBe(5);
  });

  it('gather reads up to max messages across the partitions, each with its partition, and leaves them there', async () => {
    // Prepare
    const { destination, queues } = memoryPartitions(3);
    queues.put(partitionUrl(0), ['a', 'b']);
    queues.put(partitionUrl(2), ['c', 'd', 'e']);

    // Act
    const all = await destination.gather();
    const three = await destination.gather(3);

    // Assess
    expect(all.map((m) => [m.partition, m.Body])).toEqual([
      [0, 'a'],
      [0, 'b'],
      [2, 'c'],
      [2, 'd'],
      [2, 'e'],
    ]);
    expect(three.map((m) => m.Body)).toEqual(['a', 'b', 'c']);
    expect(queues.depthOf(partitionUrl(0)) + queues.depthOf(partitionUrl(2))).toBe(5);
  });

  it('refuses a destination without partitions, and setEnabled of a partition it does not have', async () => {
    // Prepare
    const { destination } = memoryPartitions(2);
    const build = () =>
      new PartitionedDestination({
        name: 'empty',
        partitions: [],
        queues: new MemoryPartitionQueues(),
        registry: new MemoryPartitionRegistry(),
      });

    // Act
    const missing = await destination.setEnabled(2, false).catch((e: unknown) => e);

    // Assess
    expect(build).toThrow('destination empty has no partitions');
    expect((missing as Error).message).toBe('destination replies has no partition 2 (it has 2)');
  });
});
