import { describe, expect, it } from 'vitest';
import { markLate, putReplies, putReply } from '../../../../shared/adapters/state-aggregates.ts';
import {
  addToCounter,
  countCompleteBlocks,
  countRange,
  markBlockComplete,
} from '../../../../shared/adapters/state-counters.ts';
import { T0, world } from './support.ts';

/**
 * Large fan-outs' completion triggers: a range count of a block of index reply ids (own items and
 * packs, each id once, late ones not), the block marks, and a reply counter per write shard under
 * a key of its own (never the header's). The module's own fast test over the DynamoDB model.
 */

const TTL = Math.floor(T0 / 1000) + 86_400;
const reply = (replyId: string) => ({ replyId, payload: '{}', receivedAt: T0, expiresAt: TTL });

describe('countRange', () => {
  it('counts each reply id of the range once, whether alone or in a pack, and no late one', async () => {
    // Prepare: 0…3 in a pack, 3 again alone, 5 alone, 6 late, 40 outside the range
    const w = world();
    await putReplies(w.table, 'a-1', ['0', '1', '2', '3'].map(reply));
    await putReply(w.table, 'a-1', reply('3'));
    await putReply(w.table, 'a-1', reply('5'));
    await putReply(w.table, 'a-1', reply('6'));
    await markLate(w.table, 'a-1', '6', TTL);
    await putReply(w.table, 'a-1', reply('40'));

    // Act
    const count = await countRange(w.table, 'a-1', 0, 31);

    // Assess
    expect(count).toBe(5);
  });

  it('counts a block on a write shard as one range', async () => {
    // Prepare
    const w = world();
    for (let i = 32; i < 64; i += 1) await putReply(w.table, 'a-1', reply(String(i)), 4);

    // Act
    const count = await countRange(w.table, 'a-1', 32, 63, 4);

    // Assess
    expect(count).toBe(32);
  });
});

describe('block marks', () => {
  it('are counted once each, under the aggregate’s key, with their TTL', async () => {
    // Prepare
    const w = world();

    // Act
    await markBlockComplete(w.table, 'a-1', 0, TTL);
    await markBlockComplete(w.table, 'a-1', 0, TTL);
    await markBlockComplete(w.table, 'a-1', 3, TTL);
    await markBlockComplete(w.table, 'b-1', 0, TTL);

    // Assess
    expect(await countCompleteBlocks(w.table, 'a-1')).toBe(2);
    for (const item of w.items()) expect(item.expiresAt).toBe(TTL);
    expect(w.items().filter((i) => i.pk === 'A#a-1')).toHaveLength(2);
  });
});

describe('addToCounter', () => {
  it('adds each batch to a counter under a key of its own, with a TTL set once, and returns the total', async () => {
    // Prepare
    const w = world();

    // Act
    const totals = [
      await addToCounter(w.table, 'a-1', 10, TTL),
      await addToCounter(w.table, 'a-1', 5, TTL + 100),
    ];

    // Assess
    expect(totals).toEqual([10, 15]);
    const [counter] = w.items();
    expect(counter?.pk).toBe('A#a-1\uffffc0');
    expect(counter?.expiresAt).toBe(TTL);
  });

  it('sums every write shard’s counter, each under its own key', async () => {
    // Prepare
    const w = world();

    // Act
    await addToCounter(w.table, 'a-1', 3, TTL, { shard: 0, shards: 3 });
    await addToCounter(w.table, 'a-1', 4, TTL, { shard: 2, shards: 3 });
    const total = await addToCounter(w.table, 'a-1', 5, TTL, { shard: 1, shards: 3 });

    // Assess
    expect(total).toBe(12);
    expect(
      w
        .items()
        .map((i) => i.pk)
        .sort(),
    ).toEqual(['A#a-1\uffffc0', 'A#a-1\uffffc1', 'A#a-1\uffffc2']);
  });
});
