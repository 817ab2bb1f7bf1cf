import { describe, expect, it } from 'vitest';
import { itemSize } from '../../../../../sim/models/dynamodb/size.ts';

/**
 * Item size as DynamoDB sizes it. The conformance test checks one item at exactly 400 KB against
 * DynamoDB Local; this pins each kind of value's size, from DynamoDB's documented rules.
 */

describe('itemSize', () => {
  it('sizes numbers, maps and lists as DynamoDB does', () => {
    // name 1 + number of 5 significant digits (ceil(5 / 2) + 1 = 4); name 1 + map 3 + (1 + 1 + S 2); name 1 + list 3 + (1 + BOOL 1).
    expect(itemSize({ n: { N: '12300.45' }, m: { M: { k: { S: 'ab' } } }, l: { L: [{ BOOL: true }] } })).toBe(
      1 + 5 + 1 + 3 + 1 + 1 + 2 + 1 + 3 + 1 + 1,
    );
  });
});
