import { describe, expect, it } from 'vitest';
import { Placeholders, parseUpdate } from '../../../../../sim/models/dynamodb/expressions.ts';
import { applyUpdate } from '../../../../../sim/models/dynamodb/update.ts';
import type { AV, Item } from '../../../../../sim/models/dynamodb/values.ts';

/**
 * UpdateItem's actions as DynamoDB's developer guide documents them ("Update expressions"): every
 * SET operand is read from the item as it was before the update; `+` and `-` on numbers only, an
 * operand that is missing refused (if_not_exists supplies one); list_append; REMOVE of a missing
 * attribute is no error and of a list element shifts the rest; ADD creates a missing number or
 * set and adds to an existing one; DELETE removes set members, the attribute with the last one; a
 * key attribute cannot be updated. Each expected answer was also seen from DynamoDB Local. The
 * conformance test runs one update of each clause against it; this pins each rule on its own.
 */

const BEFORE: Item = {
  pk: { S: 'p' },
  a: { N: '1' },
  b: { N: '2' },
  s: { S: 'text' },
  l: { L: [{ S: 'x' }, { S: 'y' }, { S: 'z' }] },
  ss: { SS: ['red', 'blue'] },
  m: { M: { nested: { N: '5' } } },
};

function update(text: string, values: Record<string, AV> = {}, before: Item = BEFORE): Item {
  const p = new Placeholders(undefined, Object.keys(values).length ? values : undefined);
  return applyUpdate(before, parseUpdate(text, p), ['pk']).item;
}

describe('SET', () => {
  it('reads every operand from the item before the update, so two SETs can swap values', () => {
    const after = update('SET a = b, b = a');
    expect([after.a, after.b]).toEqual([{ N: '2' }, { N: '1' }]);
  });

  it('adds and subtracts numbers exactly', () => {
    expect(update('SET a = a + :d', { ':d': { N: '0.1' } }).a).toEqual({ N: '1.1' });
    expect(update('SET a = b - :d', { ':d': { N: '5' } }).a).toEqual({ N: '-3' });
  });

  it('refuses arithmetic on a missing attribute, unless if_not_exists gives it a value', () => {
    expect(() => update('SET c = absent + :d', { ':d': { N: '1' } })).toThrow(
      'The provided expression refers to an attribute that does not exist in the item',
    );
    expect(update('SET c = if_not_exists(c, :z) + :d', { ':z': { N: '0' }, ':d': { N: '1' } }).c).toEqual({
      N: '1',
    });
    expect(update('SET a = if_not_exists(a, :z)', { ':z': { N: '0' } }).a).toEqual({ N: '1' });
  });

  it('refuses arithmetic on what is not a number', () => {
    expect(() => update('SET c = a + s')).toThrow(
      'An operand in the update expression has an incorrect data type',
    );
  });

  it('appends lists in the order given, and refuses to append to a missing list', () => {
    expect(update('SET l = list_append(:h, l)', { ':h': { L: [{ S: 'w' }] } }).l?.L?.map((v) => v.S)).toEqual(
      ['w', 'x', 'y', 'z'],
    );
    expect(() => update('SET c = list_append(absent, :h)', { ':h': { L: [] } })).toThrow(
      'The provided expression refers to an attribute that does not exist in the item',
    );
  });

  it('sets a nested attribute, puts an index past the end at the end, and refuses a path under a missing parent', () => {
    expect(update('SET m.nested = :v', { ':v': { N: '6' } }).m).toEqual({ M: { nested: { N: '6' } } });
    expect(update('SET l[10] = :v', { ':v': { S: 'end' } }).l?.L?.map((v) => v.S)).toEqual([
      'x',
      'y',
      'z',
      'end',
    ]);
    expect(() => update('SET nope.x = :v', { ':v': { N: '1' } })).toThrow(
      'The document path provided in the update expression is invalid for update',
    );
  });

  it('refuses to update a key attribute', () => {
    expect(() => update('SET pk = :v', { ':v': { S: 'other' } })).toThrow(
      'One or more parameter values were invalid: Cannot update attribute pk. This attribute is part of the key',
    );
  });

  it('leaves the item it was given unchanged', () => {
    update('SET a = :v REMOVE l[0]', { ':v': { N: '9' } });
    expect(BEFORE.a).toEqual({ N: '1' });
    expect(BEFORE.l?.L).toHaveLength(3);
  });
});

describe('REMOVE', () => {
  it('removes an attribute, shifts a list after a removed element, and ignores what is missing', () => {
    const after = update('REMOVE s, l[0], absent');
    expect(after.s).toBeUndefined();
    expect(after.l?.L?.map((v) => v.S)).toEqual(['y', 'z']);
    expect(Object.keys(after)).not.toContain('absent');
  });
});

describe('ADD', () => {
  it('creates a missing number or set, adds to a number and unites sets', () => {
    const after = update('ADD cnt :five, a :five, ss :more', {
      ':five': { N: '5' },
      ':more': { SS: ['red', 'green'] },
    });
    expect(after.cnt).toEqual({ N: '5' });
    expect(after.a).toEqual({ N: '6' });
    expect([...(after.ss?.SS ?? [])].sort()).toEqual(['blue', 'green', 'red']);
  });

  it('refuses to add to an attribute of another type, and to add a string or a list', () => {
    expect(() => update('ADD s :n', { ':n': { N: '1' } })).toThrow(
      'An operand in the update expression has an incorrect data type',
    );
    expect(() => update('ADD c :v', { ':v': { S: 'x' } })).toThrow(
      /Incorrect operand type for operator or function; operator: ADD/,
    );
  });
});

describe('DELETE', () => {
  it('removes members from a set, and the attribute with its last member', () => {
    expect(update('DELETE ss :r', { ':r': { SS: ['red', 'absent'] } }).ss).toEqual({ SS: ['blue'] });
    expect(update('DELETE ss :r', { ':r': { SS: ['red', 'blue'] } }).ss).toBeUndefined();
    expect(update('DELETE nothing :r', { ':r': { SS: ['red'] } }).nothing).toBeUndefined();
  });

  it('refuses a set of another type, and a value that is not a set', () => {
    expect(() => update('DELETE ss :r', { ':r': { NS: ['1'] } })).toThrow(
      'An operand in the update expression has an incorrect data type',
    );
    expect(() => update('DELETE ss :r', { ':r': { S: 'red' } })).toThrow(/operator: DELETE/);
  });
});
