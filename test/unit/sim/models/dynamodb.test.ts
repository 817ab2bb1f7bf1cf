import { describe, expect, it } from 'vitest';
import type { DynamoDbModel } from '../../../../sim/models/index.ts';
import { dynamo, T0, TABLE, world } from './fixtures.ts';

/**
 * The DynamoDB model's own fast test, of what the emulators cannot show deterministically: reads
 * that are stale, but never more than `staleMs` (DynamoDB Local is always consistent); TTL that
 * deletes only after expiry, and at its own moment. The conformance test
 * (test/integration/guarantees/sim-conformance.test.ts) compares the answers to DynamoDB Local's.
 */

const get = (model: DynamoDbModel, consistent: boolean) =>
  model.handle('GetCommand', { TableName: TABLE, Key: { pk: 'a', sk: 'H' }, ConsistentRead: consistent }).Item
    ?.v;

describe('the DynamoDB model', () => {
  it('returns a version up to staleMs old to an eventually consistent read, never to a consistent one', () => {
    const w = world();
    const model = dynamo(w, { staleMs: 1000, staleProbability: 1 });
    model.handle('PutCommand', { TableName: TABLE, Item: { pk: 'a', sk: 'H', v: 1 } });
    w.advance(600);
    model.handle('PutCommand', { TableName: TABLE, Item: { pk: 'a', sk: 'H', v: 2 } });
    w.advance(100);
    // Stale by 0.65 × 1000 ms: the read sees the world 650 ms ago, when v was 1.
    w.replay([0, 0.65]);
    expect(get(model, false)).toBe(1);
    w.replay([0, 0.65]);
    expect(get(model, true)).toBe(2);
    // 900 ms ago the item was not written yet: an eventually consistent read may miss a new item.
    w.replay([0, 0.9]);
    expect(get(model, false)).toBeUndefined();
    // 50 ms ago v was already 2.
    w.replay([0, 0.05]);
    expect(get(model, false)).toBe(2);
  });

  it('never returns a version older than staleMs, nor an item deleted more than staleMs ago', () => {
    const w = world();
    const model = dynamo(w, { staleMs: 1000, staleProbability: 1 });
    model.handle('PutCommand', { TableName: TABLE, Item: { pk: 'a', sk: 'H', v: 1 } });
    w.advance(100);
    model.handle('PutCommand', { TableName: TABLE, Item: { pk: 'a', sk: 'H', v: 2 } });
    w.advance(1100);
    w.replay([0, 0.999]);
    expect(get(model, false)).toBe(2);
    model.handle('DeleteCommand', { TableName: TABLE, Key: { pk: 'a', sk: 'H' } });
    w.advance(500);
    w.replay([0, 0.9]);
    expect(get(model, false)).toBe(2);
    w.advance(600);
    w.replay([0, 0.999]);
    expect(get(model, false)).toBeUndefined();
  });

  it('may show a stale index to a query on a GSI, which cannot read consistently', () => {
    const w = world();
    const model = dynamo(w, { staleMs: 1000, staleProbability: 1 });
    model.handle('PutCommand', { TableName: TABLE, Item: { pk: 'a', sk: 'H', dueShard: 's', dueAt: 5 } });
    w.advance(500);
    model.handle('UpdateCommand', {
      TableName: TABLE,
      Key: { pk: 'a', sk: 'H' },
      UpdateExpression: 'REMOVE dueShard',
    });
    const due = () =>
      model.handle('QueryCommand', {
        TableName: TABLE,
        IndexName: 'due',
        KeyConditionExpression: 'dueShard = :s',
        ExpressionAttributeValues: { ':s': 's' },
      }).Count;
    w.replay([0, 0.3]);
    expect(due()).toBe(1);
    w.replay([0.99]);
    expect(due()).toBe(0);
  });

  it('deletes by TTL only items whose expiry has passed, each at its own moment, and reads them until then', () => {
    const w = world([0.99]);
    const model = dynamo(w);
    const seconds = T0 / 1000;
    model.handle('PutCommand', { TableName: TABLE, Item: { pk: 'a', sk: 'H', expiresAt: seconds + 10 } });
    model.handle('PutCommand', { TableName: TABLE, Item: { pk: 'b', sk: 'H', expiresAt: seconds - 1 } });
    model.handle('PutCommand', { TableName: TABLE, Item: { pk: 'c', sk: 'H' } });
    // Expired, but this sweep's draw spares it: still read, as on AWS.
    expect(model.expireSome()).toBe(0);
    expect(
      model.handle('GetCommand', { TableName: TABLE, Key: { pk: 'b', sk: 'H' }, ConsistentRead: true }).Item,
    ).toBeDefined();
    w.replay([0.1]);
    expect(model.expireSome()).toBe(1);
    expect(
      model
        .items(TABLE)
        .map((i) => i.pk)
        .sort(),
    ).toEqual(['a', 'c']);
    expect(model.expireAll(T0 + 9_000)).toBe(0);
    expect(model.expireAll(T0 + 10_000)).toBe(1);
    expect(model.items(TABLE).map((i) => i.pk)).toEqual(['c']);
  });

  it('applies a transaction all or nothing, with a reason per item when a condition fails', () => {
    const w = world();
    const model = dynamo(w);
    model.handle('PutCommand', { TableName: TABLE, Item: { pk: 'a', sk: 'H', v: 1 } });
    const transact = (condition: string) =>
      model.handle('TransactWriteCommand', {
        TransactItems: [
          { Put: { TableName: TABLE, Item: { pk: 'b', sk: 'H' } } },
          {
            Update: {
              TableName: TABLE,
              Key: { pk: 'a', sk: 'H' },
              UpdateExpression: 'SET v = :n',
              ConditionExpression: condition,
              ExpressionAttributeValues: { ':n': 2, ':old': 1 },
            },
          },
        ],
      });
    let error: unknown;
    try {
      transact('v <> :old');
    } catch (e) {
      error = e;
    }
    expect(error).toMatchObject({
      name: 'TransactionCanceledException',
      CancellationReasons: [{ Code: 'None' }, { Code: 'ConditionalCheckFailed' }],
    });
    expect(model.items(TABLE).map((i) => i.pk)).toEqual(['a']);
    transact('v = :old');
    expect(
      model
        .items(TABLE)
        .map((i) => `${i.pk}${i.v ?? ''}`)
        .sort(),
    ).toEqual(['a2', 'b']);
  });

  it('refuses a transaction of more than 100 items, or of two operations on one item', () => {
    const model = dynamo(world());
    const put = (pk: string) => ({ Put: { TableName: TABLE, Item: { pk, sk: 'H' } } });
    expect(() =>
      model.handle('TransactWriteCommand', {
        TransactItems: Array.from({ length: 101 }, (_, i) => put(`p${i}`)),
      }),
    ).toThrow(/Member must have length less than or equal to 100/);
    expect(() => model.handle('TransactWriteCommand', { TransactItems: [put('x'), put('x')] })).toThrow(
      'Transaction request cannot include multiple operations on one item',
    );
    expect(
      model.handle('TransactWriteCommand', {
        TransactItems: Array.from({ length: 100 }, (_, i) => put(`p${i}`)),
      }),
    ).toBeDefined();
    expect(model.items(TABLE)).toHaveLength(100);
  });
});
