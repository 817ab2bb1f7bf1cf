import { describe, expect, it } from 'vitest';
import { openAggregate, readAggregate } from '../../../../shared/adapters/state-aggregates.ts';
import {
  claimHeld,
  deleteHeld,
  getHeld,
  holdReply,
  listHeld,
} from '../../../../shared/adapters/state-held.ts';
import type { HeldReply } from '../../../../shared/ports.ts';
import { openHeader, T0, world } from './support.ts';

/**
 * Held replies: held once under their aggregate's key, claimed for exactly one of their two
 * fates (a second claim of the same fate is the same answer, the other fate refused), deleted.
 * The module's own fast test over the DynamoDB model.
 */

const held = (replyId: string, aggregateId = 'a-1'): HeldReply => ({
  aggregateId,
  replyId,
  definition: 'orders',
  body: `{"r":"${replyId}"}`,
  attributes: { 'fanin-reply-id': replyId },
  messageId: `m-${replyId}`,
  receivedAt: T0,
  dueAt: T0 + 30_000,
});

describe('held replies', () => {
  it('are held once: a second hold of the same reply writes nothing and keeps the first', async () => {
    // Prepare
    const w = world();

    // Act
    const first = await holdReply(w.table, held('r-1'));
    const second = await holdReply(w.table, { ...held('r-1'), body: '{"r":"other"}' });

    // Assess
    expect([first, second]).toEqual([true, false]);
    expect((await getHeld(w.table, 'a-1', 'r-1'))?.body).toBe('{"r":"r-1"}');
  });

  it('are listed by aggregate, and are not replies of it', async () => {
    // Prepare
    const w = world();
    await holdReply(w.table, held('r-1'));
    await holdReply(w.table, held('r-2'));
    await holdReply(w.table, held('r-3', 'b-1'));
    await openAggregate(w.table, openHeader('a-1'));

    // Act
    const list = await listHeld(w.table, 'a-1');

    // Assess
    expect(list.map((h) => h.replyId).sort()).toEqual(['r-1', 'r-2']);
    expect((await readAggregate(w.table, 'a-1')).replies).toEqual([]);
  });

  it('are claimed for one fate only: the same claim again holds, the other is refused', async () => {
    // Prepare
    const w = world();
    await holdReply(w.table, held('r-1'));

    // Act
    const counted = await claimHeld(w.table, 'a-1', 'r-1', 'counted');
    const again = await claimHeld(w.table, 'a-1', 'r-1', 'counted');
    const other = await claimHeld(w.table, 'a-1', 'r-1', 'unknown');

    // Assess
    expect([counted, again, other]).toEqual([true, true, false]);
    expect((await getHeld(w.table, 'a-1', 'r-1'))?.claimed).toBe('counted');
  });

  it('cannot be claimed once deleted, and a claim creates no item', async () => {
    // Prepare
    const w = world();
    await holdReply(w.table, held('r-1'));

    // Act
    await deleteHeld(w.table, 'a-1', 'r-1');
    const claimed = await claimHeld(w.table, 'a-1', 'r-1', 'unknown');

    // Assess
    expect(claimed).toBe(false);
    expect(await getHeld(w.table, 'a-1', 'r-1')).toBeUndefined();
    expect(w.items()).toEqual([]);
  });
});
