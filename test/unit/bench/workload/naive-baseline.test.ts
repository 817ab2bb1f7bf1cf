/**
 * The naive baseline: one DynamoDB item per aggregate, every reply an update of it. Its store is driven
 * over a stand-in client; its runs over a stand-in store whose costs are the test's.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import { NaiveAggregateStore, runNaive, sampleNaive } from '../../../../bench/workload/naive-baseline.ts';

type Sent = { name: string; input: Record<string, unknown> };

/** A client that answers each command with `answer` and records what it was sent. */
function client(answer: (sent: Sent) => unknown = () => ({})) {
  const sent: Sent[] = [];
  const fake = {
    send: async (command: { constructor: { name: string }; input: Record<string, unknown> }) => {
      const s = { name: command.constructor.name, input: command.input };
      sent.push(s);
      const out = answer(s);
      if (out instanceof Error) throw out;
      return out;
    },
  } as unknown as DynamoDBClient;
  return { fake, sent };
}

describe("the naive baseline's store", () => {
  it('completes an aggregate on the reply that brings its count to the expected replies', async () => {
    let received = 0;
    const { fake, sent } = client((s) =>
      s.name === 'UpdateItemCommand' ? { Attributes: { received: { N: String(++received) } } } : {},
    );
    const store = new NaiveAggregateStore({ client: fake, tableName: 'naive' });
    await store.open('a', 2);
    expect(await store.record('a', '0', 'x')).toBe(false);
    expect(await store.record('a', '1', 'y')).toBe(true);
    expect(sent[0]?.input.ConditionExpression).toBe('attribute_not_exists(pk)');
    expect(sent[1]?.input.Key).toEqual({ pk: { S: 'N#a' }, sk: { S: 'A' } });
  });

  it('takes a reply already recorded, or an aggregate closed, as not completing it', async () => {
    const { fake } = client(
      () => new ConditionalCheckFailedException({ message: 'duplicate', $metadata: {} }),
    );
    const store = new NaiveAggregateStore({ client: fake, tableName: 'naive' });
    expect(await store.record('a', '0', 'x')).toBe(false);
  });

  it('stores a reply as fanin does: Brotli-compressed when that is smaller', async () => {
    const { fake, sent } = client(() => ({ Attributes: { received: { N: '1' } } }));
    const store = new NaiveAggregateStore({ client: fake, tableName: 'naive' });
    await store.record('a', '0', 'short');
    await store.record('a', '1', 'x'.repeat(2_000));
    const payloads = sent.map(
      (s) => (s.input.ExpressionAttributeValues as Record<string, object>)[':payload'],
    );
    expect(payloads[0]).toEqual({ S: 'short' });
    expect(payloads[1]).toHaveProperty('B');
  });

  it('completes by reading every reply and closing the item', async () => {
    const { fake, sent } = client((s) =>
      s.name === 'GetItemCommand' ? { Item: { replies: { M: { '0': { S: 'x' }, '1': { S: 'y' } } } } } : {},
    );
    const store = new NaiveAggregateStore({ client: fake, tableName: 'naive' });
    expect(await store.complete('a')).toBe(2);
    expect(sent.map((s) => s.name)).toEqual(['GetItemCommand', 'UpdateItemCommand']);
    expect(sent[1]?.input.UpdateExpression).toBe('SET #status = :closed REMOVE replies');
  });
});

/** A stand-in store: records what was done, completes an aggregate on its last reply. */
function fakeStore(unitsOfRecord: (replyId: number) => number = () => 1) {
  const calls: string[] = [];
  const expected = new Map<string, number>();
  const state = { units: 0, calls };
  const store = {
    open: async (id: string, n: number) => {
      calls.push(`open ${id}`);
      expected.set(id, n);
      state.units += 1;
    },
    prime: async (_: unknown, id: string, n: number, bodies: readonly string[]) => {
      calls.push(`prime ${id} ${bodies.length}`);
      expected.set(id, n);
    },
    record: async (id: string, replyId: string) => {
      calls.push(`record ${id} ${replyId}`);
      state.units += unitsOfRecord(Number(replyId));
      return Number(replyId) === (expected.get(id) ?? 0) - 1;
    },
    complete: async (id: string) => {
      calls.push(`complete ${id}`);
      state.units += 3;
      return 0;
    },
  } as unknown as NaiveAggregateStore;
  return { store, state };
}

describe('a naive baseline run', () => {
  it('opens every aggregate first, then records every reply and completes each aggregate once', async () => {
    const { store, state } = fakeStore();
    const run = await runNaive(store, {
      aggregates: [
        { id: 'a', fanOut: 2 },
        { id: 'b', fanOut: 1 },
      ],
      body: (a, r) => `${a}${r}`,
      concurrency: 1,
    });
    expect(state.calls).toEqual([
      'open a',
      'open b',
      'record a 0',
      'record a 1',
      'complete a',
      'record b 0',
      'complete b',
    ]);
    expect(run).toMatchObject({ replies: 3, completed: 2 });
  });

  it('samples a large fan-out at evenly spaced replies and interpolates the ones between', async () => {
    // Reply k costs 1, 2 and 4 units at k = 0, 2 and 4 (measured); k = 1 and 3 are interpolated: 1.5 and 3.
    const cost: Record<number, number> = { 0: 1, 2: 2, 4: 4 };
    const { store, state } = fakeStore((k) => cost[k] ?? 0);
    const sample = await sampleNaive(store, {} as DynamoDBClient, {
      aggregateId: 's',
      fanOut: 5,
      positions: 3,
      body: (_, r) => r,
      unitsSoFar: () => state.units,
    });
    expect(sample).toEqual({
      fanOut: 5,
      positions: 3,
      openUnits: 1,
      recordUnits: 1 + 1.5 + 2 + 3 + 4,
      completeUnits: 3,
    });
    expect(state.calls).toEqual([
      'open s-open',
      'prime s 0',
      'record s 0',
      'prime s 2',
      'record s 2',
      'prime s 4',
      'record s 4',
      'complete s',
    ]);
  });
});
