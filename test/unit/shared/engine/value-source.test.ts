import { describe, expect, it } from 'vitest';
import { PathSchema, ValueSourceSchema } from '../../../../shared/engine/value-source.ts';

/** Where a value comes from (docs/definitions.md): a message attribute, a body path or a JSONata expression. */
describe('value sources', () => {
  it.each([
    { source: 'attribute', name: 'fanin-aggregate-id' },
    { source: 'path', path: '$.quote.rate' },
    { source: 'path', path: 'items[0].sku' },
    { source: 'jsonata', expression: 'body.rate * 100' },
  ])('accepts %j', (source) => {
    expect(ValueSourceSchema.parse(source)).toEqual(source);
  });

  it.each([
    ['an unknown source', { source: 'header', name: 'x' }],
    ['an empty attribute name', { source: 'attribute', name: '' }],
    ['an attribute name over 256 characters', { source: 'attribute', name: 'a'.repeat(257) }],
    ['an empty expression', { source: 'jsonata', expression: '' }],
    ['an expression over 4096 characters', { source: 'jsonata', expression: 'a'.repeat(4097) }],
    ['an extra field', { source: 'path', path: '$.a', name: 'x' }],
    ['a path that is not one', { source: 'path', path: '$..[' }],
  ])('refuses %s', (_, source) => {
    expect(ValueSourceSchema.safeParse(source).success).toBe(false);
  });

  it('says what a path looks like when one is refused', () => {
    const parsed = PathSchema.safeParse('not a path!');
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues[0]?.message).toBe('must be a path such as $.quote.rate or items[0].sku');
  });

  it('accepts an attribute name of exactly 256 characters', () => {
    expect(ValueSourceSchema.safeParse({ source: 'attribute', name: 'a'.repeat(256) }).success).toBe(true);
  });
});
