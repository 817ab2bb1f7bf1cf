import { describe, expect, it } from 'vitest';
import { evaluateCondition, project } from '../../../../../sim/models/dynamodb/evaluate.ts';
import {
  Placeholders,
  parseCondition,
  parseProjection,
} from '../../../../../sim/models/dynamodb/expressions.ts';
import type { AV, Item } from '../../../../../sim/models/dynamodb/values.ts';

/**
 * Conditions evaluated as DynamoDB's developer guide documents them: a comparison with a missing
 * attribute is false (`=`, `<`, `<=`, `>`, `>=`), values of different types are unequal and unordered,
 * BETWEEN is inclusive, `begins_with` on strings and binaries, `contains` on a string, a set or a
 * list, `attribute_type` with the ten type names, `size` of a string, binary, list, map or set.
 * Each expected answer was also seen from DynamoDB Local. The conformance test checks a few
 * conditions against it; this is the module's own fast test, one function at a time.
 */

const ITEM: Item = {
  s: { S: 'hello' },
  n: { N: '10' },
  b: { B: new Uint8Array([1, 2, 3]) },
  l: { L: [{ S: 'x' }, { N: '1' }] },
  m: { M: { k: { S: 'v' }, deep: { L: [{ N: '7' }] } } },
  ss: { SS: ['red', 'blue'] },
  ns: { NS: ['1', '2', '3'] },
  t: { BOOL: true },
};

function holds(text: string, values: Record<string, AV> = {}, item: Item | null = ITEM): boolean {
  const p = new Placeholders(undefined, Object.keys(values).length ? values : undefined);
  return evaluateCondition(
    parseCondition(text, 'ConditionExpression', p),
    item ?? undefined,
    'ConditionExpression',
  );
}

describe('comparisons', () => {
  it('compares numbers by value and strings by bytes', () => {
    expect(holds('n = :v', { ':v': { N: '10.0' } })).toBe(true);
    expect(holds('n > :v', { ':v': { N: '9' } })).toBe(true);
    expect(holds('s < :v', { ':v': { S: 'help' } })).toBe(true);
    expect(holds('n <> :v', { ':v': { N: '10' } })).toBe(false);
  });

  it('is false when an operand is missing, except through NOT', () => {
    expect(holds('absent = :v', { ':v': { S: 'x' } })).toBe(false);
    for (const op of ['<', '<=', '>', '>='])
      expect(holds(`absent ${op} :v`, { ':v': { S: 'x' } })).toBe(false);
    expect(holds('NOT absent = :v', { ':v': { S: 'x' } })).toBe(true);
  });

  it('finds values of different types unequal and unordered', () => {
    expect(holds('n = :v', { ':v': { S: '10' } })).toBe(false);
    expect(holds('n <> :v', { ':v': { S: '10' } })).toBe(true);
    expect(holds('n < :v', { ':v': { S: '99' } })).toBe(false);
    expect(holds('n >= :v', { ':v': { S: '1' } })).toBe(false);
  });

  it('reads nested paths and list elements', () => {
    expect(holds('m.deep[0] = :v', { ':v': { N: '7' } })).toBe(true);
    expect(holds('l[1] = :v', { ':v': { N: '1' } })).toBe(true);
    expect(holds('attribute_exists(l[5])')).toBe(false);
  });

  it('takes BETWEEN inclusively at both ends, and IN as any of the list', () => {
    expect(holds('n BETWEEN :lo AND :hi', { ':lo': { N: '10' }, ':hi': { N: '10' } })).toBe(true);
    expect(holds('n BETWEEN :lo AND :hi', { ':lo': { N: '11' }, ':hi': { N: '20' } })).toBe(false);
    expect(holds('s IN (:a, :b)', { ':a': { S: 'x' }, ':b': { S: 'hello' } })).toBe(true);
    expect(holds('s IN (:a)', { ':a': { S: 'x' } })).toBe(false);
  });
});

describe('functions', () => {
  it('tells whether an attribute exists, and holds attribute_not_exists when there is no item', () => {
    expect(holds('attribute_exists(s) AND attribute_not_exists(nope)')).toBe(true);
    expect(holds('attribute_not_exists(s)', {}, null)).toBe(true);
    expect(holds('attribute_exists(s)', {}, null)).toBe(false);
  });

  it('checks a type by its name and refuses an unknown type name', () => {
    expect(holds('attribute_type(ss, :t)', { ':t': { S: 'SS' } })).toBe(true);
    expect(holds('attribute_type(n, :t)', { ':t': { S: 'S' } })).toBe(false);
    expect(() => holds('attribute_type(n, :t)', { ':t': { S: 'STRING' } })).toThrow(
      /^Invalid ConditionExpression: Invalid attribute type name found.*STRING/,
    );
  });

  it('matches a prefix of a string or a binary, and refuses a number as the prefix', () => {
    expect(holds('begins_with(s, :p)', { ':p': { S: 'hel' } })).toBe(true);
    expect(holds('begins_with(s, :p)', { ':p': { S: 'hello!' } })).toBe(false);
    expect(holds('begins_with(b, :p)', { ':p': { B: new Uint8Array([1, 2]) } })).toBe(true);
    expect(holds('begins_with(n, :p)', { ':p': { S: '1' } })).toBe(false);
    expect(() => holds('begins_with(s, :p)', { ':p': { N: '1' } })).toThrow(
      /Incorrect operand type for operator or function; operator or function: begins_with, operand type: N/,
    );
  });

  it('finds a substring, a set member or a list element with contains', () => {
    expect(holds('contains(s, :v)', { ':v': { S: 'ell' } })).toBe(true);
    expect(holds('contains(ss, :v)', { ':v': { S: 'red' } })).toBe(true);
    expect(holds('contains(ss, :v)', { ':v': { S: 're' } })).toBe(false);
    expect(holds('contains(ns, :v)', { ':v': { N: '2.0' } })).toBe(true);
    expect(holds('contains(l, :v)', { ':v': { S: 'x' } })).toBe(true);
    expect(holds('contains(nope, :v)', { ':v': { S: 'x' } })).toBe(false);
  });

  it('sizes a string, a binary, a list, a map and a set', () => {
    const size = (path: string, n: number) => holds(`size(${path}) = :n`, { ':n': { N: String(n) } });
    expect(size('s', 5)).toBe(true);
    expect(size('b', 3)).toBe(true);
    expect(size('l', 2)).toBe(true);
    expect(size('m', 2)).toBe(true);
    expect(size('ns', 3)).toBe(true);
    expect(size('nope', 0)).toBe(false);
    // DynamoDB Local counts a string's UTF-16 units: 'héllo😀' is 7 (6 characters, 11 bytes).
    expect(holds('size(u) = :n', { ':n': { N: '7' } }, { u: { S: 'héllo😀' } })).toBe(true);
  });
});

describe('projections', () => {
  it('keeps the named paths nested as in the item, and leaves out what is missing', () => {
    const paths = parseProjection('s, m.k, l[1], nope, m.nope', new Placeholders(undefined, undefined));
    expect(project(ITEM, paths)).toEqual({
      s: { S: 'hello' },
      m: { M: { k: { S: 'v' } } },
      l: { L: [{ N: '1' }] },
    });
  });
});

describe('edges, as DynamoDB Local answers them (the model once answered each differently)', () => {
  it('holds a <> b when a is missing (a missing attribute equals nothing), and both missing', () => {
    expect(holds('absent <> :v', { ':v': { S: 'x' } })).toBe(true);
    expect(holds('absent <> absent2')).toBe(true);
    expect(holds('NOT (absent <> :v)', { ':v': { S: 'x' } })).toBe(false);
  });

  it('evaluates size() of a number or a boolean to no value (the condition false), not an error', () => {
    expect(holds('size(n) = :v', { ':v': { N: '2' } })).toBe(false);
    expect(holds('size(t) = :v', { ':v': { N: '1' } })).toBe(false);
  });

  it('evaluates begins_with with a value first to false, not an error', () => {
    expect(holds('begins_with(:v, n)', { ':v': { S: '1' } })).toBe(false);
  });

  it('refuses IN with more than 100 operands', () => {
    const values = Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`:v${i}`, { N: String(i) }]));
    expect(() => holds(`n IN (${Object.keys(values).join(', ')})`, values)).toThrow(
      'Invalid ConditionExpression: The IN operator is provided with too many operands; number of operands: 101',
    );
  });

  it('names an unknown function (a function name in upper case) as such', () => {
    expect(() => holds('ATTRIBUTE_EXISTS(n)')).toThrow(
      'Invalid ConditionExpression: Invalid function name; function: ATTRIBUTE_EXISTS',
    );
  });
});
