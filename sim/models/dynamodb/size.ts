/**
 * DynamoDB's item size and the checks every written item passes: the 400 KB item limit (sizes
 * as DynamoDB computes them), key attributes present, of their declared type, non-empty and within
 * 2048 bytes (partition) and 1024 bytes (sort), numbers within 38 digits, no empty sets.
 */
import { validation } from '../errors.ts';
import { type AV, checkNumber, type Item, significantDigits, typeOf } from './values.ts';

/** DynamoDB's largest item: 400 KB, names and values together. */
export const MAX_ITEM_BYTES = 400 * 1024;
/** The largest partition key value. */
export const MAX_PARTITION_KEY_BYTES = 2048;
/** The largest sort key value. */
export const MAX_SORT_KEY_BYTES = 1024;

/**
 * The size of a value as DynamoDB counts it: strings and binaries their bytes, numbers one byte
 * per two significant digits plus one, booleans and nulls one byte, lists and maps 3 bytes plus
 * one byte per element plus the elements (and, in maps, the names), sets their members.
 */
export function valueSize(value: AV): number {
  switch (typeOf(value)) {
    case 'S':
      return Buffer.byteLength(value.S as string);
    case 'N':
      return Math.ceil(significantDigits(value.N as string) / 2) + 1;
    case 'B':
      return (value.B as Uint8Array).length;
    case 'BOOL':
    case 'NULL':
      return 1;
    case 'L':
      return 3 + (value.L as AV[]).reduce((n, v) => n + 1 + valueSize(v), 0);
    case 'M':
      return (
        3 +
        Object.entries(value.M as Item).reduce((n, [k, v]) => n + 1 + Buffer.byteLength(k) + valueSize(v), 0)
      );
    case 'SS':
      return (value.SS as string[]).reduce((n, s) => n + Buffer.byteLength(s), 0);
    case 'NS':
      return (value.NS as string[]).reduce((n, s) => n + Math.ceil(significantDigits(s) / 2) + 1, 0);
    default:
      return (value.BS as Uint8Array[]).reduce((n, b) => n + b.length, 0);
  }
}

/** The size of an item: each attribute's name bytes plus its value's size. */
export function itemSize(item: Item): number {
  return Object.entries(item).reduce((n, [name, value]) => n + Buffer.byteLength(name) + valueSize(value), 0);
}

/** A table's key schema: attribute names and their scalar types. */
export interface KeySchema {
  readonly partition: { readonly name: string; readonly type: 'S' | 'N' | 'B' };
  readonly sort?: { readonly name: string; readonly type: 'S' | 'N' | 'B' };
}

/** Refuses numbers and sets DynamoDB refuses, anywhere in a value. */
export function checkValue(value: AV): void {
  const type = typeOf(value);
  if (type === 'N') checkNumber(value.N as string);
  else if (type === 'NS') {
    for (const n of value.NS as string[]) checkNumber(n);
  }
  if ((type === 'SS' || type === 'NS' || type === 'BS') && (value[type] as unknown[]).length === 0) {
    const word = { SS: 'string', NS: 'number', BS: 'binary' }[type];
    // DynamoDB's own wording, double space included.
    throw validation(`One or more parameter values were invalid: An ${word} set  may not be empty`);
  }
  if (type === 'L') for (const v of value.L as AV[]) checkValue(v);
  if (type === 'M') for (const v of Object.values(value.M as Item)) checkValue(v);
}

/**
 * Checks a key (or the key attributes of an item): present, of the declared type, non-empty and
 * within DynamoDB's key limits. `exact` refuses attributes other than the key's (a `Key` parameter).
 */
export function checkKey(key: Item, schema: KeySchema, exact: boolean): void {
  const parts = [schema.partition, ...(schema.sort ? [schema.sort] : [])];
  if (exact && Object.keys(key).length !== parts.length) {
    throw validation('The provided key element does not match the schema');
  }
  for (const [i, part] of parts.entries()) {
    const value = key[part.name];
    if (value === undefined) {
      throw validation(
        exact
          ? 'The provided key element does not match the schema'
          : `One or more parameter values were invalid: Missing the key ${part.name} in the item`,
      );
    }
    const type = typeOf(value);
    if (type !== part.type) {
      throw validation(
        exact
          ? 'The provided key element does not match the schema'
          : `One or more parameter values were invalid: Type mismatch for key ${part.name} expected: ${part.type} actual: ${type}`,
      );
    }
    const size = valueSize(value);
    if (size === 0 && type !== 'N') {
      throw validation(
        `One or more parameter values are not valid. The AttributeValue for a key attribute cannot contain an empty ${type === 'S' ? 'string' : 'binary'} value. Key: ${part.name}`,
      );
    }
    if (i === 0 && size > MAX_PARTITION_KEY_BYTES) {
      throw validation(
        // DynamoDB's own wording, the missing space included.
        `One or more parameter values were invalid: Size of hashkey has exceeded the maximum size limit of${MAX_PARTITION_KEY_BYTES} bytes`,
      );
    }
    if (i === 1 && size > MAX_SORT_KEY_BYTES) {
      throw validation(
        `One or more parameter values were invalid: Aggregated size of all range keys has exceeded the size limit of ${MAX_SORT_KEY_BYTES} bytes`,
      );
    }
    if (type === 'N') checkNumber(value.N as string);
  }
}

/** Checks an item to be written: its key, its values and its size. */
export function checkItem(
  item: Item,
  schema: KeySchema,
  tooLarge = 'Item size has exceeded the maximum allowed size',
): void {
  checkKey(item, schema, false);
  for (const value of Object.values(item)) checkValue(value);
  if (itemSize(item) > MAX_ITEM_BYTES) throw validation(tooLarge);
}
