/**
 * The meter's record of the last image of each item seen on the wire: what a transactional update or a
 * failed conditional write is costed from, since neither carries the item's size.
 */
import { describe, expect, it } from 'vitest';
import type { TableShape } from '../../../../bench/measure/capacity.ts';
import { ItemImageLog } from '../../../../bench/measure/item-images.ts';

const TABLE: TableShape = { name: 'state', partitionKey: 'pk', sortKey: 'sk', indexes: [] };
const key = (pk: string) => ({ pk: { S: pk }, sk: { S: 'A' } });
const item = (pk: string, body: string) => ({ ...key(pk), body: { S: body } });
const logOf = () => new ItemImageLog(new Map([[TABLE.name, TABLE]]));

describe("the meter's item images", () => {
  it('remembers what a put wrote and forgets what a delete removed', () => {
    const log = logOf();
    log.afterWrite('PutItem', { TableName: 'state', Item: item('a', 'one') }, {});
    expect(log.before('state', key('a'))).toEqual(item('a', 'one'));
    log.afterWrite('DeleteItem', { TableName: 'state', Key: key('a') }, {});
    expect(log.before('state', key('a'))).toBeUndefined();
  });

  it('takes an update only when it returned the whole new item', () => {
    const log = logOf();
    const update = (returnValues: string) =>
      log.afterWrite(
        'UpdateItem',
        { TableName: 'state', Key: key('u'), ReturnValues: returnValues },
        { Attributes: item('u', returnValues) },
      );
    update('UPDATED_NEW');
    expect(log.before('state', key('u'))).toBeUndefined();
    update('ALL_NEW');
    expect(log.before('state', key('u'))).toEqual(item('u', 'ALL_NEW'));
  });

  it("follows a batch write's puts and deletes, table by table", () => {
    const log = logOf();
    log.afterWrite('PutItem', { TableName: 'state', Item: item('gone', 'x') }, {});
    log.afterWrite(
      'BatchWriteItem',
      {
        RequestItems: {
          state: [{ PutRequest: { Item: item('b', 'batch') } }, { DeleteRequest: { Key: key('gone') } }],
        },
      },
      {},
    );
    expect(log.before('state', key('b'))).toEqual(item('b', 'batch'));
    expect(log.before('state', key('gone'))).toBeUndefined();
  });

  it("follows a committed transaction's puts and deletes", () => {
    const log = logOf();
    log.afterWrite('PutItem', { TableName: 'state', Item: item('old', 'x') }, {});
    log.afterTransaction({
      TransactItems: [
        { Put: { TableName: 'state', Item: item('t', 'tx') } },
        { Delete: { TableName: 'state', Key: key('old') } },
        { ConditionCheck: { TableName: 'state', Key: key('c') } },
      ],
    });
    expect(log.before('state', key('t'))).toEqual(item('t', 'tx'));
    expect(log.before('state', key('old'))).toBeUndefined();
    expect(log.images.size).toBe(1);
  });

  it('takes whole items a read returned, and a get that found nothing as the item gone', () => {
    const log = logOf();
    log.afterRead('GetItem', { TableName: 'state', Key: key('g') }, { Item: item('g', 'read') });
    expect(log.before('state', key('g'))).toEqual(item('g', 'read'));
    log.afterRead('GetItem', { TableName: 'state', Key: key('g') }, {});
    expect(log.before('state', key('g'))).toBeUndefined();
    log.afterRead('Query', { TableName: 'state' }, { Items: [item('q1', '1'), item('q2', '2')] });
    expect(log.images.size).toBe(2);
  });

  it('ignores partial reads: a projection, or a query of an index', () => {
    const log = logOf();
    log.afterRead(
      'GetItem',
      { TableName: 'state', Key: key('p'), ProjectionExpression: 'pk' },
      { Item: key('p') },
    );
    log.afterRead('Query', { TableName: 'state', IndexName: 'due' }, { Items: [item('i', 'x')] });
    log.afterRead('Query', { TableName: 'state', ProjectionExpression: 'pk' }, { Items: [item('j', 'x')] });
    expect(log.images.size).toBe(0);
  });

  it("converts a document client's plain items to the wire format", () => {
    const log = logOf();
    log.afterWrite('PutItem', { TableName: 'state', Item: { pk: 'd', sk: 'A', n: 1 } }, {});
    expect(log.before('state', key('d'))).toEqual({ pk: { S: 'd' }, sk: { S: 'A' }, n: { N: '1' } });
  });

  it('ignores tables not registered, and counts those registered later', () => {
    const tables = new Map<string, TableShape>();
    const log = new ItemImageLog(tables);
    log.afterWrite('PutItem', { TableName: 'state', Item: item('a', 'x') }, {});
    expect(log.images.size).toBe(0);
    tables.set('state', TABLE);
    log.afterWrite('PutItem', { TableName: 'state', Item: item('a', 'x') }, {});
    expect(log.before('state', key('a'))).toEqual(item('a', 'x'));
    expect(log.before('other', key('a'))).toBeUndefined();
  });
});
