import { describe, expect, it } from 'vitest';
import { openAggregate, putReply } from '../../../../shared/adapters/state-aggregates.ts';
import { close, seal } from '../../../../shared/adapters/state-completion.ts';
import {
  decodeCursor,
  deferDue,
  dueItems,
  listActive,
  listActivePage,
  listOpen,
  MAX_CURSOR_LENGTH,
} from '../../../../shared/adapters/state-due.ts';
import { holdReply } from '../../../../shared/adapters/state-held.ts';
import { BadMessageError } from '../../../../shared/errors.ts';
import { openHeader, T0, world } from './support.ts';

/**
 * The readers of the `due` index: the sweeper's due items (every shard its share, oldest first, a
 * failing one deferred only from where it was), and the listing of active aggregates page by page
 * with an opaque cursor that a message carries back untrusted. The module's own fast test over the
 * DynamoDB model, with many more aggregates and forged cursors than the integration tests use.
 */

const SECOND = 1000;

/** `count` open aggregates of `definition`, opened a millisecond apart from `from`, due a second apart from T0 + 60 s. */
async function openMany(w: ReturnType<typeof world>, count: number, definition = 'orders', from = T0) {
  for (let i = 0; i < count; i += 1)
    await openAggregate(
      w.table,
      openHeader(`${definition}-${i}`, {
        definition,
        openedAt: from + i,
        deadline: T0 + 60 * SECOND + i * SECOND,
      }),
    );
}

describe('dueItems', () => {
  it('gives the headers and held replies due by now, oldest first, and none due later', async () => {
    // Prepare
    const w = world();
    await openMany(w, 5);
    await holdReply(w.table, {
      aggregateId: 'later-1',
      replyId: 'r-1',
      definition: 'orders',
      body: '{}',
      attributes: {},
      messageId: 'm-1',
      receivedAt: T0,
      dueAt: T0 + 61_500,
    });

    // Act
    const due = await dueItems(w.table, T0 + 62 * SECOND, 100);

    // Assess: deadlines at 60, 61, 62 s, and the held reply at 61.5 s
    expect(due).toEqual([
      { kind: 'aggregate', aggregateId: 'orders-0', dueAt: T0 + 60 * SECOND },
      { kind: 'aggregate', aggregateId: 'orders-1', dueAt: T0 + 61 * SECOND },
      { kind: 'held', aggregateId: 'later-1', replyId: 'r-1', dueAt: T0 + 61_500 },
      { kind: 'aggregate', aggregateId: 'orders-2', dueAt: T0 + 62 * SECOND },
    ]);
  });

  it('never gives more than its limit', async () => {
    // Prepare
    const w = world();
    await openMany(w, 40);

    // Act
    const due = await dueItems(w.table, T0 + 3_600 * SECOND, 10);

    // Assess
    expect(due.length).toBeLessThanOrEqual(10);
    expect(due.length).toBeGreaterThan(0);
    const times = due.map((d) => d.dueAt);
    expect(times).toEqual([...times].sort((a, b) => a - b));
  });

  it('drops a header once its aggregate closed (the close removes its entry)', async () => {
    // Prepare
    const w = world();
    await openAggregate(w.table, openHeader('a-1'));
    await seal(w.table, 'a-1', {
      outcome: 'completed',
      members: [],
      at: T0,
      lease: 'l',
      leaseUntil: T0 + 30 * SECOND,
    });
    await close(w.table, 'a-1', 'l', 1);

    // Act
    const due = await dueItems(w.table, T0 + 3_600 * SECOND, 10);

    // Assess
    expect(due).toEqual([]);
  });
});

describe('deferDue', () => {
  it('moves an entry on, counting the failure, only from the due time it was read at', async () => {
    // Prepare
    const w = world();
    await openAggregate(w.table, openHeader('a-1'));
    const item = { kind: 'aggregate' as const, aggregateId: 'a-1', dueAt: T0 + 60 * SECOND };

    // Act
    await deferDue(w.table, item, T0 + 120 * SECOND);
    await deferDue(w.table, item, T0 + 999 * SECOND);

    // Assess
    const header = w.items().find((i) => i.sk === 'H');
    expect(header).toMatchObject({ dueAt: T0 + 120 * SECOND, dueFailures: 1 });
  });

  it('creates no item for an entry that is gone', async () => {
    // Prepare
    const w = world();

    // Act
    await deferDue(w.table, { kind: 'held', aggregateId: 'a-1', replyId: 'r', dueAt: T0 }, T0 + SECOND);

    // Assess
    expect(w.items()).toEqual([]);
  });
});

describe('listActivePage', () => {
  it('reads every active aggregate exactly once over pages, following the cursors to the end', async () => {
    // Prepare
    const w = world();
    await openMany(w, 23);

    // Act
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await listActivePage(w.table, { limit: 4, ...(cursor ? { cursor } : {}) });
      seen.push(...page.aggregates.map((a) => a.header.aggregateId));
      cursor = page.next;
      pages += 1;
    } while (cursor !== undefined && pages < 100);

    // Assess
    expect(cursor).toBeUndefined();
    expect(seen.sort()).toEqual(Array.from({ length: 23 }, (_, i) => `orders-${i}`).sort());
  });

  it('starts a page after an aggregate when given that aggregate’s own cursor', async () => {
    // Prepare
    const w = world();
    await openMany(w, 6);
    const first = await listActivePage(w.table, { limit: 1000 });
    const third = first.aggregates[2];

    // Act
    const rest = await listActivePage(w.table, { limit: 1000, cursor: third?.after as string });

    // Assess
    expect(first.aggregates).toHaveLength(6);
    expect(rest.aggregates.map((a) => a.header.aggregateId)).toEqual(
      first.aggregates.slice(3).map((a) => a.header.aggregateId),
    );
  });

  it('keeps only the definition asked for, and reads no entry due after dueBy', async () => {
    // Prepare
    const w = world();
    await openMany(w, 3, 'orders');
    await openMany(w, 3, 'quotes');

    // Act
    const quotes = await listActivePage(w.table, { limit: 1000, definition: 'quotes' });
    const early = await listActivePage(w.table, { limit: 1000, dueBy: T0 + 60 * SECOND });

    // Assess
    expect(quotes.aggregates.map((a) => a.header.aggregateId).sort()).toEqual([
      'quotes-0',
      'quotes-1',
      'quotes-2',
    ]);
    expect(early.aggregates.map((a) => a.header.aggregateId).sort()).toEqual(['orders-0', 'quotes-0']);
  });

  it('counts an open aggregate’s replies when asked (no reply writes its header)', async () => {
    // Prepare
    const w = world();
    await openAggregate(w.table, openHeader('a-1'));
    for (const id of ['0', '1'])
      await putReply(w.table, 'a-1', { replyId: id, payload: '{}', receivedAt: T0, expiresAt: 1 });

    // Act
    const plain = await listActivePage(w.table, { limit: 10 });
    const counted = await listActivePage(w.table, { limit: 10, replies: true });

    // Assess
    expect(plain.aggregates[0]?.header.received).toBe(0);
    expect(counted.aggregates[0]?.header.received).toBe(2);
  });

  it('takes a limit out of range as the nearest it allows', async () => {
    // Prepare
    const w = world();
    await openMany(w, 3);

    // Act
    const page = await listActivePage(w.table, { limit: 0 });

    // Assess
    expect(page.aggregates.length).toBeLessThanOrEqual(1);
    expect(page.next).toBeDefined();
  });
});

describe('decodeCursor (a cursor comes back in messages: untrusted)', () => {
  const encode = (parts: unknown) => Buffer.from(JSON.stringify(parts)).toString('base64url');

  it('reads back a position at the start of a shard and after an entry', () => {
    // Act / Assess
    expect(decodeCursor(encode([3]))).toEqual({ shard: 3 });
    expect(decodeCursor(encode([2, 5, 'A#x', 'H']))).toEqual({
      shard: 2,
      after: { dueAt: 5, pk: 'A#x', sk: 'H' },
    });
    expect(decodeCursor(encode([0, 5, 'A#x', 'U#r']))).toMatchObject({ after: { sk: 'U#r' } });
  });

  it.each([
    ['not base64url', 'a+b/c='],
    ['too long', 'A'.repeat(MAX_CURSOR_LENGTH + 1)],
    ['not JSON', Buffer.from('{').toString('base64url')],
    ['not an array', encode({ shard: 0 })],
    ['a shard out of range', encode([8])],
    ['a negative shard', encode([-1])],
    ['a fractional due time', encode([0, 1.5, 'A#x', 'H'])],
    ['a key of another kind', encode([0, 1, 'D#orders', 'P'])],
    ['a derived key (with the separator)', encode([0, 1, 'A#x\uffffs1', 'H'])],
    ['the bare prefix', encode([0, 1, 'A#', 'H'])],
    ['a reply sort key', encode([0, 1, 'A#x', 'R#0'])],
    ['a held prefix with no reply', encode([0, 1, 'A#x', 'U#'])],
    ['a partition key over 2 KB', encode([0, 1, `A#${'x'.repeat(2048)}`, 'H'])],
  ])('refuses %s as bad input', (_what, cursor) => {
    // Act / Assess
    expect(() => decodeCursor(cursor)).toThrow(BadMessageError);
  });

  it('refuses a forged cursor at the listing too, before any read', async () => {
    // Prepare
    const w = world();

    // Act
    const page = listActivePage(w.table, { limit: 5, cursor: encode([99]) });

    // Assess
    await expect(page).rejects.toBeInstanceOf(BadMessageError);
    expect(w.calls).toEqual([]);
  });
});

describe('listActive and listOpen', () => {
  it('list every open and completing aggregate oldest first, listOpen only the open ones of a definition', async () => {
    // Prepare
    const w = world();
    await openMany(w, 4);
    await openMany(w, 1, 'quotes', T0 + 0.5);
    await seal(w.table, 'orders-1', {
      outcome: 'completed',
      members: [],
      at: T0,
      lease: 'l',
      leaseUntil: T0 + 9e5,
    });

    // Act
    const active = await listActive(w.table);
    const open = await listOpen(w.table, 'orders');

    // Assess
    expect(active.map((h) => h.aggregateId)).toEqual([
      'orders-0',
      'quotes-0',
      'orders-1',
      'orders-2',
      'orders-3',
    ]);
    expect(open.map((h) => h.aggregateId)).toEqual(['orders-0', 'orders-2', 'orders-3']);
  });
});
