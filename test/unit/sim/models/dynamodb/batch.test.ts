import { describe, expect, it } from 'vitest';
import { dynamo, TABLE, world } from '../fixtures.ts';

/**
 * BatchWriteItem and BatchGetItem as DynamoDB's API reference documents them: at most 25 write
 * requests and 100 keys a call, at least one, no key twice in a call. The conformance test
 * checks the 25-request refusal against DynamoDB Local; this pins the others and what a batch does.
 */

const key = (i: number) => ({ pk: `p${i}`, sk: 'H' });

describe('BatchWrite', () => {
  it('puts and deletes up to 25 items, and refuses 26, none, or one key twice', () => {
    const model = dynamo(world());
    const puts = (n: number) =>
      Array.from({ length: n }, (_, i) => ({ PutRequest: { Item: { ...key(i), v: i } } }));
    expect(model.handle('BatchWriteCommand', { RequestItems: { [TABLE]: puts(25) } })).toEqual({
      UnprocessedItems: {},
    });
    expect(model.items(TABLE)).toHaveLength(25);
    expect(() => model.handle('BatchWriteCommand', { RequestItems: { [TABLE]: puts(26) } })).toThrow(
      /Member must have length less than or equal to 25/,
    );
    expect(() => model.handle('BatchWriteCommand', { RequestItems: { [TABLE]: [] } })).toThrow(
      expect.objectContaining({ name: 'ValidationException' }),
    );
    expect(() =>
      model.handle('BatchWriteCommand', {
        RequestItems: { [TABLE]: [{ PutRequest: { Item: key(1) } }, { DeleteRequest: { Key: key(1) } }] },
      }),
    ).toThrow('Provided list of item keys contains duplicates');
    model.handle('BatchWriteCommand', { RequestItems: { [TABLE]: [{ DeleteRequest: { Key: key(0) } }] } });
    expect(model.items(TABLE)).toHaveLength(24);
  });
});

describe('BatchGet', () => {
  it('reads up to 100 keys, leaving out the missing ones, and refuses 101 or one key twice', () => {
    const model = dynamo(world());
    model.handle('PutCommand', { TableName: TABLE, Item: { ...key(1), v: 1 } });
    const keys = (n: number) => Array.from({ length: n }, (_, i) => key(i));
    const answer = model.handle('BatchGetCommand', {
      RequestItems: { [TABLE]: { Keys: keys(100), ConsistentRead: true } },
    });
    expect(answer.Responses[TABLE]).toEqual([{ ...key(1), v: 1 }]);
    expect(() => model.handle('BatchGetCommand', { RequestItems: { [TABLE]: { Keys: keys(101) } } })).toThrow(
      'Too many items requested for the BatchGetItem call',
    );
    expect(() =>
      model.handle('BatchGetCommand', { RequestItems: { [TABLE]: { Keys: [key(1), key(1)] } } }),
    ).toThrow('Provided list of item keys contains duplicates');
  });
});
