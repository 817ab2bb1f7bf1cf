import { describe, expect, it } from 'vitest';
import { WireAttribute } from '../../shared/engine/correlation.ts';
import type { RawMessage } from '../../shared/ports.ts';
import { handleRequest, openingRequestId } from '../../shared/use-cases/fan-out.ts';
import { handleReplies } from '../../shared/use-cases/replies.ts';
import { memoryContext } from '../support/memory-store.ts';
import { aDefinition } from './shared/engine/factories.ts';

/**
 * A refused identifier's reason names where it came from, and a request id is what the limits
 * table says (docs/wire-contract.md, Limits): a string of 1-256 characters.
 */

const PLAIN = aDefinition({ name: 'plain', fanOut: { type: 'none' }, completion: { strategy: 'all' } });

function aMessage(body: unknown, attributes: Record<string, string> = {}): RawMessage {
  return { messageId: `m-${Math.random()}`, body: JSON.stringify(body), attributes, receiveCount: 1 };
}

describe('the reason that refuses a reply id names the attribute that carried it', () => {
  it.each([
    [
      'a fanin-origin-message-id of 257 characters (mutant reply-id-source-origin)',
      { [WireAttribute.ORIGIN_MESSAGE_ID]: 'o'.repeat(257) },
      'reply id (attribute fanin-origin-message-id) is longer than 256 characters',
    ],
    [
      'a fanin-origin-message-id holding U+0001 (mutant reply-id-source-carried)',
      { [WireAttribute.ORIGIN_MESSAGE_ID]: 'o-\u0001' },
      'reply id (attribute fanin-origin-message-id) holds U+0001',
    ],
    [
      'a fanin-reply-id of 257 characters, beside an origin id',
      { [WireAttribute.REPLY_ID]: 'r'.repeat(257), [WireAttribute.ORIGIN_MESSAGE_ID]: 'o-1' },
      'reply id (attribute fanin-reply-id) is longer than 256 characters',
    ],
  ])('%s', async (_, attributes, reason) => {
    // Prepare: an open aggregate the reply names.
    const { ctx, ports } = memoryContext([PLAIN]);
    await handleRequest(ctx, aMessage({ definition: 'plain', aggregateId: 'ids-1', expected: 2 }));

    // Act
    await handleReplies(ctx, [aMessage({ v: 1 }, { [WireAttribute.AGGREGATE_ID]: 'ids-1', ...attributes })]);

    // Assess: refused with the reason, nothing recorded.
    const reasons = ports.outputs.to('error').map((e) => e.reason as string);
    expect(reasons).toHaveLength(1);
    expect(reasons[0]).toContain(reason);
    expect((await ports.store.readAggregate('ids-1')).replies).toEqual([]);
  });
});

describe('a request id is a string of 1-256 characters', () => {
  it.each([
    ['empty (mutant request-id-empty-fallback)', '', 'requestId is empty'],
    [
      'a number (mutant request-id-number)',
      12,
      'requestId must be a string of 1-256 characters (received a number: 12)',
    ],
    ['null', null, 'requestId must be a string of 1-256 characters (received null)'],
  ])(
    'a requestId that is %s is refused to the error output and opens nothing',
    async (_, requestId, reason) => {
      // Prepare
      const { ctx, ports } = memoryContext([PLAIN]);

      // Act
      await handleRequest(
        ctx,
        aMessage({ definition: 'plain', aggregateId: 'rid-x', requestId, expected: 1 }),
      );

      // Assess
      expect(ports.outputs.to('error').map((e) => e.reason)).toEqual([reason]);
      expect(await ports.store.getHeader('rid-x')).toBeUndefined();
    },
  );

  it('a request id in the attribute, as the client sends it, opens its aggregate under that id', async () => {
    // Prepare
    const { ctx, ports } = memoryContext([PLAIN]);

    // Act
    await handleRequest(
      ctx,
      aMessage(
        { definition: 'plain', aggregateId: 'rid-y', expected: 1 },
        { [WireAttribute.REQUEST_ID]: '12' },
      ),
    );

    // Assess
    expect(ports.outputs.to('error')).toEqual([]);
    expect(openingRequestId(await ports.store.getHeader('rid-y'))).toBe('12');
  });
});
