import { describe, expect, it, vi } from 'vitest';
import { AggregateStatus } from '../../../../shared/engine/constants.ts';
import type { AggregateHeader, DrainQueue, ReceivedMessage } from '../../../../shared/ports.ts';
import { drainReplies } from '../../../../shared/use-cases/reply-drain.ts';
import { memoryContext } from '../../../support/memory-store.ts';
import { aDefinition } from '../engine/factories.ts';

/**
 * A scheduled drain of a reply partition (docs/configuration.md, "Drained reply partitions";
 * docs/data-plane.md, "Drained partitions"): ten messages a receive, batches of `batchSize`
 * handled by the reply use case and deleted unless they failed; it stops at a receive that finds
 * nothing or comes back short with only replies sent after it began, or when half its time is spent.
 */
const ORDERS = aDefinition({ name: 'orders', completion: { strategy: 'all' }, timeoutSeconds: 600 });
const OPENED = Date.now() - 1_000;

function anOpenHeader(): AggregateHeader {
  return {
    aggregateId: 'a-1',
    definition: 'orders',
    status: AggregateStatus.OPEN,
    expected: 1_000,
    received: 0,
    lateCount: 0,
    openedAt: OPENED,
    deadline: OPENED + 600_000,
    closeBy: OPENED + 600_000,
    params: { timeoutSeconds: 600 },
  };
}

function aMessage(replyId: number, sentAt?: number): ReceivedMessage {
  return {
    receipt: `r-${replyId}`,
    message: {
      messageId: `m-${replyId}`,
      body: JSON.stringify({ quote: replyId }),
      attributes: { 'fanin-aggregate-id': 'a-1', 'fanin-reply-id': String(replyId) },
      receiveCount: 1,
      ...(sentAt !== undefined ? { sentAt } : {}),
    },
  };
}

/** A queue of `messages`; each receive returns at most what it is asked for, or the next of `sizes`. */
function aQueue(messages: ReceivedMessage[], sizes: number[] = [], undeletable = 0) {
  const waiting = [...messages];
  const asked: number[] = [];
  const deleted: string[] = [];
  let refusals = undeletable;
  const queue: DrainQueue = {
    maxPerReceive: 10,
    receive: async (max) => {
      asked.push(max);
      return waiting.splice(0, Math.min(max, sizes.shift() ?? max));
    },
    delete: async (done) => {
      const refused = Math.min(refusals, done.length);
      refusals -= refused;
      deleted.push(...done.slice(refused).map((m) => m.message.messageId));
      return refused;
    },
  };
  return { queue, asked, deleted };
}

const plenty = () => 60_000;
const range = (n: number, sentAt?: number) => Array.from({ length: n }, (_, i) => aMessage(i, sentAt));

async function anAggregate() {
  const { ctx, ports } = memoryContext([ORDERS], { clock: () => Date.now() });
  await ports.store.openAggregate(anOpenHeader());
  return { ctx, ports };
}

describe('draining a reply partition', () => {
  it('takes the backlog ten a receive into one batch, records and deletes it, and stops at an empty receive', async () => {
    const { ctx, ports } = await anAggregate();
    const { queue, asked, deleted } = aQueue(range(25));
    const result = await drainReplies(ctx, queue, { batchSize: 1000, remainingMs: plenty });
    expect(result).toEqual({ batches: 1, received: 25, receives: 4, failed: 0, undeleted: 0, emptied: true });
    expect(asked).toEqual([10, 10, 10, 10]);
    expect(deleted).toHaveLength(25);
    expect((await ports.store.readAggregate('a-1')).replies).toHaveLength(25);
  });

  it('handles batches of batchSize, asking for no more than a batch still needs', async () => {
    const { ctx } = await anAggregate();
    const { queue, asked } = aQueue(range(25));
    const result = await drainReplies(ctx, queue, { batchSize: 15, remainingMs: plenty });
    expect(result).toMatchObject({ batches: 2, received: 25, emptied: true });
    expect(asked.slice(0, 2)).toEqual([10, 5]);
  });

  it('goes on after a short receive that still holds replies of the backlog', async () => {
    const { ctx } = await anAggregate();
    const { queue, asked } = aQueue(range(20, Date.now() - 5_000), [3]);
    const result = await drainReplies(ctx, queue, { batchSize: 1000, remainingMs: plenty });
    expect(result).toMatchObject({ received: 20, emptied: true });
    expect(asked.length).toBeGreaterThan(2);
  });

  it('stops at a short receive holding only replies sent after the drain began', async () => {
    const { ctx } = await anAggregate();
    const { queue, asked } = aQueue(range(4, Date.now() + 60_000));
    const result = await drainReplies(ctx, queue, { batchSize: 1000, remainingMs: plenty });
    expect(result).toEqual({ batches: 1, received: 4, receives: 1, failed: 0, undeleted: 0, emptied: true });
    expect(asked).toEqual([10]);
  });

  it('leaves a batch the reply use case failed on the queue, to come back', async () => {
    const { ctx, ports } = await anAggregate();
    vi.spyOn(ports.store, 'getHeader').mockRejectedValue(new Error('injected: DynamoDB unavailable'));
    const { queue, deleted } = aQueue(range(3));
    const result = await drainReplies(ctx, queue, { batchSize: 1000, remainingMs: plenty });
    expect(result).toMatchObject({ received: 3, failed: 3 });
    expect(deleted).toEqual([]);
  });

  it('counts the handled messages whose delete failed', async () => {
    const { ctx } = await anAggregate();
    const { queue } = aQueue(range(5), [], 2);
    expect(await drainReplies(ctx, queue, { batchSize: 1000, remainingMs: plenty })).toMatchObject({
      received: 5,
      undeleted: 2,
    });
  });

  it('starts no batch once half of its time is spent, and is not caught up then', async () => {
    const { ctx } = await anAggregate();
    const times = [10_000, 5_000];
    const { queue, asked } = aQueue(range(5));
    const result = await drainReplies(ctx, queue, {
      batchSize: 1000,
      remainingMs: () => times.shift() ?? 5_000,
    });
    expect(result).toEqual({ batches: 0, received: 0, receives: 0, failed: 0, undeleted: 0, emptied: false });
    expect(asked).toEqual([]);
  });

  it('stops a growing batch once its time is spent, and handles what it received', async () => {
    const { ctx, ports } = await anAggregate();
    const times = [10_000, 9_000, 4_000];
    const { queue, deleted } = aQueue(range(30));
    const result = await drainReplies(ctx, queue, {
      batchSize: 1000,
      remainingMs: () => times.shift() ?? 4_000,
    });
    expect(result).toMatchObject({ batches: 1, received: 10, receives: 1, emptied: false });
    expect(deleted).toHaveLength(10);
    expect((await ports.store.readAggregate('a-1')).replies).toHaveLength(10);
  });
});
