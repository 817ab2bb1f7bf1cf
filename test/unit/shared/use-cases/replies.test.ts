import { describe, expect, it } from 'vitest';
import { AggregateStatus } from '../../../../shared/engine/constants.ts';
import { WireAttribute } from '../../../../shared/engine/correlation.ts';
import type { AggregateHeader, RawMessage } from '../../../../shared/ports.ts';
import { QueueRole } from '../../../../shared/topology/topology.ts';
import { handleRequest } from '../../../../shared/use-cases/fan-out.ts';
import { handleReplies } from '../../../../shared/use-cases/replies.ts';
import { memoryContext } from '../../../support/memory-store.ts';
import { aDefinition } from '../engine/factories.ts';

/**
 * The reply use case over in-memory ports (test/support/memory-store.ts): what it does, without
 * the emulators. The protocol under concurrency and crashes is the emulator suites' to prove
 * (test/integration/guarantees/).
 */

const ORDERS = aDefinition({ name: 'orders', completion: { strategy: 'all' }, timeoutSeconds: 60 });
const OPENED = 1_000_000;

/** An open aggregate of `orders` expecting `expected` replies. */
function anOpenHeader(aggregateId: string, expected = 2): AggregateHeader {
  return {
    aggregateId,
    definition: ORDERS.name,
    status: AggregateStatus.OPEN,
    expected,
    received: 0,
    lateCount: 0,
    openedAt: OPENED,
    deadline: OPENED + 60_000,
    params: {},
  };
}

/** A reply as the reply queue delivers it. */
function aReply(aggregateId: string, replyId: string, body: unknown = { quote: replyId }): RawMessage {
  return {
    messageId: `m-${aggregateId}-${replyId}-${Math.random()}`,
    body: JSON.stringify(body),
    attributes: { [WireAttribute.AGGREGATE_ID]: aggregateId, [WireAttribute.REPLY_ID]: replyId },
    receiveCount: 1,
  };
}

describe('the reply use case over in-memory ports', () => {
  it('records a reply of an open aggregate and leaves it open while replies are missing', async () => {
    // Prepare
    const { ctx, ports } = memoryContext([ORDERS]);
    await ports.store.openAggregate(anOpenHeader('a-1'));

    // Act
    const failed = await handleReplies(ctx, [aReply('a-1', '0')]);

    // Assess
    expect(failed.size).toBe(0);
    const { header, replies } = await ports.store.readAggregate('a-1');
    expect(header?.status).toBe(AggregateStatus.OPEN);
    expect(replies.map((r) => r.replyId)).toEqual(['0']);
    expect(ports.outputs.published).toEqual([]);
  });

  it('records a redelivered reply once: the first payload stays', async () => {
    // Prepare
    const { ctx, ports } = memoryContext([ORDERS]);
    await ports.store.openAggregate(anOpenHeader('a-2', 3));

    // Act
    await handleReplies(ctx, [aReply('a-2', '0')]);
    await handleReplies(ctx, [aReply('a-2', '0', { quote: 'again' })]);

    // Assess: one item, the first payload
    const { replies } = await ports.store.readAggregate('a-2');
    expect(replies).toHaveLength(1);
    expect(JSON.parse(replies[0]?.payload ?? '')).toEqual({ quote: '0' });
    expect(ports.outputs.published).toEqual([]);
  });

  it('completes the aggregate with its last reply: one result, sealed with every reply, closed', async () => {
    // Prepare
    const { ctx, ports } = memoryContext([ORDERS]);
    await ports.store.openAggregate(anOpenHeader('a-3'));
    await handleReplies(ctx, [aReply('a-3', '0')]);

    // Act
    ports.now.at = OPENED + 5_000;
    await handleReplies(ctx, [aReply('a-3', '1')]);

    // Assess
    const completed = ports.outputs.to(QueueRole.COMPLETED);
    expect(completed).toHaveLength(1);
    expect(completed[0]).toMatchObject({ aggregateId: 'a-3', definition: 'orders' });
    const header = await ports.store.getHeader('a-3');
    expect(header?.status).toBe(AggregateStatus.CLOSED);
    expect([...(header?.members ?? [])].sort()).toEqual(['0', '1']);
    expect(await ports.store.dueItems(Number.MAX_SAFE_INTEGER, 10)).toEqual([]);
  });

  it('routes a reply that comes after completion to the late output, once, and the result stays as sealed', async () => {
    // Prepare: an aggregate of one reply, completed
    const { ctx, ports } = memoryContext([ORDERS]);
    await ports.store.openAggregate(anOpenHeader('a-4', 1));
    await handleReplies(ctx, [aReply('a-4', '0')]);

    // Act: a reply id the seal did not fix, delivered twice
    const late = aReply('a-4', 'extra');
    await handleReplies(ctx, [late]);
    await handleReplies(ctx, [late]);

    // Assess
    expect(ports.outputs.to(QueueRole.COMPLETED)).toHaveLength(1);
    const lates = ports.outputs.to(QueueRole.LATE);
    expect(lates.length).toBeGreaterThanOrEqual(1);
    expect(new Set(lates.map((m) => m.id)).size).toBe(1);
    const header = await ports.store.getHeader('a-4');
    expect(header?.members).toEqual(['0']);
    expect(header?.lateCount).toBe(1);
  });
});

/** A refused reply id's reason names where it came from (docs/wire-contract.md, Limits). */

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
