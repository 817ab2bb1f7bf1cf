import { describe, expect, it } from 'vitest';
import { dynamo, TABLE, world } from '../fixtures.ts';

/**
 * Query as DynamoDB's developer guide documents it ("Querying tables", "Key condition
 * expressions"): the partition key by equality only, one condition on the sort key (=, <, <=, >,
 * >=, BETWEEN with its bounds in order, begins_with), no OR, NOT or <>; items in sort key order
 * by UTF-8 bytes, reversed by ScanIndexForward false; Limit counting items read before the
 * filter (Count against ScannedCount, LastEvaluatedKey to resume); Select COUNT; a filter may not
 * name a key attribute. Each expected answer was also seen from DynamoDB Local; the conformance
 * test pages one query against it, this pins each rule.
 */

function table() {
  const model = dynamo(world());
  for (const sk of ['a', 'b', 'c', 'B', 'é'])
    model.handle('PutCommand', { TableName: TABLE, Item: { pk: 'p', sk, n: sk.charCodeAt(0) } });
  model.handle('PutCommand', { TableName: TABLE, Item: { pk: 'other', sk: 'a', n: 0 } });
  const query = (
    KeyConditionExpression: string,
    values: Record<string, unknown>,
    extra: Record<string, unknown> = {},
  ) =>
    model.handle('QueryCommand', {
      TableName: TABLE,
      KeyConditionExpression,
      ExpressionAttributeValues: values,
      ConsistentRead: true,
      ...extra,
    }) as {
      Items?: { sk: string }[];
      Count: number;
      ScannedCount: number;
      LastEvaluatedKey?: Record<string, unknown>;
    };
  const sks = (...args: Parameters<typeof query>) => query(...args).Items?.map((i) => i.sk);
  return { query, sks };
}

describe('Query', () => {
  it('returns one partition in sort key order by UTF-8 bytes, or reversed', () => {
    const { sks } = table();
    expect(sks('pk = :p', { ':p': 'p' })).toEqual(['B', 'a', 'b', 'c', 'é']);
    expect(sks('pk = :p', { ':p': 'p' }, { ScanIndexForward: false })).toEqual(['é', 'c', 'b', 'a', 'B']);
  });

  it('narrows by one sort key condition: BETWEEN inclusive, begins_with, comparisons', () => {
    const { sks } = table();
    expect(sks('pk = :p AND sk BETWEEN :a AND :b', { ':p': 'p', ':a': 'a', ':b': 'b' })).toEqual(['a', 'b']);
    expect(sks('pk = :p AND begins_with(sk, :a)', { ':p': 'p', ':a': 'a' })).toEqual(['a']);
    expect(sks('pk = :p AND sk > :a', { ':p': 'p', ':a': 'b' })).toEqual(['c', 'é']);
    expect(sks('pk = :p AND sk <= :a', { ':p': 'p', ':a': 'a' })).toEqual(['B', 'a']);
  });

  it('counts the items read before the filter against Limit, and says where to resume', () => {
    const { query } = table();
    const page = query('pk = :p', { ':p': 'p', ':n': 97 }, { FilterExpression: 'n > :n', Limit: 2 });
    expect(page).toMatchObject({
      Items: [],
      Count: 0,
      ScannedCount: 2,
      LastEvaluatedKey: { pk: 'p', sk: 'a' },
    });
    const rest = query(
      'pk = :p',
      { ':p': 'p', ':n': 97 },
      { FilterExpression: 'n > :n', ExclusiveStartKey: page.LastEvaluatedKey },
    );
    expect(rest.Items?.map((i) => i.sk)).toEqual(['b', 'c', 'é']);
    expect(rest.LastEvaluatedKey).toBeUndefined();
  });

  it('answers only a count with Select COUNT', () => {
    const { query } = table();
    const answer = query('pk = :p', { ':p': 'p' }, { Select: 'COUNT' });
    expect(answer.Items).toBeUndefined();
    expect(answer).toMatchObject({ Count: 5, ScannedCount: 5 });
  });

  it('refuses a key condition DynamoDB cannot serve', () => {
    const { query } = table();
    const refused =
      (text: string, values: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
      () =>
        query(text, values, extra);
    expect(refused('pk = :p OR sk = :a', { ':p': 'p', ':a': 'a' })).toThrow(
      expect.objectContaining({ name: 'ValidationException' }),
    );
    expect(refused('pk = :p AND sk <> :a', { ':p': 'p', ':a': 'a' })).toThrow(
      expect.objectContaining({ name: 'ValidationException' }),
    );
    expect(refused('pk < :p', { ':p': 'p' })).toThrow(
      expect.objectContaining({ name: 'ValidationException' }),
    );
    expect(refused('sk = :a', { ':a': 'a' })).toThrow(
      expect.objectContaining({ name: 'ValidationException' }),
    );
    expect(refused('pk = :p AND sk > :a AND sk < :b', { ':p': 'p', ':a': 'a', ':b': 'c' })).toThrow(
      expect.objectContaining({ name: 'ValidationException' }),
    );
    expect(refused('pk = :p AND sk BETWEEN :b AND :a', { ':p': 'p', ':a': 'a', ':b': 'b' })).toThrow(
      /The BETWEEN operator requires upper bound to be greater than or equal to lower bound/,
    );
    expect(refused('pk = :p', { ':p': 'p' }, { Limit: 0 })).toThrow(
      expect.objectContaining({ name: 'ValidationException' }),
    );
    expect(refused('pk = :p', { ':p': 'p', ':a': 'a' }, { FilterExpression: 'sk = :a' })).toThrow(
      /Filter Expression can only contain non-primary key attributes: Primary key attribute: sk/,
    );
  });

  it('refuses a consistent read on a global secondary index', () => {
    const model = dynamo(world());
    expect(() =>
      model.handle('QueryCommand', {
        TableName: TABLE,
        IndexName: 'due',
        KeyConditionExpression: 'dueShard = :s',
        ExpressionAttributeValues: { ':s': '0' },
        ConsistentRead: true,
      }),
    ).toThrow('Consistent reads are not supported on global secondary indexes');
  });
});
