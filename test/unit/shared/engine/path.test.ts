import { describe, expect, it } from 'vitest';
import { isValidPath, parsePath, readPath } from '../../../../shared/engine/path.ts';

const document = {
  a: { b: 'deep', zero: 0, empty: '', nothing: null },
  items: [{ sku: 'A-1' }, { sku: 'B-2', tags: ['x', 'y'] }],
  'with-dash': { under_score: 1 },
};

describe('readPath', () => {
  it.each<[string, unknown]>([
    ['$.a.b', 'deep'],
    ['a.b', 'deep'],
    ['items[1].sku', 'B-2'],
    ['$.items[1].tags[0]', 'x'],
    ['items.0.sku', 'A-1'],
    ['with-dash.under_score', 1],
    ['a.zero', 0],
    ['a.empty', ''],
    ['a.nothing', null],
    ['  $.a.b  ', 'deep'],
    ['$', document],
  ])('reads %s', (path, expected) => {
    // Prepare
    // (path from the table)

    // Act
    const value = readPath(document, path);

    // Assess
    expect(value).toStrictEqual(expected);
  });

  it.each([
    ['a missing key', '$.order.id'],
    ['an index past the end', 'items[5].sku'],
    ['through null', 'a.nothing.deeper'],
    ['through a string', 'a.b.length'],
    ['through a number', 'a.zero.x'],
    ['an inherited member', 'a.constructor'],
    ['an inherited method', 'items.toString'],
    ['the prototype', '__proto__'],
  ])('gives undefined for %s', (_case, path) => {
    // Prepare
    // (path from the table)

    // Act
    const value = readPath(document, path);

    // Assess
    expect(value).toBeUndefined();
  });

  it.each([
    ['undefined', undefined],
    ['null', null],
    ['a string', 'text'],
    ['a number', 7],
  ])('gives undefined for a path into %s', (_case, body) => {
    // Prepare
    const path = '$.a';

    // Act
    const value = readPath(body, path);

    // Assess
    expect(value).toBeUndefined();
  });

  it('reads a document that is itself a number at $', () => {
    // Prepare
    const body = 42;

    // Act
    const value = readPath(body, '$');

    // Assess
    expect(value).toBe(42);
  });
});

describe('parsePath', () => {
  it.each<[string, string[]]>([
    ['$', []],
    ['$.a.b', ['a', 'b']],
    ['a.b', ['a', 'b']],
    ['items[1].sku', ['items', '1', 'sku']],
    ['$.a[0][12]', ['a', '0', '12']],
    ['a.0', ['a', '0']],
    ['with-dash.under_score', ['with-dash', 'under_score']],
    [' $.a ', ['a']],
  ])('splits %s', (path, expected) => {
    // Prepare
    // (path from the table)

    // Act
    const segments = parsePath(path);

    // Assess
    expect(segments).toEqual(expected);
  });
});

describe('isValidPath', () => {
  it.each([
    '$',
    '$.a',
    'a',
    'a.b',
    '$.quote.rate',
    'items[0].sku',
    '$.a[0][1]',
    'a.0',
    'with-dash',
    '_a',
    ' $.a ',
  ])('accepts %s', (path) => {
    // Prepare
    // (path from the table)

    // Act
    const valid = isValidPath(path);

    // Assess
    expect(valid).toBe(true);
  });

  it.each([
    ['empty', ''],
    ['blank', '   '],
    ['a double dot', 'a..b'],
    ['a leading dot', '.a'],
    ['a trailing dot', 'a.'],
    ['a bare $.', '$.'],
    ['a leading digit', '1a'],
    ['a non-numeric index', 'a[x]'],
    ['a negative index', 'a[-1]'],
    ['an unclosed index', 'a[1'],
    ['a space inside', 'a b'],
    ['$$', '$$'],
    ['a JSONata variable', '$a'],
    ['a JSONata expression', '$sum(a)'],
    ['a root index', '[0]'],
  ])('rejects %s', (_case, path) => {
    // Prepare
    // (path from the table)

    // Act
    const valid = isValidPath(path);

    // Assess
    expect(valid).toBe(false);
  });
});
