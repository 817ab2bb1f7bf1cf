import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEY_ESCAPE, KEY_SEPARATOR } from '../../../shared/adapters/state-keys.ts';
import { replyShard } from '../../../shared/engine/members.ts';
import type { RawMessage } from '../../../shared/ports.ts';
import { handleReplies } from '../../../shared/use-cases/replies.ts';
import { FaninUnderTest } from '../../support/fanin.ts';

/**
 * With `writeShards`, an aggregate's replies are spread over several partition keys. Those keys
 * must never be another aggregate's: a self-starting key is chosen by whoever sends the message,
 * so an aggregate id that ends like a shard suffix must open an aggregate of its own, sharing no
 * item with the aggregate whose shard it looks like. These tests read each aggregate's reply set
 * from the table and the results as published (below FIFO deduplication).
 */
describe('write-shard keys against message-chosen aggregate ids', () => {
  let fanin: FaninUnderTest;

  beforeAll(async () => {
    fanin = await FaninUnderTest.start([
      {
        name: 'auction',
        mode: 'self-starting',
        correlation: { source: 'path', path: '$.lot' },
        completion: { strategy: 'timeout' },
        timeoutSeconds: 60,
        writeShards: 4,
      },
    ]);
  });
  afterAll(() => fanin.stop());

  /** Bid ids of one lot landing on write shard `shard` (of 4). */
  const bidsOnShard = (prefix: string, shard: number, count: number) => {
    const ids: string[] = [];
    for (let i = 0; ids.length < count; i += 1)
      if (replyShard(`${prefix}${i}`, 4) === shard) ids.push(`${prefix}${i}`);
    return ids;
  };
  let sequence = 0;
  const nextMessageId = () => {
    sequence += 1;
    return `m-${sequence}`;
  };
  // As SQS carries it: a noncharacter or a lone surrogate only as a JSON escape.
  const json = (value: unknown) =>
    JSON.stringify(value).replace(
      /[\ufffe\uffff]/g,
      (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
    );
  const bid = (lot: string, replyId: string): RawMessage => ({
    messageId: nextMessageId(),
    body: json({ lot, bidder: replyId, secret: `${lot}/${replyId}` }),
    attributes: { 'fanin-definition': 'auction', 'fanin-reply-id': replyId },
    receiveCount: 1,
  });

  it('a self-starting key ending in a shard suffix opens an aggregate of its own: no bid crosses between the two lots', async () => {
    // Prepare: lot "L" (write shards 4) and lot "L#1", whose id reads like L's shard 1 under a
    // layout that appends "#<shard>" to the aggregate's key
    const lot = `L${Date.now().toString(36)}`;
    const twin = `${lot}#1`;
    const lotBids = [...bidsOnShard('a', 0, 2), ...bidsOnShard('a', 1, 2)];
    const twinBids = [...bidsOnShard('b', 0, 2), ...bidsOnShard('b', 1, 2)];

    // Act: each bid in a batch of its own, alternating between the lots; then both time out
    for (let i = 0; i < 4; i += 1) {
      expect((await handleReplies(fanin.ctx, [bid(lot, lotBids[i] as string)])).size).toBe(0);
      expect((await handleReplies(fanin.ctx, [bid(twin, twinBids[i] as string)])).size).toBe(0);
    }
    const ownSets = {
      lot: (await fanin.ctx.store.readAggregate(`auction:${lot}`)).replies.map((r) => r.replyId).sort(),
      twin: (await fanin.ctx.store.readAggregate(`auction:${twin}`)).replies.map((r) => r.replyId).sort(),
    };
    fanin.clock.advance(61_000);
    await fanin.sweep();
    await fanin.drain();

    // Assess (mutant killed: "a shard key is the aggregate key and #<shard>" — L's shard-1 bids
    // are read as the twin's, the twin's own bids as L's shard 1)
    expect(ownSets).toEqual({ lot: [...lotBids].sort(), twin: [...twinBids].sort() });
    for (const [id, bids, other] of [
      [lot, lotBids, twin],
      [twin, twinBids, lot],
    ] as const) {
      const { output } = fanin.expectExactlyOneTerminalOutput(`auction:${id}`);
      const result = output.result as { replyId: string }[];
      expect(result.map((r) => r.replyId).sort()).toEqual([...bids].sort());
      expect(JSON.stringify(output)).not.toContain(`"${other}/`);
    }
  });

  it('a bid whose lot holds a character SQS cannot carry (the key separator, a lone surrogate) goes to the error output and opens nothing', async () => {
    // Prepare: the separator the key layout puts between an id and its suffix, its escape, two
    // lots that differ only in a lone surrogate (which UTF-8 cannot carry), a control character
    const lot = `U${Date.now().toString(36)}`;
    const odd = [`${KEY_SEPARATOR}s1`, KEY_ESCAPE, '\ud800', '\udbff', '\u0000'];
    const bids = odd.map((s) => bid(`${lot}${s}`, 'e0'));

    // Act
    const failed = await handleReplies(fanin.ctx, bids);

    // Assess (mutant killed: "ids are taken whatever characters they hold" — the opening's timer
    // is refused by SQS, so the batch fails again on every delivery until the DLQ)
    expect(failed.size).toBe(0);
    const errors = await fanin.outputs('error');
    expect(errors).toHaveLength(odd.length);
    for (const error of errors) {
      expect(error).toMatchObject({ type: 'fanin.error', source: 'reply' });
      expect(String(error.reason)).toMatch(/^aggregate id holds U\+[0-9A-F]{4}, which SQS cannot carry/);
    }
    const opened = (await fanin.scanState()).filter((i) => String(i.pk).includes(lot));
    expect(opened).toEqual([]);
  });
});
