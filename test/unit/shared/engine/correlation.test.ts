import { describe, expect, it } from 'vitest';
import {
  asKey,
  correlationKey,
  describeSource,
  readValue,
  replyIdOf,
  WireAttribute,
} from '../../../../shared/engine/correlation.ts';
import type { ValueSource } from '../../../../shared/engine/definition.ts';
import { CorrelationError, ExpressionError } from '../../../../shared/errors.ts';
import { aDefinition, aMessage, anAuctionDefinition, rejectionOf, thrownBy } from './factories.ts';

describe('readValue', () => {
  const message = aMessage(
    { a: { b: 'deep' }, items: [{ sku: 'A-1' }, { sku: 'B-2' }], quote: { rate: 2.9 } },
    { region: 'eu', 'fanin-aggregate-id': 'agg-7' },
  );

  it.each<[string, ValueSource, unknown]>([
    ['an attribute', { source: 'attribute', name: 'region' }, 'eu'],
    ['a missing attribute', { source: 'attribute', name: 'tenant' }, undefined],
    ['a root-anchored path $.a.b', { source: 'path', path: '$.a.b' }, 'deep'],
    ['an indexed path items[1].sku', { source: 'path', path: 'items[1].sku' }, 'B-2'],
    ['a path to a number', { source: 'path', path: 'quote.rate' }, 2.9],
    ['a path that is not there', { source: 'path', path: '$.order.id' }, undefined],
    ['a JSONata expression over the body', { source: 'jsonata', expression: 'body.items[0].sku' }, 'A-1'],
    [
      'a JSONata expression over body and attributes',
      { source: 'jsonata', expression: 'attributes.region & "/" & body.a.b' },
      'eu/deep',
    ],
  ])('reads %s', async (_case, source, expected) => {
    // Prepare
    // (source from the table)

    // Act
    const value = await readValue(source, message);

    // Assess
    expect(value).toStrictEqual(expected);
  });
});

describe('correlationKey', () => {
  it('reads the aggregate id from the fanin-aggregate-id attribute by default', async () => {
    // Prepare
    const definition = aDefinition();
    const message = aMessage({ orderId: 'ignored' }, { [WireAttribute.AGGREGATE_ID]: 'agg-42' });

    // Act
    const key = await correlationKey(definition, message);

    // Assess
    expect(key).toBe('agg-42');
  });

  it("reads the auction id from the body of a self-starting definition (the seed's AuctionID)", async () => {
    // Prepare
    const definition = anAuctionDefinition();
    const message = aMessage({ auctionId: 'auction-9', price: 12 }, { 'fanin-aggregate-id': 'not this' });

    // Act
    const key = await correlationKey(definition, message);

    // Assess
    expect(key).toBe('auction-9');
  });

  it('evaluates a JSONata correlation over { body, attributes }', async () => {
    // Prepare
    const definition = anAuctionDefinition({
      correlation: { source: 'jsonata', expression: 'attributes.market & ":" & body.lot.id' },
    });
    const message = aMessage({ lot: { id: 'L7' } }, { market: 'paris' });

    // Act
    const key = await correlationKey(definition, message);

    // Assess
    expect(key).toBe('paris:L7');
  });

  it.each([
    ['an integer', 42, '42'],
    ['a decimal', 1.5, '1.5'],
    ['zero', 0, '0'],
  ])('turns %s into a string key', async (_case, value, expected) => {
    // Prepare
    const definition = anAuctionDefinition();
    const message = aMessage({ auctionId: value });

    // Act
    const key = await correlationKey(definition, message);

    // Assess
    expect(key).toBe(expected);
  });

  it('accepts a key of exactly 256 characters', async () => {
    // Prepare
    const definition = anAuctionDefinition();
    const id = 'k'.repeat(256);

    // Act
    const key = await correlationKey(definition, aMessage({ auctionId: id }));

    // Assess
    expect(key).toBe(id);
  });

  it.each([
    ['missing', {}, 'is missing (received nothing)'],
    ['empty', { auctionId: '' }, 'is missing (received "")'],
    ['an object', { auctionId: { id: 1 } }, 'is missing (received {"id":1})'],
    ['an array', { auctionId: ['a'] }, 'is missing (received ["a"])'],
    ['a boolean', { auctionId: true }, 'is missing (received true)'],
    ['null', { auctionId: null }, 'is missing (received null)'],
    ['257 characters long', { auctionId: 'k'.repeat(257) }, 'is longer than 256 characters'],
  ])('rejects a value that is %s with a CorrelationError naming the source', async (_case, body, problem) => {
    // Prepare
    const definition = anAuctionDefinition();

    // Act
    const error = await rejectionOf(correlationKey(definition, aMessage(body)));

    // Assess
    expect(error).toBeInstanceOf(CorrelationError);
    expect((error as Error).message).toBe(`correlation (body path $.auctionId) ${problem}`);
  });

  it('names the attribute when the default attribute is absent', async () => {
    // Prepare
    const definition = aDefinition();

    // Act
    const error = await rejectionOf(correlationKey(definition, aMessage({ id: 'x' })));

    // Assess
    expect(error).toBeInstanceOf(CorrelationError);
    expect((error as Error).message).toContain('attribute fanin-aggregate-id');
  });

  it('names the expression when a JSONata correlation yields nothing', async () => {
    // Prepare
    const definition = anAuctionDefinition({ correlation: { source: 'jsonata', expression: 'body.lot.id' } });

    // Act
    const error = await rejectionOf(correlationKey(definition, aMessage({ lot: {} })));

    // Assess
    expect(error).toBeInstanceOf(CorrelationError);
    expect((error as Error).message).toContain('expression body.lot.id');
  });

  it('lets an ExpressionError through when the correlation expression itself fails', async () => {
    // Prepare
    const definition = anAuctionDefinition({
      correlation: { source: 'jsonata', expression: '$error("no lot")' },
    });

    // Act
    const error = await rejectionOf(correlationKey(definition, aMessage({})));

    // Assess
    expect(error).toBeInstanceOf(ExpressionError);
    expect((error as Error).message).toContain('no lot');
  });
});

describe('replyIdOf', () => {
  const attributes = { [WireAttribute.REPLY_ID]: 'attr-id' };

  it("prefers the definition's own source over the attribute and the message id", async () => {
    // Prepare
    const definition = aDefinition({ replyId: { source: 'path', path: '$.bank' } });
    const message = aMessage({ bank: 'bank-3' }, attributes, 'sqs-id');

    // Act
    const replyId = await replyIdOf(definition, message);

    // Assess
    expect(replyId).toBe('bank-3');
  });

  it('falls back to the fanin-reply-id attribute over the message id', async () => {
    // Prepare
    const definition = aDefinition();
    const message = aMessage({}, attributes, 'sqs-id');

    // Act
    const replyId = await replyIdOf(definition, message);

    // Assess
    expect(replyId).toBe('attr-id');
  });

  it('treats an empty fanin-reply-id attribute as absent and falls back to the message id', async () => {
    // Prepare
    const definition = aDefinition();
    const message = aMessage({}, { 'fanin-reply-id': '' }, 'sqs-id');

    // Act
    const replyId = await replyIdOf(definition, message);

    // Assess
    expect(replyId).toBe('sqs-id');
  });

  it('falls back to the transport message id last', async () => {
    // Prepare
    const definition = aDefinition();
    const message = aMessage({}, {}, 'sqs-id');

    // Act
    const replyId = await replyIdOf(definition, message);

    // Assess
    expect(replyId).toBe('sqs-id');
  });

  it('falls back to the fanin-origin-message-id a move gave the message, over its new message id', async () => {
    // Prepare: the distributor re-sent the reply (new SQS id), carrying its first id along
    const definition = aDefinition();
    const original = aMessage({}, {}, 'sqs-id-1');
    const moved = aMessage({}, { [WireAttribute.ORIGIN_MESSAGE_ID]: 'sqs-id-1' }, 'sqs-id-2');

    // Act
    const ids = [await replyIdOf(definition, original), await replyIdOf(definition, moved)];

    // Assess: both copies are one reply
    expect(WireAttribute.ORIGIN_MESSAGE_ID).toBe('fanin-origin-message-id');
    expect(ids).toEqual(['sqs-id-1', 'sqs-id-1']);
  });

  it('takes the fanin-reply-id attribute and the definition source over the origin id', async () => {
    // Prepare
    const message = aMessage(
      { bank: 'bank-3' },
      { ...attributes, [WireAttribute.ORIGIN_MESSAGE_ID]: 'sqs-id-1' },
      'sqs-id-2',
    );

    // Act
    const byAttribute = await replyIdOf(aDefinition(), message);
    const bySource = await replyIdOf(aDefinition({ replyId: { source: 'path', path: '$.bank' } }), message);

    // Assess
    expect(byAttribute).toBe('attr-id');
    expect(bySource).toBe('bank-3');
  });

  it('treats an empty fanin-origin-message-id as absent', async () => {
    // Prepare
    const message = aMessage({}, { [WireAttribute.ORIGIN_MESSAGE_ID]: '' }, 'sqs-id');

    // Act
    const replyId = await replyIdOf(undefined, message);

    // Assess
    expect(replyId).toBe('sqs-id');
  });

  it('works without a definition (a message no definition claims)', async () => {
    // Prepare
    const message = aMessage({}, attributes, 'sqs-id');

    // Act
    const replyId = await replyIdOf(undefined, message);

    // Assess
    expect(replyId).toBe('attr-id');
  });

  it('turns a numeric reply id into a string', async () => {
    // Prepare
    const definition = aDefinition({ replyId: { source: 'path', path: '$.index' } });

    // Act
    const replyId = await replyIdOf(definition, aMessage({ index: 7 }));

    // Assess
    expect(replyId).toBe('7');
  });

  it("does not fall back when the definition's source yields nothing, and names that source", async () => {
    // Prepare
    const definition = aDefinition({ replyId: { source: 'path', path: '$.bank' } });
    const message = aMessage({}, attributes, 'sqs-id');

    // Act
    const error = await rejectionOf(replyIdOf(definition, message));

    // Assess
    expect(error).toBeInstanceOf(CorrelationError);
    expect((error as Error).message).toContain('reply id (body path $.bank)');
  });

  it('rejects a message with no reply id at all', async () => {
    // Prepare
    const message = aMessage({});

    // Act
    const error = await rejectionOf(replyIdOf(aDefinition(), message));

    // Assess
    expect(error).toBeInstanceOf(CorrelationError);
    expect((error as Error).message).toContain('reply id (attribute fanin-reply-id) is missing');
  });
});

describe('asKey', () => {
  it.each([
    ['Infinity', Number.POSITIVE_INFINITY],
    ['NaN', Number.NaN],
    ['undefined', undefined],
  ])('rejects %s', (_case, value) => {
    // Prepare
    const what = 'thing';

    // Act
    const error = thrownBy(() => asKey(value, what));

    // Assess
    expect(error).toBeInstanceOf(CorrelationError);
    expect((error as Error).message).toMatch(/^thing is missing/);
  });

  it('returns a string key unchanged', () => {
    // Prepare
    const value = 'order-1';

    // Act
    const key = asKey(value, 'thing');

    // Assess
    expect(key).toBe('order-1');
  });
});

describe('describeSource', () => {
  it.each<[ValueSource, string]>([
    [{ source: 'attribute', name: 'AuctionID' }, 'attribute AuctionID'],
    [{ source: 'path', path: '$.a' }, 'body path $.a'],
    [{ source: 'jsonata', expression: 'body.a' }, 'expression body.a'],
  ])('describes %o as "%s"', (source, expected) => {
    // Prepare
    // (source from the table)

    // Act
    const description = describeSource(source);

    // Assess
    expect(description).toBe(expected);
  });
});
