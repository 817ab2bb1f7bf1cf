import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MIN_TOMBSTONE_RETENTION_SECONDS, parseDefinition } from '../../../shared/engine/definition.ts';
import { FaninUnderTest } from '../../support/fanin.ts';

const DAY_MS = 24 * 3600 * 1000;

/**
 * An aggregate id never opens twice within the window in which SQS can still deliver a message
 * that names it: 14 days of retention in its queue plus 14 in the DLQ, from which an operator may
 * redrive. The tombstone (and whatever else records that the id was used) outlives that window,
 * and a definition cannot ask for less. DynamoDB Local never expires TTL, so the test deletes what
 * TTL would have deleted (`expireItems`) and then replays every message ever sent.
 */
describe('expired state never reopens an aggregate', () => {
  let fanin: FaninUnderTest;

  beforeAll(async () => {
    fanin = await FaninUnderTest.start([
      { name: 'order', fanOut: { type: 'none' }, completion: { strategy: 'all' }, timeoutSeconds: 3600 },
      {
        name: 'auction',
        mode: 'self-starting',
        correlation: { source: 'path', path: '$.auctionId' },
        completion: { strategy: 'timeout' },
        aggregation: { algorithm: 'best', criteria: [{ path: '$.bid', order: 'max' }] },
        timeoutSeconds: 60,
      },
    ]);
  });
  afterAll(() => fanin.stop());

  it('a definition cannot keep tombstones shorter than 29 days (queue plus DLQ retention plus a day)', () => {
    // Kills the mutant "tombstoneRetentionSeconds minimum of 60 s".
    expect(MIN_TOMBSTONE_RETENTION_SECONDS).toBe(2_505_600);
    const short = { name: 'short', completion: { strategy: 'all' }, tombstoneRetentionSeconds: 60 };
    expect(() => parseDefinition(short)).toThrow(/tombstoneRetentionSeconds.*2505600/);
    expect(() =>
      parseDefinition({ ...short, tombstoneRetentionSeconds: MIN_TOMBSTONE_RETENTION_SECONDS - 1 }),
    ).toThrow(/at least/);
    expect(
      parseDefinition({ ...short, tombstoneRetentionSeconds: MIN_TOMBSTONE_RETENTION_SECONDS }),
    ).toMatchObject({
      tombstoneRetentionSeconds: MIN_TOMBSTONE_RETENTION_SECONDS,
    });
  });

  it('28 days after an initialized and a self-starting aggregate closed, TTL expiry and a replay of every message publish nothing new and reopen nothing', async () => {
    // Kills the mutants "tombstone expiresAt = close + 60 s" and "open a self-starting aggregate over an expired tombstone".
    // Prepare: an order completed by its request and two replies; an auction opened by a bid, timed out
    const order = `order-${Date.now().toString(36)}`;
    await fanin.sendRequest(
      { definition: 'order', aggregateId: order, expected: 2 },
      { 'fanin-request-id': order },
    );
    await fanin.drain();
    for (const r of ['0', '1']) {
      await fanin.sendReply(
        { r },
        { 'fanin-aggregate-id': order, 'fanin-reply-id': r, 'fanin-definition': 'order' },
      );
    }
    const auctionKey = `lot-${Date.now().toString(36)}`;
    const auction = `auction:${auctionKey}`;
    await fanin.sendReply(
      { auctionId: auctionKey, bid: 10 },
      { 'fanin-definition': 'auction', 'fanin-reply-id': 'b1' },
    );
    await fanin.sendReply(
      { auctionId: auctionKey, bid: 12 },
      { 'fanin-definition': 'auction', 'fanin-reply-id': 'b2' },
    );
    await fanin.drain();
    fanin.clock.advance(61_000);
    await fanin.sweep();
    await fanin.drain();
    const first = {
      order: fanin.expectExactlyOneTerminalOutput(order, 'strict').output,
      auction: fanin.expectExactlyOneTerminalOutput(auction, 'strict').output,
    };
    expect(first.order).toMatchObject({ type: 'fanin.aggregate.completed', counts: { received: 2 } });
    expect(first.auction).toMatchObject({ aggregateId: auction, counts: { received: 2 } });

    // Act: 28 days later, whatever TTL may delete is gone; every message comes again
    fanin.clock.advance(28 * DAY_MS);
    await fanin.expireItems(fanin.clock.now);
    const replayed = await fanin.replayAll();
    expect(replayed).toBeGreaterThanOrEqual(5);
    await fanin.drain();
    await fanin.sweep();
    await fanin.drain();
    // a reopened auction would time out after its 60 s
    fanin.clock.advance(61_000);
    await fanin.sweep();
    await fanin.drain();

    // Assess: still exactly one publication of each result, and nothing open
    expect(fanin.expectExactlyOneTerminalOutput(order, 'strict').output).toEqual(first.order);
    expect(fanin.expectExactlyOneTerminalOutput(auction, 'strict').output).toEqual(first.auction);
    const reopened = (await fanin.unfinishedHeaders()).filter((h) =>
      [`A#${order}`, `A#${auction}`].includes(String(h.pk)),
    );
    expect(reopened).toEqual([]);
    expect(await fanin.deadLetters()).toEqual({});
  });
});
