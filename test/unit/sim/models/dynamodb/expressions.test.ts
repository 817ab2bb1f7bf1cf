import { describe, expect, it } from 'vitest';
import {
  type Condition,
  Placeholders,
  parseCondition,
  parseProjection,
  parseUpdate,
} from '../../../../../sim/models/dynamodb/expressions.ts';

/**
 * DynamoDB's expression grammar as its developer guide writes it ("Condition and filter
 * expressions, operators, and functions", "Update expressions", "Reserved words"): precedence
 * (comparisons, then NOT, then AND, then OR), parentheses, case-sensitive function names with
 * their arity, placeholders defined and used, reserved words refused as bare names, one section
 * per update clause, overlapping update paths refused. The conformance test sends a handful of
 * these to DynamoDB Local; this is the parser's own fast test, one rule at a time.
 */

const none = () => new Placeholders(undefined, undefined);
const values = (...names: string[]) =>
  new Placeholders(undefined, Object.fromEntries(names.map((n) => [n, { S: n }])));

/** The shape of a condition: its operators nested, operands left out. */
function shape(c: Condition): unknown {
  switch (c.kind) {
    case 'and':
    case 'or':
      return [c.kind, shape(c.a), shape(c.b)];
    case 'not':
      return ['not', shape(c.a)];
    case 'cmp':
      return c.op;
    case 'fn':
      return c.fn;
    default:
      return c.kind;
  }
}

const condition = (text: string, p = values(':a', ':b', ':c')) =>
  parseCondition(text, 'ConditionExpression', p);

describe('condition expressions', () => {
  it('binds AND tighter than OR, NOT tighter than AND, and parentheses tightest', () => {
    expect(shape(condition('x = :a OR y = :b AND z = :c'))).toEqual(['or', '=', ['and', '=', '=']]);
    expect(shape(condition('NOT x = :a AND y = :b'))).toEqual(['and', ['not', '='], '=']);
    expect(shape(condition('(x = :a OR y = :b) AND z = :c'))).toEqual(['and', ['or', '=', '='], '=']);
  });

  it('reads keywords in any case but function names only in lower case', () => {
    expect(shape(condition('x between :a and :b or not attribute_exists(y)'))).toEqual([
      'or',
      'between',
      ['not', 'attribute_exists'],
    ]);
    expect(() => condition('ATTRIBUTE_EXISTS(x)')).toThrow(/^Invalid ConditionExpression: /);
  });

  it('parses every comparator, BETWEEN, IN and the five functions', () => {
    for (const op of ['=', '<>', '<', '<=', '>', '>='])
      expect(shape(condition(`x ${op} :a`, values(':a')))).toBe(op);
    expect(shape(condition('x IN (:a, :b, :c)'))).toBe('in');
    expect(shape(condition('size(x) > :a', values(':a')))).toBe('>');
    for (const fn of ['begins_with', 'contains', 'attribute_type'])
      expect(shape(condition(`${fn}(x, :a)`, values(':a')))).toBe(fn);
  });

  it('refuses a function with the wrong number of operands', () => {
    expect(() => condition('attribute_exists(x, :a)', values(':a'))).toThrow(
      /Incorrect number of operands for operator or function; operator or function: attribute_exists, number of operands: 2/,
    );
    expect(() => condition('begins_with(x)')).toThrow(
      /Incorrect number of operands for operator or function; operator or function: begins_with, number of operands: 1/,
    );
  });

  it('refuses an empty expression, a trailing token, an unknown character and an unclosed parenthesis', () => {
    expect(() => condition('')).toThrow('Invalid ConditionExpression: The expression can not be empty;');
    expect(() => condition('x = :a :b')).toThrow(/Syntax error; token: ":b"/);
    expect(() => condition('x = :a ; y', values(':a'))).toThrow(/Syntax error; token: ";"/);
    expect(() => condition('(x = :a', values(':a'))).toThrow(/Syntax error; token: "<EOF>"/);
  });

  it('is a ValidationException, named after the expression it is in', () => {
    let error: unknown;
    try {
      parseCondition('x = ', 'FilterExpression', none());
    } catch (e) {
      error = e;
    }
    expect(error).toMatchObject({ name: 'ValidationException', $fault: 'client' });
    expect((error as Error).message).toMatch(/^Invalid FilterExpression: /);
  });
});

describe('placeholders', () => {
  it('resolves names and values, and records which were used', () => {
    const p = new Placeholders({ '#n': 'name', '#u': 'unused' }, { ':v': { S: 'x' }, ':w': { S: 'y' } });
    const c = parseCondition('#n = :v', 'ConditionExpression', p);
    expect(c).toMatchObject({
      kind: 'cmp',
      a: { kind: 'path', path: [{ name: 'name' }] },
      b: { value: { S: 'x' } },
    });
    expect([...p.usedNames]).toEqual(['#n']);
    expect([...p.usedValues]).toEqual([':v']);
  });

  it('refuses a placeholder that is not defined, naming it', () => {
    expect(() => condition('#missing = :a', values(':a'))).toThrow(
      /An expression attribute name used in the document path is not defined; attribute name: #missing/,
    );
    expect(() => condition('x = :nope', values(':a'))).toThrow(
      /An expression attribute value used in expression is not defined; attribute value: :nope/,
    );
  });

  it('refuses defined placeholders no expression used, names first, and empty maps', () => {
    const p = new Placeholders({ '#a': 'a', '#b': 'b' }, { ':v': { N: '1' }, ':w': { N: '2' } });
    parseCondition('#a = :v', 'ConditionExpression', p);
    expect(() => p.checkAllUsed()).toThrow(
      'Value provided in ExpressionAttributeNames unused in expressions: keys: {#b}',
    );
    const q = new Placeholders(undefined, { ':v': { N: '1' }, ':w': { N: '2' } });
    parseCondition('a = :v', 'ConditionExpression', q);
    expect(() => q.checkAllUsed()).toThrow(
      'Value provided in ExpressionAttributeValues unused in expressions: keys: {:w}',
    );
    expect(() => new Placeholders({}, undefined)).toThrow('ExpressionAttributeNames must not be empty');
    expect(() => new Placeholders(undefined, {})).toThrow('ExpressionAttributeValues must not be empty');
  });
});

describe('reserved words', () => {
  it('refuses a reserved word as a bare name in any case, anywhere in a path, and takes it through a placeholder', () => {
    expect(() => condition('status = :a', values(':a'))).toThrow(
      /Attribute name is a reserved keyword; reserved keyword: status/,
    );
    expect(() => condition('Data = :a', values(':a'))).toThrow(/reserved keyword: Data/);
    expect(() => condition('a.ttl = :a', values(':a'))).toThrow(/reserved keyword: ttl/);
    expect(() => parseProjection('name', none())).toThrow(/reserved keyword: name/);
    const p = new Placeholders({ '#s': 'status' }, { ':a': { S: 'x' } });
    expect(parseCondition('#s = :a', 'ConditionExpression', p)).toMatchObject({
      a: { path: [{ name: 'status' }] },
    });
  });

  it('takes names that only contain a reserved word', () => {
    expect(shape(condition('statusCode = :a AND countOf = :b'))).toEqual(['and', '=', '=']);
  });
});

describe('document paths and projections', () => {
  it('reads nested names and list indexes', () => {
    expect(parseProjection('a.b[2].c, d', none())).toEqual([
      [{ name: 'a' }, { name: 'b' }, { index: 2 }, { name: 'c' }],
      [{ name: 'd' }],
    ]);
  });

  it('refuses an index that is not a number and a projection of values', () => {
    expect(() => parseProjection('a[x]', none())).toThrow(/Syntax error/);
    expect(() => parseProjection('a, :v', values(':v'))).toThrow(/Syntax error/);
  });
});

describe('update expressions', () => {
  const update = (text: string, p = values(':a', ':b', ':c')) => parseUpdate(text, p);

  it('reads the four clauses in any order, each with comma-separated actions', () => {
    const actions = update('REMOVE r1, r2 SET s = :a, t = if_not_exists(t, :b) + :c ADD n :a DELETE d :b');
    expect(
      actions.map(
        (a) => `${a.clause} ${'name' in (a.path[0] ?? {}) ? (a.path[0] as { name: string }).name : ''}`,
      ),
    ).toEqual(['REMOVE r1', 'REMOVE r2', 'SET s', 'SET t', 'ADD n', 'DELETE d']);
    expect(actions[3]?.value).toMatchObject({ kind: 'arith', op: '+', a: { kind: 'if_not_exists' } });
    expect(update('SET l = list_append(l, :a)', values(':a'))[0]?.value).toMatchObject({
      kind: 'list_append',
    });
  });

  it('refuses a clause used twice', () => {
    expect(() => update('SET a = :a SET b = :b', values(':a', ':b'))).toThrow(
      /The "SET" section can only be used once in an update expression/,
    );
  });

  it('refuses two actions on the same path or on a path and its parent', () => {
    expect(() => update('SET a = :a REMOVE a', values(':a'))).toThrow(
      /Two document paths overlap with each other; must remove or rewrite one of these paths; path one: \[a\], path two: \[a\]/,
    );
    expect(() => update('SET a.b = :a, a = :b', values(':a', ':b'))).toThrow(
      /path one: \[a, b\], path two: \[a\]/,
    );
    expect(() => update('REMOVE l[1], l[1]', none())).toThrow(/Two document paths overlap/);
  });

  it('takes actions on sibling paths, which do not overlap', () => {
    expect(update('SET a.b = :a, a.c = :b, l[0] = :c REMOVE l[1]')).toHaveLength(4);
  });

  it('needs a value placeholder after ADD and DELETE, and = after a SET path', () => {
    expect(() => update('ADD n m', none())).toThrow(/Syntax error/);
    expect(() => update('DELETE s', none())).toThrow(/Syntax error/);
    expect(() => update('SET a :a', values(':a'))).toThrow(/Syntax error/);
    expect(() => update('PUT a = :a', values(':a'))).toThrow(/Invalid UpdateExpression: Syntax error/);
  });
});
