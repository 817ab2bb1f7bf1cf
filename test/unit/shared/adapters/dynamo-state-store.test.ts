import { describe, expect, it } from 'vitest';
import { DynamoStateStore } from '../../../../shared/adapters/dynamo-state-store.ts';
import { openHeader, T0, world } from './support.ts';

/**
 * The DynamoDB state store is a facade: it holds the table and delegates each port method to the
 * functions of state-aggregates, state-completion, state-held, state-due, state-arming,
 * state-counters, state-parameters and state-history, whose own tests pin each contract. This
 * test drives one aggregate's whole life through the facade over the DynamoDB model, so a method
 * wired to the wrong function, or the wrong table or index, shows.
 */

const TTL = Math.floor(T0 / 1000) + 86_400;

describe('DynamoStateStore', () => {
  it('opens, records, seals, lists and closes an aggregate through the port, on the table and index it was given', async () => {
    // Prepare
    const w = world();
    const store = new DynamoStateStore({
      client: w.clients.dynamo,
      tableName: w.table.tableName,
      dueIndex: w.table.dueIndex,
    });

    // Act
    const opened = await store.openAggregate(openHeader('a-1'));
    const fates = await store.putReplies('a-1', [
      { replyId: '0', payload: '{}', receivedAt: T0, expiresAt: TTL },
      { replyId: '1', payload: '{}', receivedAt: T0, expiresAt: TTL },
    ]);
    const listed = await store.listActive('orders');
    const due = await store.dueItems(T0 + 60_000, 10);
    const sealed = await store.seal('a-1', {
      outcome: 'completed',
      members: ['0', '1'],
      at: T0,
      lease: 'l',
      leaseUntil: T0 + 9,
    });
    const secondSeal = await store.seal('a-1', {
      outcome: 'timed-out',
      members: [],
      at: T0,
      lease: 'm',
      leaseUntil: T0 + 9,
    });
    const closed = await store.close('a-1', 'l', TTL);
    const history = await store.readHistory('a-1');

    // Assess
    expect(opened.created).toBe(true);
    expect(fates).toEqual(['recorded', 'recorded']);
    expect(listed.map((h) => [h.aggregateId, h.received])).toEqual([['a-1', 2]]);
    expect(due).toEqual([{ kind: 'aggregate', aggregateId: 'a-1', dueAt: T0 + 60_000 }]);
    expect(sealed?.members).toEqual(['0', '1']);
    expect(secondSeal).toBeUndefined();
    expect(closed).toBe(true);
    expect(history.header?.status).toBe('closed');
    expect(history.copies).toHaveLength(2);
  });

  it('keeps held replies, parameters, counters and the arming watermark through the port', async () => {
    // Prepare
    const w = world();
    const store = new DynamoStateStore({ client: w.clients.dynamo, tableName: w.table.tableName });

    // Act
    await store.holdReply({
      aggregateId: 'a-1',
      replyId: 'r',
      definition: 'orders',
      body: '{}',
      attributes: {},
      messageId: 'm',
      receivedAt: T0,
      dueAt: T0 + 1,
    });
    const claimed = await store.claimHeld('a-1', 'r', 'unknown');
    await store.setParameters('orders', { timeoutSeconds: 5 });
    const total = await store.addToCounter('a-1', 4, TTL);
    await store.markArmedUntil(T0 + 5, T0);

    // Assess
    expect(DynamoStateStore.DUE_SHARDS).toBe(8);
    expect(claimed).toBe(true);
    expect((await store.listHeld('a-1')).map((h) => h.claimed)).toEqual(['unknown']);
    expect(await store.getParameters('orders')).toEqual({ timeoutSeconds: 5 });
    expect(total).toBe(4);
    expect(await store.armedUntil()).toBe(T0 + 5);
  });
});
