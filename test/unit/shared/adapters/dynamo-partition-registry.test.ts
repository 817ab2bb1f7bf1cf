import { describe, expect, it } from 'vitest';
import { DynamoPartitionRegistry } from '../../../../shared/adapters/dynamo-partition-registry.ts';
import { world } from './support.ts';

/**
 * Partition state in the state table, under the destination's own key (`PD#<destination>`): a
 * partition is enabled until disabled, its cycle's depth and progress kept, and the distributor's
 * settings written by an update (its role has no PutItem). The module's own test over the
 * DynamoDB model.
 */

function setup() {
  const w = world();
  return {
    w,
    registry: new DynamoPartitionRegistry({ client: w.clients.dynamo, tableName: w.table.tableName }),
  };
}

const settings = {
  highThreshold: 100,
  highWatermark: 80,
  lowWatermark: 20,
  stallSeconds: 60,
  distributorIntervalSeconds: 10,
  recordedAt: 1_700_000_000_000,
};

describe('DynamoPartitionRegistry', () => {
  it('loads nothing for a destination never recorded', async () => {
    // Act / Assess
    const { registry } = setup();
    expect((await registry.load('replies')).size).toBe(0);
    expect(await registry.loadSettings('replies')).toBeUndefined();
  });

  it('keeps each partition’s enabled flag and last cycle, per destination', async () => {
    // Prepare
    const { registry } = setup();

    // Act
    await registry.setEnabled('replies', 2, false);
    await registry.recordCycle('replies', 2, 40, 1234);
    await registry.recordCycle('replies', 0, 5, 99);
    await registry.setEnabled('other', 2, true);

    // Assess
    const states = await registry.load('replies');
    expect(states.get(2)).toEqual({ index: 2, enabled: false, lastDepth: 40, lastProgressAt: 1234 });
    expect(states.get(0)).toEqual({ index: 0, enabled: true, lastDepth: 5, lastProgressAt: 99 });
    expect([...(await registry.load('other')).values()]).toEqual([{ index: 2, enabled: true }]);
  });

  it('records the settings by an update, reads them back, and never takes them for a partition', async () => {
    // Prepare
    const { w, registry } = setup();

    // Act
    await registry.recordSettings('replies', settings);

    // Assess
    expect(await registry.loadSettings('replies')).toEqual(settings);
    expect((await registry.load('replies')).size).toBe(0);
    expect(w.calls.some((c) => c.command === 'PutCommand')).toBe(false);
    expect(w.items().map((i) => [i.pk, i.sk])).toEqual([['PD#replies', 'S']]);
  });
});
