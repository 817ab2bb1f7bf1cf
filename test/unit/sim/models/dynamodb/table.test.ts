import { describe, expect, it } from 'vitest';
import { Table } from '../../../../../sim/models/dynamodb/table.ts';

/**
 * The versions behind the model's eventually consistent reads: a table keeps each key's writes
 * for `keepMs`, so a read at an earlier time sees the item as it was then (or not yet there, or
 * still there after its delete), and forgets what no read can see any more; its sparse indexes
 * hold only items with their key attributes, of the declared types. The DynamoDB model's test
 * drives this through reads with drawn staleness; this pins the history itself.
 */

const index = {
  name: 'due',
  schema: { partition: { name: 'g', type: 'S' as const }, sort: { name: 'at', type: 'N' as const } },
  projection: 'KEYS_ONLY' as const,
};

function table() {
  return new Table(
    't',
    { partition: { name: 'pk', type: 'S' }, sort: { name: 'sk', type: 'S' } },
    [index],
    [],
    0,
  );
}

const key = { pk: { S: 'a' }, sk: { S: 'H' } };
const item = (v: string, extra = {}) => ({ ...key, v: { S: v }, ...extra });

describe('Table', () => {
  it('answers the item as it was at an earlier time: not yet written, an older version, or still there after its delete', () => {
    const t = table();
    t.write(key, item('1'), 100, 1000);
    t.write(key, item('2'), 200, 1000);
    t.write(key, undefined, 300, 1000);
    expect(t.at(key, 50)).toBeUndefined();
    expect(t.at(key, 150)?.v).toEqual({ S: '1' });
    expect(t.at(key, 250)?.v).toEqual({ S: '2' });
    expect(t.at(key, 300)).toBeUndefined();
    expect(t.current(key)).toBeUndefined();
    expect(t.count()).toBe(0);
  });

  it('forgets versions older than keepMs, and a key deleted longer ago than that', () => {
    const t = table();
    t.write(key, item('1'), 100, 1000);
    t.write(key, item('2'), 200, 1000);
    t.prune(1200, 1000);
    // 1200 - 1000 = 200: the version of 200 is the oldest a read may still need; that of 100 is gone.
    expect(t.at(key, 200)?.v).toEqual({ S: '2' });
    expect(t.at(key, 150)?.v).not.toEqual({ S: '1' });
    t.write(key, undefined, 1300, 1000);
    t.prune(2300, 1000);
    expect(t.snapshot(0)).toEqual([]);
  });

  it('hands out copies, never its own items', () => {
    const t = table();
    t.write(key, item('1'), 0, 0);
    const copy = t.current(key) as Record<string, { S?: string }>;
    (copy.v as { S: string }).S = 'changed';
    expect(t.current(key)?.v).toEqual({ S: '1' });
  });

  it('finds items by partition or by index partition, the index holding only items with its key', () => {
    const t = table();
    t.write(key, item('1', { g: { S: 'x' }, at: { N: '1' } }), 0, 0);
    t.write({ pk: { S: 'b' }, sk: { S: 'H' } }, { pk: { S: 'b' }, sk: { S: 'H' } }, 0, 0);
    expect(t.visible(0, { partition: { S: 'a' } })).toHaveLength(1);
    expect(t.visible(0, { index, indexPartition: { S: 'x' } }).map((i) => i.pk)).toEqual([{ S: 'a' }]);
    expect(t.inIndex(index, { pk: { S: 'b' }, sk: { S: 'H' } })).toBeUndefined();
    expect(t.inIndex(index, item('1', { g: { S: 'x' }, at: { N: '1' } }))).toEqual({
      ...key,
      g: { S: 'x' },
      at: { N: '1' },
    });
  });

  it('refuses an index key of the wrong type or empty, and an unknown index', () => {
    const t = table();
    expect(() => t.checkIndexKeys(item('1', { g: { N: '1' } }))).toThrow(
      /Type mismatch for Index Key g Expected: S Actual: N IndexName: due/,
    );
    expect(() => t.checkIndexKeys(item('1', { g: { S: '' } }))).toThrow(
      /cannot contain an empty string value. IndexName: due, IndexKey: g/,
    );
    expect(() => t.checkIndexKeys(item('1'))).not.toThrow();
    expect(() => t.index('nope')).toThrow('The table does not have the specified index: nope');
  });
});
