/**
 * DynamoDB's published item-size and capacity rules as the meter applies them: attribute names plus
 * values, numbers by significant digits, lists and maps with their overhead, a write unit per KB.
 */
import { describe, expect, it } from 'vitest';
import { attributeValueSize, itemSize, writeUnits } from '../../../../bench/measure/capacity.ts';

describe("the meter's item sizes", () => {
  it('counts a string by its UTF-8 bytes and a boolean or null as one byte', () => {
    expect(attributeValueSize({ S: 'abc' })).toBe(3);
    expect(attributeValueSize({ S: 'é' })).toBe(2);
    expect(attributeValueSize({ BOOL: true })).toBe(1);
    expect(attributeValueSize({ NULL: true })).toBe(1);
  });

  it('counts a number by half its significant digits plus one, a byte more when negative', () => {
    expect(attributeValueSize({ N: '1' })).toBe(2);
    expect(attributeValueSize({ N: '12345' })).toBe(4);
    expect(attributeValueSize({ N: '1000' })).toBe(2);
    expect(attributeValueSize({ N: '-1.5' })).toBe(3);
  });

  it('adds three bytes to a list or map and one per element, with map keys counted', () => {
    expect(attributeValueSize({ L: [{ S: 'ab' }, { S: 'c' }] })).toBe(3 + (1 + 2) + (1 + 1));
    expect(attributeValueSize({ M: { k: { S: 'ab' } } })).toBe(3 + (1 + 1 + 2));
  });

  it('counts an item as its attribute names plus their values', () => {
    expect(itemSize({ pk: { S: 'A#1' }, n: { N: '7' } })).toBe(2 + 3 + 1 + 2);
  });

  it('bills a write at least one unit, then one per started kilobyte', () => {
    expect(writeUnits(0)).toBe(1);
    expect(writeUnits(1024)).toBe(1);
    expect(writeUnits(1025)).toBe(2);
    expect(writeUnits(4096)).toBe(4);
  });
});
