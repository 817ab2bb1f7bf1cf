import { describe, expect, it, vi } from 'vitest';
import { AggregateStatus } from '../../../../shared/engine/constants.ts';
import type { Definition } from '../../../../shared/engine/definition.ts';
import type { AggregateHeader, Metrics } from '../../../../shared/ports.ts';
import { QueueRole } from '../../../../shared/topology/topology.ts';
import { judgeAndRecord, type Reply } from '../../../../shared/use-cases/record-replies.ts';
import { memoryContext } from '../../../support/memory-store.ts';
import { aDefinition } from '../engine/factories.ts';

/**
 * Recording replies (docs/data-plane.md, "Judging" and "Recording"): judged by the aggregate's own
 * definition (another definition's reply, or a reply id a splitter never asked for, goes to the
 * error output with the reason), put once whatever the redeliveries, then the aggregate read back
 * and completed when it can be; replies to a sealed aggregate are duplicates when members, else late.
 */
const OPENED = 1_000_000;
const ORDERS = aDefinition({ name: 'orders', completion: { strategy: 'all' }, timeoutSeconds: 60 });
const SPLIT = aDefinition({
  name: 'split',
  fanOut: { type: 'splitter', itemsPath: '$.items', target: 'worker' },
  completion: { strategy: 'all' },
  timeoutSeconds: 60,
});

function anOpenHeader(definition = ORDERS, expected = 2): AggregateHeader {
  return {
    aggregateId: 'a-1',
    definition: definition.name,
    status: AggregateStatus.OPEN,
    expected,
    received: 0,
    lateCount: 0,
    openedAt: OPENED,
    deadline: OPENED + 60_000,
    closeBy: OPENED + 60_000,
    params: { timeoutSeconds: 60 },
  };
}

function aReply(
  replyId: string,
  options: { claimed?: Definition; body?: unknown; attributes?: Record<string, string> } = {},
): Reply {
  const body = options.body ?? { quote: replyId };
  const attributes = { 'fanin-aggregate-id': 'a-1', 'fanin-reply-id': replyId, ...options.attributes };
  const raw = { messageId: `m-${replyId}`, body: JSON.stringify(body), attributes, receiveCount: 1 };
  return {
    raw,
    inbound: { body, attributes, messageId: raw.messageId },
    aggregateId: 'a-1',
    replyId,
    messageId: raw.messageId,
    ...(options.claimed ? { claimed: options.claimed } : {}),
  };
}

function counting(): Metrics & { counted: Record<string, number> } {
  const counted: Record<string, number> = {};
  return {
    counted,
    count: (name, _definition, n = 1) => {
      counted[name] = (counted[name] ?? 0) + n;
    },
    latency: () => undefined,
  };
}

async function anAggregate(definitions: Definition[] = [ORDERS], header = anOpenHeader()) {
  const metrics = counting();
  const { ctx, ports } = memoryContext(definitions, { metrics });
  await ports.store.openAggregate(header);
  return { ctx, ports, metrics, header };
}

describe('recording replies in an open aggregate', () => {
  it('records a reply, counts it, settles it, and leaves the aggregate open while one is missing', async () => {
    const { ctx, ports, metrics, header } = await anAggregate();
    const settled: string[] = [];
    await judgeAndRecord(ctx, header, [aReply('0')], {
      onSettled: async (r) => void settled.push(r.replyId),
    });
    expect((await ports.store.readAggregate('a-1')).replies.map((r) => r.replyId)).toEqual(['0']);
    expect(metrics.counted).toEqual({ RepliesRecorded: 1 });
    expect(settled).toEqual(['0']);
    expect((await ports.store.getHeader('a-1'))?.status).toBe(AggregateStatus.OPEN);
  });

  it('records a redelivered reply once, the first body kept, and counts the copy a duplicate', async () => {
    const { ctx, ports, metrics, header } = await anAggregate([ORDERS], anOpenHeader(ORDERS, 3));
    await judgeAndRecord(ctx, header, [aReply('0')]);
    await judgeAndRecord(ctx, header, [aReply('0', { body: { quote: 'again' } })]);
    const { replies } = await ports.store.readAggregate('a-1');
    expect(replies.map((r) => JSON.parse(r.payload))).toEqual([{ quote: '0' }]);
    expect(metrics.counted).toEqual({ RepliesRecorded: 1, RepliesDuplicate: 1 });
  });

  it('completes the aggregate with its last reply, one result', async () => {
    const { ctx, ports, header } = await anAggregate();
    await judgeAndRecord(ctx, header, [aReply('0'), aReply('1')]);
    expect(ports.outputs.to(QueueRole.COMPLETED)).toHaveLength(1);
    expect((await ports.store.getHeader('a-1'))?.status).toBe(AggregateStatus.CLOSED);
  });

  it('records a failed reply with its error, whole body kept', async () => {
    const { ctx, ports, header } = await anAggregate();
    await judgeAndRecord(ctx, header, [
      aReply('0', { body: { detail: 'down' }, attributes: { 'fanin-failure': 'bank down' } }),
    ]);
    const [stored] = (await ports.store.readAggregate('a-1')).replies;
    expect(stored?.failure).toBe('bank down');
    expect(JSON.parse(stored?.payload ?? '')).toEqual({ detail: 'down' });
  });

  it('after a crash between the put and the read, the redelivered batch records each reply once and completes once', async () => {
    const { ctx, ports, header } = await anAggregate();
    vi.spyOn(ports.store, 'readAggregate').mockRejectedValueOnce(new Error('injected: crash'));
    await expect(judgeAndRecord(ctx, header, [aReply('0'), aReply('1')])).rejects.toThrow('injected');
    expect(ports.outputs.published).toEqual([]);

    await judgeAndRecord(ctx, header, [aReply('0'), aReply('1')]);
    const snapshot = await ports.store.readAggregate('a-1');
    expect(snapshot.replies.map((r) => r.replyId).sort()).toEqual(['0', '1']);
    expect(ports.outputs.to(QueueRole.COMPLETED)).toHaveLength(1);
  });
});

describe('judging replies by their aggregate’s definition', () => {
  it('refuses a reply that names another definition, with the reason, and never counts it', async () => {
    const BIDS = aDefinition({ name: 'bids' });
    const { ctx, ports, header } = await anAggregate([ORDERS, BIDS]);
    const settled: string[] = [];
    await judgeAndRecord(ctx, header, [aReply('0', { claimed: BIDS })], {
      onSettled: async (r) => void settled.push(r.replyId),
    });
    expect(ports.outputs.to(QueueRole.ERROR).map((e) => e.reason)).toEqual([
      'reply names definition "bids" but aggregate "a-1" is of definition "orders"',
    ]);
    expect((await ports.store.readAggregate('a-1')).replies).toEqual([]);
    expect(settled).toEqual(['0']);
  });

  it.each(['2', '-1', '01', 'x'])(
    'refuses reply id %j a splitter of 2 never asked for, naming the ids it did',
    async (replyId) => {
      const { ctx, ports, header } = await anAggregate([SPLIT], anOpenHeader(SPLIT, 2));
      await judgeAndRecord(ctx, header, [aReply(replyId)]);
      const [error] = ports.outputs.to(QueueRole.ERROR);
      expect(error?.reason).toBe(
        `reply id "${replyId}" is not one of aggregate "a-1"'s reply ids (0 to 1; responders echo fanin-reply-id)`,
      );
      expect((await ports.store.readAggregate('a-1')).replies).toEqual([]);
    },
  );

  it('records the rest of a batch beside a refused reply', async () => {
    const { ctx, ports, header } = await anAggregate([SPLIT], anOpenHeader(SPLIT, 3));
    await judgeAndRecord(ctx, header, [aReply('0'), aReply('7')]);
    expect((await ports.store.readAggregate('a-1')).replies.map((r) => r.replyId)).toEqual(['0']);
    expect(ports.outputs.to(QueueRole.ERROR)).toHaveLength(1);
  });

  it('refuses to record for an aggregate whose definition is not configured', async () => {
    const { ctx, header } = await anAggregate();
    await expect(judgeAndRecord(ctx, { ...header, definition: 'gone' }, [aReply('0')])).rejects.toThrow(
      'aggregate a-1 names unknown definition gone',
    );
  });
});

describe('replies to an aggregate no longer open', () => {
  it('takes a member as a duplicate and routes any other reply late, once', async () => {
    const { ctx, ports, metrics, header } = await anAggregate();
    await judgeAndRecord(ctx, header, [aReply('0'), aReply('1')]);
    const sealed = (await ports.store.getHeader('a-1')) as AggregateHeader;

    await judgeAndRecord(ctx, sealed, [aReply('1'), aReply('extra')]);
    expect(ports.outputs.to(QueueRole.LATE).map((m) => m.replyId)).toEqual(['extra']);
    expect(metrics.counted.RepliesDuplicate).toBe(1);
    expect(ports.outputs.to(QueueRole.COMPLETED)).toHaveLength(1);
  });
});

describe('replies that find the deadline passed', () => {
  it('hand the aggregate to the deadline’s handling', async () => {
    const { ctx, ports, header } = await anAggregate();
    ports.now.at = OPENED + 61_000;
    const atDeadline = vi.fn(async () => undefined);
    await judgeAndRecord(ctx, header, [aReply('0')], { atDeadline });
    expect(atDeadline).toHaveBeenCalledWith(ctx, 'a-1');
  });

  it('fail without a handling for the deadline, so the batch is redelivered', async () => {
    const { ctx, ports, header } = await anAggregate();
    ports.now.at = OPENED + 61_000;
    await expect(judgeAndRecord(ctx, header, [aReply('0')])).rejects.toThrow(
      'replies to a-1 found its deadline passed with no handling for it',
    );
  });
});
