import { describe, expect, it, vi } from 'vitest';
import { AggregateStatus } from '../../../../shared/engine/constants.ts';
import type { Definition } from '../../../../shared/engine/definition.ts';
import type { AggregateHeader } from '../../../../shared/ports.ts';
import { QueueRole } from '../../../../shared/topology/topology.ts';
import { consolidateHeld, handleUnknown, publishUnknown } from '../../../../shared/use-cases/held.ts';
import type { Reply } from '../../../../shared/use-cases/record-replies.ts';
import { memoryContext } from '../../../support/memory-store.ts';
import { aDefinition } from '../engine/factories.ts';

/**
 * Replies to an aggregate that does not exist yet (docs/definitions.md, `unknownTimeoutSeconds`;
 * docs/wire-contract.md, the unknown output): with a timeout of 0 they go to the unknown output at
 * once, else they are held, and consolidated into their aggregate once it opens — each recorded
 * once, and a reply is either counted or reported unknown, never both.
 */
const NOW = 1_000_000;
const HOLDING = aDefinition({ name: 'orders', unknownTimeoutSeconds: 300, timeoutSeconds: 60 });
const AT_ONCE = aDefinition({ name: 'orders', unknownTimeoutSeconds: 0, timeoutSeconds: 60 });
const noDeadlineHandling = async () => {
  throw new Error('the deadline is not due in these tests');
};

function aReply(definition: Definition, replyId = '0', body: unknown = { quote: replyId }): Reply {
  const raw = {
    messageId: `m-${replyId}`,
    body: JSON.stringify(body),
    attributes: {
      'fanin-aggregate-id': 'a-1',
      'fanin-reply-id': replyId,
      'fanin-definition': definition.name,
    },
    receiveCount: 1,
  };
  return {
    raw,
    inbound: { body, attributes: raw.attributes, messageId: raw.messageId },
    aggregateId: 'a-1',
    replyId,
    messageId: raw.messageId,
    claimed: definition,
  };
}

function anOpenHeader(expected = 2): AggregateHeader {
  return {
    aggregateId: 'a-1',
    definition: 'orders',
    status: AggregateStatus.OPEN,
    expected,
    received: 0,
    lateCount: 0,
    openedAt: NOW + 10_000,
    deadline: NOW + 70_000,
    closeBy: NOW + 70_000,
    params: { timeoutSeconds: 60 },
  };
}

describe('a reply whose aggregate does not exist', () => {
  it('goes to the unknown output at once with an unknown timeout of 0, and is held nowhere', async () => {
    const { ctx, ports } = memoryContext([AT_ONCE]);
    await handleUnknown(ctx, aReply(AT_ONCE), noDeadlineHandling);
    expect(ports.outputs.to(QueueRole.UNKNOWN)).toMatchObject([
      {
        id: 'a-1/unknown/0',
        type: 'fanin.reply.unknown',
        aggregateId: 'a-1',
        replyId: '0',
        reason: 'no such aggregate',
      },
    ]);
    expect(await ports.store.listHeld('a-1')).toEqual([]);
  });

  it('is held until its unknown timeout, with a timer for it, and reported nowhere yet', async () => {
    const { ctx, ports } = memoryContext([HOLDING]);
    await handleUnknown(ctx, aReply(HOLDING), noDeadlineHandling);
    expect(await ports.store.listHeld('a-1')).toMatchObject([
      { aggregateId: 'a-1', replyId: '0', definition: 'orders', receivedAt: NOW, dueAt: NOW + 300_000 },
    ]);
    expect(ports.timers.armed).toEqual([
      { kind: 'held', aggregateId: 'a-1', replyId: '0', dueAt: NOW + 300_000 },
    ]);
    expect(ports.outputs.published).toEqual([]);
  });

  it('is recorded at once when its aggregate opened between the look and the hold', async () => {
    const { ctx, ports } = memoryContext([HOLDING]);
    await ports.store.openAggregate(anOpenHeader());
    await handleUnknown(ctx, aReply(HOLDING), noDeadlineHandling);
    expect((await ports.store.readAggregate('a-1')).replies.map((r) => r.replyId)).toEqual(['0']);
    expect(await ports.store.listHeld('a-1')).toEqual([]);
  });

  it('is recorded, not reported unknown, when its aggregate opened between the look and the mark', async () => {
    const { ctx, ports } = memoryContext([AT_ONCE]);
    await ports.store.openAggregate(anOpenHeader());
    const reply = aReply(AT_ONCE);
    await publishUnknown(ctx, 'a-1', '0', reply.raw, 'orders', noDeadlineHandling, reply);
    expect(ports.outputs.to(QueueRole.UNKNOWN)).toEqual([]);
    expect((await ports.store.readAggregate('a-1')).replies.map((r) => r.replyId)).toEqual(['0']);
  });
});

describe('consolidating held replies', () => {
  it('does nothing while the aggregate does not exist', async () => {
    const { ctx, ports } = memoryContext([HOLDING]);
    await handleUnknown(ctx, aReply(HOLDING), noDeadlineHandling);
    expect(await consolidateHeld(ctx, 'a-1')).toBe(false);
    expect(await ports.store.listHeld('a-1')).toHaveLength(1);
  });

  it('records each held reply once when its aggregate opens, and removes it', async () => {
    const { ctx, ports } = memoryContext([HOLDING]);
    await handleUnknown(ctx, aReply(HOLDING, '0'), noDeadlineHandling);
    await handleUnknown(ctx, aReply(HOLDING, '0', { quote: 'redelivered' }), noDeadlineHandling);
    await ports.store.openAggregate(anOpenHeader(3));

    expect(await consolidateHeld(ctx, 'a-1')).toBe(false);
    expect(await consolidateHeld(ctx, 'a-1')).toBe(false);

    const { replies } = await ports.store.readAggregate('a-1');
    expect(replies.map((r) => [r.replyId, JSON.parse(r.payload)])).toEqual([['0', { quote: '0' }]]);
    // It arrived when it was held: before its aggregate opened.
    expect(replies[0]?.receivedAt).toBe(NOW);
    expect(await ports.store.listHeld('a-1')).toEqual([]);
    expect(ports.outputs.published).toEqual([]);
  });

  it('says the aggregate completed when the held replies complete it', async () => {
    const { ctx, ports } = memoryContext([HOLDING]);
    await handleUnknown(ctx, aReply(HOLDING, '0'), noDeadlineHandling);
    await handleUnknown(ctx, aReply(HOLDING, '1'), noDeadlineHandling);
    await ports.store.openAggregate(anOpenHeader(2));
    expect(await consolidateHeld(ctx, 'a-1')).toBe(true);
    expect(ports.outputs.to(QueueRole.COMPLETED)).toHaveLength(1);
  });

  it('never counts a held reply its unknown timeout already claimed', async () => {
    const { ctx, ports } = memoryContext([HOLDING]);
    await handleUnknown(ctx, aReply(HOLDING, '0'), noDeadlineHandling);
    expect(await ports.store.claimHeld('a-1', '0', 'unknown')).toBe(true);
    await ports.store.openAggregate(anOpenHeader());
    expect(await consolidateHeld(ctx, 'a-1')).toBe(false);
    expect((await ports.store.readAggregate('a-1')).replies).toEqual([]);
  });

  it('after a crash before the held item is removed, a second consolidation records it once and removes it', async () => {
    const { ctx, ports } = memoryContext([HOLDING]);
    await handleUnknown(ctx, aReply(HOLDING, '0'), noDeadlineHandling);
    await ports.store.openAggregate(anOpenHeader(3));
    vi.spyOn(ports.store, 'deleteHeld').mockRejectedValueOnce(new Error('injected: crash'));

    await expect(consolidateHeld(ctx, 'a-1')).rejects.toThrow('injected');
    expect(await ports.store.listHeld('a-1')).toMatchObject([{ replyId: '0', claimed: 'counted' }]);

    await consolidateHeld(ctx, 'a-1');
    expect((await ports.store.readAggregate('a-1')).replies.map((r) => r.replyId)).toEqual(['0']);
    expect(await ports.store.listHeld('a-1')).toEqual([]);
  });

  it('after a crash between the claim and the recording, a second consolidation records it', async () => {
    const { ctx, ports } = memoryContext([HOLDING]);
    await handleUnknown(ctx, aReply(HOLDING, '0'), noDeadlineHandling);
    await ports.store.openAggregate(anOpenHeader(3));
    vi.spyOn(ports.store, 'putReplies').mockRejectedValueOnce(new Error('injected: crash'));

    await expect(consolidateHeld(ctx, 'a-1')).rejects.toThrow('injected');
    expect((await ports.store.readAggregate('a-1')).replies).toEqual([]);

    await consolidateHeld(ctx, 'a-1');
    expect((await ports.store.readAggregate('a-1')).replies.map((r) => r.replyId)).toEqual(['0']);
  });
});
