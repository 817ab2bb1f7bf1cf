import { describe, expect, it } from 'vitest';
import { marshallInput, toNative, unmarshallOutput } from '../../../../../sim/models/dynamodb/document.ts';

/**
 * The document client's translation as lib-dynamodb does it: only the fields each command
 * carries values in are marshalled (an Item, a Key, ExpressionAttributeValues; never a
 * TableName or an expression), undefined values dropped, a class instance refused; outputs
 * unmarshalled the same way. The adapters' tests over the models rely on it; this pins it per field.
 */

describe('the document translation', () => {
  it('marshals the value fields of a command and leaves the others as they are', () => {
    const wire = marshallInput('PutCommand', {
      TableName: 't',
      Item: { pk: 'a', n: 1, gone: undefined, l: [true, null] },
      ConditionExpression: 'attribute_not_exists(pk)',
      ExpressionAttributeValues: { ':v': 'x' },
    });
    expect(wire).toEqual({
      TableName: 't',
      Item: { pk: { S: 'a' }, n: { N: '1' }, l: { L: [{ BOOL: true }, { NULL: true }] } },
      ConditionExpression: 'attribute_not_exists(pk)',
      ExpressionAttributeValues: { ':v': { S: 'x' } },
    });
  });

  it('marshals the keys inside a batch and a transaction', () => {
    const wire = marshallInput('BatchWriteCommand', {
      RequestItems: { t: [{ PutRequest: { Item: { pk: 'a' } } }, { DeleteRequest: { Key: { pk: 'b' } } }] },
    });
    expect(wire).toEqual({
      RequestItems: {
        t: [{ PutRequest: { Item: { pk: { S: 'a' } } } }, { DeleteRequest: { Key: { pk: { S: 'b' } } } }],
      },
    });
  });

  it('refuses a class instance, as the document client does', () => {
    class Thing {
      public x = 1;
    }
    expect(() =>
      marshallInput('PutCommand', { TableName: 't', Item: { pk: 'a', t: new Thing() } }),
    ).toThrow();
  });

  it('unmarshals the items of an answer, and numbers to JavaScript numbers', () => {
    expect(
      unmarshallOutput('QueryCommand', { Items: [{ pk: { S: 'a' }, n: { N: '2' } }], Count: 1 }),
    ).toEqual({
      Items: [{ pk: 'a', n: 2 }],
      Count: 1,
    });
    expect(toNative({ s: { SS: ['x'] } })).toEqual({ s: new Set(['x']) });
  });
});
