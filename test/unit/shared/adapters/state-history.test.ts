import { describe, expect, it } from 'vitest';
import {
  markLate,
  openAggregate,
  putReplies,
  putReply,
} from '../../../../shared/adapters/state-aggregates.ts';
import { setSnapshotDue } from '../../../../shared/adapters/state-arming.ts';
import { moveDeadline, seal } from '../../../../shared/adapters/state-completion.ts';
import { holdReply } from '../../../../shared/adapters/state-held.ts';
import { readHistory } from '../../../../shared/adapters/state-history.ts';
import { openHeader, T0, world } from './support.ts';

/**
 * An aggregate's items read whole for its history: every copy of every reply (a pack's members
 * named by the pack), the marks, the held replies, the request's labels and what the header keeps
 * for the history, never a body, and nothing of another aggregate. The module's own fast test over
 * the DynamoDB model.
 */

const TTL = Math.floor(T0 / 1000) + 86_400;

describe('readHistory', () => {
  it('gives every copy, packed or alone, with marks and the held replies, and no body', async () => {
    // Prepare
    const w = world();
    await openAggregate(w.table, openHeader('a-1'));
    await putReplies(w.table, 'a-1', [
      { replyId: '0', payload: '{"secret":1}', receivedAt: T0 + 1, expiresAt: TTL, messageId: 'm-0' },
      { replyId: '1', payload: '{"secret":2}', receivedAt: T0 + 2, expiresAt: TTL },
    ]);
    await putReply(w.table, 'a-1', {
      replyId: '0',
      payload: '{"secret":3}',
      receivedAt: T0 + 3,
      expiresAt: TTL,
    });
    await markLate(w.table, 'a-1', '2', TTL);
    await holdReply(w.table, {
      aggregateId: 'a-1',
      replyId: '9',
      definition: 'orders',
      body: '{"secret":9}',
      attributes: {},
      messageId: 'm-9',
      receivedAt: T0,
      dueAt: T0 + 5,
    });

    // Act
    const records = await readHistory(w.table, 'a-1');

    // Assess
    expect(records.header?.aggregateId).toBe('a-1');
    const copies = [...records.copies].sort((a, b) => a.receivedAt - b.receivedAt);
    expect(copies.map((c) => [c.replyId, c.pack !== undefined])).toEqual([
      ['0', true],
      ['1', true],
      ['0', false],
    ]);
    expect(copies[0]?.messageId).toBe('m-0');
    expect(records.marks).toEqual([{ replyId: '2' }]);
    expect(records.held.map((h) => h.replyId)).toEqual(['9']);
    expect(JSON.stringify(records.copies)).not.toContain('secret');
  });

  it('gives what the header keeps for the history: the parameters at the seal, the first deadline and its moves', async () => {
    // Prepare
    const w = world();
    await openAggregate(w.table, openHeader('a-1'));
    await moveDeadline(w.table, 'a-1', T0 + 60_000, T0 + 90_000);
    await seal(w.table, 'a-1', { outcome: 'completed', members: [], at: T0, lease: 'l', leaseUntil: T0 + 1 });

    // Act
    const records = await readHistory(w.table, 'a-1');

    // Assess
    expect(records.kept).toEqual({
      params: { timeoutSeconds: 60 },
      firstDeadline: T0 + 60_000,
      deadlineMoves: 1,
    });
  });

  it("gives the request's labels, never its body, and the next snapshot's time", async () => {
    // Prepare
    const w = world();
    await openAggregate(w.table, openHeader('a-1'), {
      payload: JSON.stringify({ labels: ['bank-1', 7], body: 'secret' }),
      expiresAt: TTL,
    });
    await setSnapshotDue(w.table, 'a-1', T0 + 3_600_000);

    // Act
    const records = await readHistory(w.table, 'a-1');

    // Assess
    expect(records.request).toEqual({ labels: ['bank-1', null] });
    expect(records.snapshotDueAt).toBe(T0 + 3_600_000);
  });

  it('reads the write shards of a sharded aggregate, and nothing of another aggregate', async () => {
    // Prepare
    const w = world();
    await openAggregate(w.table, openHeader('a', { shards: 3 }));
    for (let i = 0; i < 9; i += 1)
      await putReply(w.table, 'a', { replyId: String(i), payload: '{}', receivedAt: T0, expiresAt: TTL }, 3);
    await putReply(w.table, 'a#1', { replyId: 'x', payload: '{}', receivedAt: T0, expiresAt: TTL });

    // Act
    const records = await readHistory(w.table, 'a');

    // Assess
    expect(records.copies.map((c) => c.replyId).sort()).toEqual([
      '0',
      '1',
      '2',
      '3',
      '4',
      '5',
      '6',
      '7',
      '8',
    ]);
  });

  it('gives empty records for an aggregate with no items', async () => {
    // Act
    const records = await readHistory(world().table, 'none');

    // Assess
    expect(records).toEqual({ copies: [], marks: [], held: [] });
  });
});
