import { describe, expect, it, vi } from 'vitest';
import { AggregateStatus } from '../../../../shared/engine/constants.ts';
import type { AggregateHeader, ReplyToRecord } from '../../../../shared/ports.ts';
import { QueueRole } from '../../../../shared/topology/topology.ts';
import { evaluate } from '../../../../shared/use-cases/evaluate.ts';
import { memoryContext } from '../../../support/memory-store.ts';
import { aDefinition } from '../engine/factories.ts';

/**
 * Completion evaluated on an aggregate as read in one consistent query (docs/data-plane.md,
 * "Recording" and "Sealing"): only the replies received before its deadline are members; when the
 * decision is to complete, one seal wins and the result is published once; an invocation that read
 * before another sealed loses (`lost`) and publishes nothing.
 */
const ORDERS = aDefinition({ name: 'orders', completion: { strategy: 'all' }, timeoutSeconds: 60 });
const OPENED = 1_000_000;

function anOpenHeader(expected = 2): AggregateHeader {
  return {
    aggregateId: 'a-1',
    definition: 'orders',
    status: AggregateStatus.OPEN,
    expected,
    received: 0,
    lateCount: 0,
    openedAt: OPENED,
    deadline: OPENED + 60_000,
    params: { timeoutSeconds: 60 },
  };
}

function aRecord(replyId: string, receivedAt = OPENED + 1_000): ReplyToRecord {
  return { replyId, payload: JSON.stringify({ quote: replyId }), receivedAt, expiresAt: 0 };
}

async function anAggregate(replyIds: readonly string[], expected = 2) {
  const { ctx, ports } = memoryContext([ORDERS]);
  await ports.store.openAggregate(anOpenHeader(expected));
  await ports.store.putReplies(
    'a-1',
    replyIds.map((id) => aRecord(id)),
  );
  return { ctx, ports };
}

describe('evaluating completion', () => {
  it('waits on an aggregate that does not exist', async () => {
    const { ctx } = memoryContext([ORDERS]);
    expect(await evaluate(ctx, ORDERS, { replies: [] })).toBe('waiting');
  });

  it('waits while a reply is missing, and publishes nothing', async () => {
    const { ctx, ports } = await anAggregate(['0']);
    expect(await evaluate(ctx, ORDERS, await ports.store.readAggregate('a-1'))).toBe('waiting');
    expect(ports.outputs.published).toEqual([]);
    expect((await ports.store.getHeader('a-1'))?.status).toBe(AggregateStatus.OPEN);
  });

  it('completes with every reply in: one result, sealed with the set it read', async () => {
    const { ctx, ports } = await anAggregate(['0', '1']);
    expect(await evaluate(ctx, ORDERS, await ports.store.readAggregate('a-1'))).toBe('completed');
    expect(ports.outputs.to(QueueRole.COMPLETED)).toHaveLength(1);
    expect([...((await ports.store.getHeader('a-1'))?.members ?? [])].sort()).toEqual(['0', '1']);
  });

  it('loses to an invocation that sealed after it read: no second result', async () => {
    const { ctx, ports } = await anAggregate(['0', '1']);
    const stale = await ports.store.readAggregate('a-1');
    expect(await evaluate(ctx, ORDERS, await ports.store.readAggregate('a-1'))).toBe('completed');
    expect(await evaluate(ctx, ORDERS, stale)).toBe('lost');
    expect(ports.outputs.to(QueueRole.COMPLETED)).toHaveLength(1);
  });

  it('never counts a reply received at or after the deadline as a member', async () => {
    const { ctx, ports } = memoryContext([ORDERS]);
    await ports.store.openAggregate(anOpenHeader(2));
    await ports.store.putReplies('a-1', [aRecord('0'), aRecord('1', OPENED + 60_000)]);
    expect(await evaluate(ctx, ORDERS, await ports.store.readAggregate('a-1'))).toBe('waiting');
  });

  it('waits on a closed aggregate without deciding again', async () => {
    const { ctx, ports } = await anAggregate(['0', '1']);
    await evaluate(ctx, ORDERS, await ports.store.readAggregate('a-1'));
    const seal = vi.spyOn(ports.store, 'seal');
    expect(await evaluate(ctx, ORDERS, await ports.store.readAggregate('a-1'))).toBe('waiting');
    expect(seal).not.toHaveBeenCalled();
    expect(ports.outputs.to(QueueRole.COMPLETED)).toHaveLength(1);
  });

  it('resumes a completion whose publication crashed, once its lease has run out, publishing the result once', async () => {
    const { ctx, ports } = await anAggregate(['0', '1']);
    vi.spyOn(ports.outputs, 'publish').mockRejectedValueOnce(new Error('injected: SQS unavailable'));
    await expect(evaluate(ctx, ORDERS, await ports.store.readAggregate('a-1'))).rejects.toThrow('injected');
    expect((await ports.store.getHeader('a-1'))?.status).toBe(AggregateStatus.COMPLETING);
    expect(ports.outputs.to(QueueRole.COMPLETED)).toHaveLength(0);

    ports.now.at += ctx.completionLeaseMs + 1;
    expect(await evaluate(ctx, ORDERS, await ports.store.readAggregate('a-1'))).toBe('waiting');
    expect(ports.outputs.to(QueueRole.COMPLETED)).toHaveLength(1);
    expect((await ports.store.getHeader('a-1'))?.status).toBe(AggregateStatus.CLOSED);
  });
});
