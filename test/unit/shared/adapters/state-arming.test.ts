import { describe, expect, it } from 'vitest';
import { openAggregate } from '../../../../shared/adapters/state-aggregates.ts';
import {
  ARMING_KEY,
  armedUntil,
  clearSnapshotDue,
  dueBetween,
  markArmedUntil,
  setSnapshotDue,
} from '../../../../shared/adapters/state-arming.ts';
import { aggregateKey, KEY_SEPARATOR } from '../../../../shared/adapters/state-keys.ts';
import { openHeader, T0, world } from './support.ts';

/**
 * The sweep's arming of timers entering the horizon: a window of the `due` index (complete up to
 * `next` when a shard held more than the limit), the arming watermark that only moves forward on
 * an item outside every aggregate's key, and the next-snapshot item replaced each period. The
 * module's own fast test over the DynamoDB model.
 */

const DAY_SECONDS = 86_400;

describe('dueBetween', () => {
  it('gives the entries due within the window, both ends included, and no next when none was cut', async () => {
    // Prepare: deadlines at T0 + 10, 20, 30, 40 s
    const w = world();
    for (const s of [10, 20, 30, 40])
      await openAggregate(w.table, openHeader(`a-${s}`, { deadline: T0 + s * 1000 }));

    // Act
    const window = await dueBetween(w.table, T0 + 20_000, T0 + 30_000, 100);

    // Assess
    expect(window.next).toBeUndefined();
    expect(window.items.map((i) => i.aggregateId).sort()).toEqual(['a-20', 'a-30']);
  });

  it('when a shard holds more than the limit, gives only items due before next, and next is within the window', async () => {
    // Prepare: 200 deadlines a millisecond apart (so some shard holds more than 3)
    const w = world();
    for (let i = 0; i < 200; i += 1)
      await openAggregate(w.table, openHeader(`a-${i}`, { deadline: T0 + 1000 + i }));

    // Act
    const window = await dueBetween(w.table, T0, T0 + 10_000, 3);

    // Assess
    expect(window.next).toBeDefined();
    const next = window.next as number;
    expect(next).toBeGreaterThan(T0);
    expect(next).toBeLessThanOrEqual(T0 + 10_000);
    for (const item of window.items) expect(item.dueAt).toBeLessThan(next);
    // Nothing before next is left out: every deadline before it is among the items.
    const before = Array.from({ length: 200 }, (_, i) => T0 + 1000 + i).filter((t) => t < next);
    expect(window.items.map((i) => i.dueAt).sort((a, b) => a - b)).toEqual(before);
  });

  it('moves on by a millisecond when more than the limit are due at the very start of the window', async () => {
    // Prepare: 40 deadlines at the same millisecond
    const w = world();
    for (let i = 0; i < 40; i += 1)
      await openAggregate(w.table, openHeader(`a-${i}`, { deadline: T0 + 5000 }));

    // Act
    const window = await dueBetween(w.table, T0 + 5000, T0 + 9000, 2);

    // Assess
    expect(window.next).toBe(T0 + 5001);
    expect(window.items.length).toBeGreaterThan(0);
  });
});

describe('the arming watermark', () => {
  it('is absent until marked, then only moves forward', async () => {
    // Prepare
    const w = world();
    const before = await armedUntil(w.table);

    // Act
    await markArmedUntil(w.table, T0 + 60_000, T0);
    await markArmedUntil(w.table, T0 + 30_000, T0 + 1000);
    const after = await armedUntil(w.table);

    // Assess
    expect(before).toBeUndefined();
    expect(after).toBe(T0 + 60_000);
  });

  it('lives on an item of no aggregate (the separator follows the empty id), out of the due index, with a 30-day TTL', async () => {
    // Prepare
    const w = world();

    // Act
    await markArmedUntil(w.table, T0 + 60_000, T0);

    // Assess
    const [item] = w.items();
    expect(ARMING_KEY.pk).toBe(`${aggregateKey('')}${KEY_SEPARATOR}arming`);
    expect(item).toMatchObject({ pk: ARMING_KEY.pk, sk: ARMING_KEY.sk, armedUntil: T0 + 60_000 });
    expect(item?.expiresAt).toBe(T0 / 1000 + 30 * DAY_SECONDS);
    expect(item?.dueAt).toBeUndefined();
    expect(await dueBetween(w.table, 0, Number.MAX_SAFE_INTEGER, 10)).toEqual({ items: [] });
  });
});

describe('the next-snapshot item', () => {
  it('is in the due index at its time as a snapshot, with a TTL 30 days after it', async () => {
    // Prepare
    const w = world();

    // Act
    await setSnapshotDue(w.table, 'a-1', T0 + 3_600_000);

    // Assess
    const window = await dueBetween(w.table, T0, T0 + 7_200_000, 10);
    expect(window.items).toEqual([{ kind: 'snapshot', aggregateId: 'a-1', dueAt: T0 + 3_600_000 }]);
    const [item] = w.items();
    expect(item?.pk).toBe(aggregateKey('a-1'));
    expect(item?.expiresAt).toBe((T0 + 3_600_000) / 1000 + 30 * DAY_SECONDS);
  });

  it('is replaced by a later period, and a clear of the earlier period leaves the later one', async () => {
    // Prepare
    const w = world();
    await setSnapshotDue(w.table, 'a-1', T0 + 1000);
    await setSnapshotDue(w.table, 'a-1', T0 + 2000);

    // Act
    await clearSnapshotDue(w.table, 'a-1', T0 + 1000);
    const kept = w.items().length;
    await clearSnapshotDue(w.table, 'a-1', T0 + 2000);

    // Assess
    expect(kept).toBe(1);
    expect(w.items()).toEqual([]);
  });
});
