import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  type ConfiguredSimulations,
  DEFAULT_START,
  fromConfig,
} from '../../../../packages/testing/src/index.ts';

/**
 * The repository's own fanin.config.ts (what `npm start` runs), each definition by the kit
 * behaving as its comments and docs/definitions.md say: the loan broker's threshold, deadline
 * and tolerated failures, the self-starting auction, order approval by an external event with
 * its snapshots. Loaded by name as a user would (`fromConfig`), so a change to the file that
 * breaks its documented behaviour fails here in milliseconds, without the emulators.
 */

const CONFIG = fileURLToPath(new URL('../../../../fanin.config.ts', import.meta.url));
let config: ConfiguredSimulations;

beforeAll(async () => {
  config = await fromConfig(CONFIG);
});

describe('fanin.config.ts by the kit', () => {
  it('has the three documented definitions under its prefix', () => {
    expect(config.prefix).toBe('fanin');
    expect(config.names).toEqual(['loan-broker', 'auction', 'order-approval']);
    expect(() => config.simulate('nope')).toThrow(/has no definition "nope"/);
  });

  describe('loan-broker', () => {
    it('asks the five banks; a rate of 3.5% or less completes at once (threshold), the best rate wins', async () => {
      const run = config.simulate('loan-broker');
      await run.request({ aggregateId: 'loan-1', payload: { amount: 250000, termYears: 30 } });
      expect(run.subRequests().map((s) => s.recipient)).toEqual(
        [1, 2, 3, 4, 5].map((n) => `fanin-bank-${n}`),
      );
      await run.advance('1s');
      await run.reply('bank-1', { bank: 'bank-1', rate: 4.2, term: 30 });
      expect(run.result()).toBeUndefined();
      await run.advance('2s');
      await run.reply('bank-2', { bank: 'bank-2', rate: 3.4, term: 30 });
      expect(run.result()).toMatchObject({
        outcome: 'completed',
        completedBy: 'threshold',
        closedAt: DEFAULT_START + 3000,
        result: { replyId: '1', body: { bank: 'bank-2', rate: 3.4 } },
        counts: { expected: 5, received: 2, failed: 0 },
      });
      await run.reply('bank-3', { bank: 'bank-3', rate: 3.0, term: 30 });
      expect(run.outputs('late')).toMatchObject([{ aggregateId: 'loan-1', replyId: '2' }]);
    });

    it('without a rate under the threshold, the best so far is taken at the 10 s deadline, silent banks missing', async () => {
      const run = config.simulate('loan-broker');
      await run.request({ aggregateId: 'loan-2', payload: { amount: 1 } });
      await run.reply('bank-4', { rate: 4.0, term: 20 });
      await run.reply('bank-5', { rate: 4.0, term: 15 });
      await run.advance('9999ms');
      expect(run.result()).toBeUndefined();
      await run.advance('1ms');
      expect(run.result()).toMatchObject({
        outcome: 'completed',
        completedBy: 'deadline',
        closedAt: DEFAULT_START + 10_000,
        // lowest rate, then the shortest term breaks the tie
        result: { replyId: '4', body: { rate: 4.0, term: 15 } },
        missing: [1, 2, 3].map((n) => ({ replyId: String(n - 1), label: `fanin-bank-${n}` })),
      });
    });

    it('two failures are tolerated and listed; a third ends the request failed at once', async () => {
      const run = config.simulate('loan-broker');
      await run.request({ aggregateId: 'loan-3', payload: {} });
      await run.fail('bank-1', 'credit check unavailable');
      await run.fail('bank-2', 'closed');
      expect(run.result()).toBeUndefined();
      await run.fail('bank-3', 'no');
      expect(run.result()).toMatchObject({
        outcome: 'failed',
        completedBy: 'failures',
        counts: { failed: 3 },
      });

      const tolerated = config.simulate('loan-broker');
      await tolerated.request({ aggregateId: 'loan-4', payload: {} });
      await tolerated.fail('bank-1', 'down');
      await tolerated.reply('bank-2', { rate: 3.1 });
      expect(tolerated.result()).toMatchObject({
        outcome: 'completed',
        completedBy: 'threshold',
        failures: [{ replyId: '0', error: 'down' }],
      });
    });

    it("a request's own timeoutSeconds (5 to 120) moves the deadline", async () => {
      const run = config.simulate('loan-broker');
      await run.request({ aggregateId: 'loan-5', payload: {}, parameters: { timeoutSeconds: 60 } });
      await run.reply('bank-1', { rate: 5 });
      await run.advance('59s');
      expect(run.result()).toBeUndefined();
      await run.advance('1s');
      expect(run.result()).toMatchObject({ completedBy: 'deadline', closedAt: DEFAULT_START + 60_000 });
    });
  });

  describe('auction', () => {
    it('the first bid opens it, the highest bid when it closes 6 s later wins, a bid after the close is late', async () => {
      const run = config.simulate('auction');
      const bid = (bidId: string, price: number) =>
        run.send({ auctionId: 'lot-7', bidId, price }, { 'fanin-definition': 'auction' });
      await bid('b1', 100);
      await run.advance('3s');
      await bid('b2', 250);
      await bid('b3', 180);
      await run.advance('3s');
      expect(run.result('auction:lot-7')).toMatchObject({
        outcome: 'completed',
        completedBy: 'deadline',
        closedAt: DEFAULT_START + 6000,
        result: { replyId: 'b2', body: { price: 250 } },
      });
      await bid('b4', 999);
      expect(run.outputs('late')).toMatchObject([{ aggregateId: 'auction:lot-7', replyId: 'b4' }]);
    });
  });

  describe('order-approval', () => {
    it('collects replies, snapshots every minute, and completes only on the OrderApproved event', async () => {
      const run = config.simulate('order-approval');
      await run.request({ aggregateId: 'order-42', expected: 2 });
      await run.reply({ replyId: '0' }, { approved: 'alice' });
      await run.advance('2m');
      expect(run.result()).toBeUndefined();
      expect(run.outputs('status').filter((o) => o.type === 'fanin.aggregate.snapshot')).toMatchObject([
        { period: 1, counts: { received: 1 } },
        { period: 2, counts: { received: 1 } },
      ]);
      await run.reply({ replyId: '1' }, { approved: 'bob' });
      expect(run.result()).toBeUndefined();
      await run.event({
        source: 'example.orders',
        'detail-type': 'OrderApproved',
        detail: { aggregateId: 'order-42' },
      });
      expect(run.result()).toMatchObject({
        outcome: 'completed',
        completedBy: 'external',
        closedAt: DEFAULT_START + 120_000,
        counts: { received: 2 },
      });
    });

    // A day of virtual time is 1,440 snapshot timers (one a minute), each a real timer invocation:
    // about 2 s on a quiet machine, so a longer timeout than the unit default.
    it('without the event it times out at its one-day deadline, after 1,439 snapshots', {
      timeout: 60_000,
    }, async () => {
      const run = config.simulate('order-approval');
      await run.request({ aggregateId: 'order-43', expected: 1 });
      await run.advance(86_400_000 - 1);
      expect(run.result()).toBeUndefined();
      expect(run.outputs('status').filter((o) => o.type === 'fanin.aggregate.snapshot')).toHaveLength(1439);
      await run.advance(1);
      expect(run.result()).toMatchObject({
        outcome: 'timed-out',
        completedBy: 'deadline',
        closedAt: DEFAULT_START + 86_400_000,
        missing: [{ replyId: '0' }],
      });
    });
  });
});
