import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { aggregateKey, dueShard } from '../../../shared/adapters/dynamo-state-store.ts';
import type { StateStore } from '../../../shared/ports.ts';
import { sweep } from '../../../shared/use-cases/timers.ts';
import { FaninUnderTest } from '../../support/fanin.ts';

/**
 * Issue 11, item 11: a due item that always fails must not starve the items behind it in its own
 * shard. Here the sweep's share of the shard is one item, and the poison item is the earliest.
 */
describe('the sweeper and a poison due item', () => {
  let fanin: FaninUnderTest;

  beforeAll(async () => {
    fanin = await FaninUnderTest.start([
      { name: 'due', fanOut: { type: 'none' }, completion: { strategy: 'all' }, timeoutSeconds: 60 },
    ]);
  });
  afterAll(() => fanin.stop());

  it('is moved back in its shard, so the next sweep reaches the healthy item behind it', async () => {
    // Prepare: two aggregates in the same `due` shard, the poison one due first
    const poison = 'poison-0';
    let healthy = '';
    for (let i = 0; healthy === ''; i += 1) {
      const candidate = `healthy-${i}`;
      if (dueShard(aggregateKey(candidate)) === dueShard(aggregateKey(poison))) healthy = candidate;
    }
    await fanin.sendRequest({ definition: 'due', aggregateId: poison, expected: 1 });
    await fanin.drain();
    fanin.clock.advance(1_000);
    await fanin.sendRequest({ definition: 'due', aggregateId: healthy, expected: 1 });
    await fanin.drain();
    fanin.clock.advance(120_000);
    const failing = new Proxy(fanin.ctx.store, {
      get(target, property, receiver) {
        const value = Reflect.get(target, property, receiver);
        if (property !== 'getHeader' || typeof value !== 'function') return value;
        return (id: string) =>
          id === poison
            ? Promise.reject(new Error('poison'))
            : (value as StateStore['getHeader']).call(target, id);
      },
    });
    const ctx = { ...fanin.ctx, store: failing };

    // Act: two sweeps that each take one item of each shard (limit 8 over 8 shards)
    for (let round = 0; round < 2; round += 1) await sweep(ctx, 8).catch(() => undefined);
    await fanin.drain();

    // Assess (mutant killed: the failed item is not deferred — it is the earliest of its shard
    // in every sweep, and the healthy one is never reached)
    fanin.expectExactlyOneTerminalOutput(healthy);
    fanin.expectNoTerminalOutput(poison);
    expect(fanin.alarms('due-item-failed').length).toBeGreaterThan(0);
  });
});
