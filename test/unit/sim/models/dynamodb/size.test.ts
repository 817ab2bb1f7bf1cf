import { describe, expect, it } from 'vitest';
import {
  checkItem,
  checkKey,
  itemSize,
  type KeySchema,
  valueSize,
} from '../../../../../sim/models/dynamodb/size.ts';

/**
 * Item size as DynamoDB sizes it ("DynamoDB item sizes and formats"): a string its UTF-8 bytes,
 * a number one byte per two significant digits (leading and trailing zeros trimmed) plus one, a
 * binary its raw bytes, a null or a boolean one byte, a list or map 3 bytes plus one per element,
 * every attribute name its UTF-8 bytes; and the limits written items meet (400 KB an item, 2048
 * bytes a partition key, 1024 a sort key, no empty key string, no empty set). The conformance
 * test checks one item at exactly 400 KB and the key limits against DynamoDB Local; this pins
 * each kind of value's size and each limit at its boundary.
 */

describe('itemSize', () => {
  it('sizes numbers, maps and lists as DynamoDB does', () => {
    // name 1 + number of 5 significant digits (ceil(5 / 2) + 1 = 4); name 1 + map 3 + (1 + 1 + S 2); name 1 + list 3 + (1 + BOOL 1).
    expect(itemSize({ n: { N: '12300.45' }, m: { M: { k: { S: 'ab' } } }, l: { L: [{ BOOL: true }] } })).toBe(
      1 + 5 + 1 + 3 + 1 + 1 + 2 + 1 + 3 + 1 + 1,
    );
  });

  it('counts strings and names in UTF-8 bytes and binaries in raw bytes', () => {
    expect(valueSize({ S: 'é😀' })).toBe(2 + 4);
    expect(valueSize({ B: new Uint8Array(7) })).toBe(7);
    expect(itemSize({ é: { S: 'a' } })).toBe(2 + 1);
  });

  it('trims leading and trailing zeros from a number before counting its digits', () => {
    expect(valueSize({ N: '000123000' })).toBe(Math.ceil(3 / 2) + 1);
    expect(valueSize({ N: '0.5' })).toBe(2);
    expect(valueSize({ N: '1234' })).toBe(3);
    expect(valueSize({ N: '12345678901234567890123456789012345678' })).toBe(20);
  });

  it('sizes a null or a boolean as one byte, an empty list or map as three', () => {
    expect(valueSize({ NULL: true })).toBe(1);
    expect(valueSize({ BOOL: false })).toBe(1);
    expect(valueSize({ L: [] })).toBe(3);
    expect(valueSize({ M: {} })).toBe(3);
    expect(valueSize({ L: [{ L: [] }, { NULL: true }] })).toBe(3 + (1 + 3) + (1 + 1));
  });

  it('sizes a set as the sum of its members', () => {
    expect(valueSize({ SS: ['ab', 'c'] })).toBe(3);
    expect(valueSize({ NS: ['1', '22', '333'] })).toBe(2 + 2 + 3);
  });
});

const SCHEMA: KeySchema = { partition: { name: 'pk', type: 'S' }, sort: { name: 'sk', type: 'S' } };

describe('the limits of a written item', () => {
  it('takes an item of exactly 400 KB and refuses one byte more', () => {
    // pk 2 + 1, sk 2 + 1, d 1 + n: n = 409600 - 7.
    const item = (n: number) => ({ pk: { S: 'p' }, sk: { S: 's' }, d: { S: 'x'.repeat(n) } });
    expect(itemSize(item(409_593))).toBe(400 * 1024);
    expect(() => checkItem(item(409_593), SCHEMA)).not.toThrow();
    expect(() => checkItem(item(409_594), SCHEMA)).toThrow('Item size has exceeded the maximum allowed size');
  });

  it('takes a partition key of 2048 bytes and a sort key of 1024, and refuses one byte more', () => {
    expect(() =>
      checkKey({ pk: { S: 'p'.repeat(2048) }, sk: { S: 's'.repeat(1024) } }, SCHEMA, true),
    ).not.toThrow();
    expect(() => checkKey({ pk: { S: 'p'.repeat(2049) }, sk: { S: 's' } }, SCHEMA, true)).toThrow(
      /Size of hashkey has exceeded the maximum size limit of ?2048 bytes/,
    );
    expect(() => checkKey({ pk: { S: 'p' }, sk: { S: 's'.repeat(1025) } }, SCHEMA, true)).toThrow(
      /exceeded the size limit of 1024 bytes/,
    );
    // Bytes, not characters: 1024 two-byte characters are 2048 bytes.
    expect(() => checkKey({ pk: { S: 'é'.repeat(1025) }, sk: { S: 's' } }, SCHEMA, true)).toThrow(/hashkey/);
  });

  it('refuses an empty key string, a key of the wrong type, a missing key and, in a Key, an extra attribute', () => {
    expect(() => checkKey({ pk: { S: '' }, sk: { S: 's' } }, SCHEMA, false)).toThrow(
      /cannot contain an empty string value. Key: pk/,
    );
    expect(() => checkKey({ pk: { N: '1' }, sk: { S: 's' } }, SCHEMA, false)).toThrow(
      'One or more parameter values were invalid: Type mismatch for key pk expected: S actual: N',
    );
    expect(() => checkKey({ sk: { S: 's' } }, SCHEMA, false)).toThrow(
      'One or more parameter values were invalid: Missing the key pk in the item',
    );
    expect(() => checkKey({ pk: { S: 'p' }, sk: { S: 's' }, x: { S: 'x' } }, SCHEMA, true)).toThrow(
      'The provided key element does not match the schema',
    );
    expect(() => checkKey({ pk: { S: 'p' }, sk: { S: 's' }, x: { S: 'x' } }, SCHEMA, false)).not.toThrow();
  });

  it('refuses an empty set and a number beyond 38 digits, nested or not', () => {
    const key = { pk: { S: 'p' }, sk: { S: 's' } };
    expect(() => checkItem({ ...key, e: { SS: [] } }, SCHEMA)).toThrow(/string set {2}may not be empty/);
    expect(() => checkItem({ ...key, m: { M: { n: { N: '1'.repeat(39) } } } }, SCHEMA)).toThrow(
      /38 significant digits/,
    );
    expect(() => checkItem({ ...key, l: { L: [{ NS: [] }] } }, SCHEMA)).toThrow(
      /number set {2}may not be empty/,
    );
  });
});
