import { describe, expect, it } from 'vitest';
import {
  addNumbers,
  checkNumber,
  compareNumbers,
  compareStrings,
  compareValues,
  equalValues,
  formatNumber,
  makeSet,
  parseNumber,
  significantDigits,
  typeOf,
} from '../../../../../sim/models/dynamodb/values.ts';

/**
 * DynamoDB's values as its developer guide documents them ("Supported data types"): numbers of up
 * to 38 significant digits between 1E-130 and 9.9999999999999999999999999999999999999E+125,
 * exact (0.1 + 0.2 is 0.3, never a float), leading and trailing zeros not significant; strings
 * ordered by their UTF-8 bytes; sets equal whatever their order. The conformance test meets a
 * few of these through DynamoDB Local; this is the module's own fast test.
 */

const bytes = (...b: number[]) => new Uint8Array(b);

describe('numbers', () => {
  it('counts significant digits without leading or trailing zeros', () => {
    expect(significantDigits('000123000')).toBe(3);
    expect(significantDigits('0.00120')).toBe(2);
    expect(significantDigits('-1.5e10')).toBe(2);
    expect(significantDigits('0')).toBe(1);
  });

  it('takes 38 significant digits and refuses 39', () => {
    expect(() => checkNumber('1'.repeat(38))).not.toThrow();
    expect(() => checkNumber(`${'1'.repeat(38)}000`)).not.toThrow();
    expect(() => checkNumber('1'.repeat(39))).toThrow(
      'Attempting to store more than 38 significant digits in a Number',
    );
  });

  it('takes magnitudes from 1E-130 to 9.99…E+125 and refuses beyond', () => {
    expect(() => checkNumber('1E-130')).not.toThrow();
    expect(() => checkNumber('-1E-130')).not.toThrow();
    expect(() => checkNumber(`9.${'9'.repeat(37)}E+125`)).not.toThrow();
    expect(() => checkNumber('1E-131')).toThrow(/Number underflow/);
    expect(() => checkNumber('1E+126')).toThrow(/Number overflow/);
  });

  it('refuses what is not a number', () => {
    for (const text of ['', 'abc', '1.2.3', '--1', 'e5', '.'])
      expect(() => parseNumber(text), text).toThrow(
        `The parameter cannot be converted to a numeric value: ${text}`,
      );
  });

  it('adds and subtracts exactly, and writes the result without exponent or superfluous zeros', () => {
    expect(addNumbers('0.1', '0.2')).toBe('0.3');
    expect(addNumbers('1', '1', -1)).toBe('0');
    expect(addNumbers('1E2', '0.50')).toBe('100.5');
    expect(addNumbers(`${'9'.repeat(38)}`, '-1')).toBe(`${'9'.repeat(37)}8`);
    expect(addNumbers('-2.5', '1')).toBe('-1.5');
    expect(formatNumber(parseNumber('1.2E-3'))).toBe('0.0012');
    expect(formatNumber(parseNumber('012.3400'))).toBe('12.34');
  });

  it('refuses a sum beyond 38 significant digits', () => {
    expect(() => addNumbers('1E31', '0.0000001')).toThrow(
      expect.objectContaining({ name: 'ValidationException' }),
    );
  });

  it('compares by value, beyond the precision of a float', () => {
    expect(compareNumbers('1.0', '1')).toBe(0);
    expect(compareNumbers('-10', '2')).toBeLessThan(0);
    expect(
      compareNumbers('12345678901234567890123456789012345679', '12345678901234567890123456789012345678'),
    ).toBeGreaterThan(0);
    expect(equalValues({ N: '100' }, { N: '1E2' })).toBe(true);
  });
});

describe('ordering and equality', () => {
  it('orders strings by their UTF-8 bytes, not their UTF-16 code units', () => {
    // U+FFFF is EF BF BF in UTF-8, an emoji F0 9F 98 80: the emoji sorts after, though its first
    // UTF-16 unit (0xD83D) is below 0xFFFF.
    expect(compareStrings('\uffff', '😀')).toBeLessThan(0);
    expect(compareStrings('a', 'b')).toBeLessThan(0);
    expect(compareStrings('ab', 'a')).toBeGreaterThan(0);
    expect(compareStrings('Z', 'a')).toBeLessThan(0);
  });

  it('orders binaries as unsigned bytes, and only strings, numbers and binaries at all', () => {
    expect(compareValues({ B: bytes(0x80) }, { B: bytes(0x7f) })).toBeGreaterThan(0);
    expect(compareValues({ S: '1' }, { N: '1' })).toBeUndefined();
    expect(compareValues({ BOOL: true }, { BOOL: false })).toBeUndefined();
  });

  it('finds sets equal whatever their order, lists only in order, maps by their entries', () => {
    expect(equalValues({ SS: ['a', 'b'] }, { SS: ['b', 'a'] })).toBe(true);
    expect(equalValues({ NS: ['1', '2'] }, { NS: ['2.0', '1'] })).toBe(true);
    expect(equalValues({ L: [{ S: 'a' }, { S: 'b' }] }, { L: [{ S: 'b' }, { S: 'a' }] })).toBe(false);
    expect(equalValues({ M: { a: { N: '1' } } }, { M: { a: { N: '1.0' } } })).toBe(true);
    expect(equalValues({ M: { a: { N: '1' } } }, { M: { b: { N: '1' } } })).toBe(false);
    expect(equalValues({ S: '1' }, { N: '1' })).toBe(false);
    expect(equalValues({ NULL: true }, { NULL: true })).toBe(true);
  });

  it('makes a set without duplicates, numbers equal by value', () => {
    expect(makeSet('NS', [{ N: '1' }, { N: '1.0' }, { N: '2' }])).toEqual({ NS: ['1', '2'] });
  });

  it('refuses an attribute value with no type', () => {
    expect(() => typeOf({})).toThrow(/must contain exactly one of the supported datatypes/);
  });
});
