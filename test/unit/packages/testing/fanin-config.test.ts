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
    it('no bank answering times the request out once every bank passed its own 8 s, never completed with nothing', async () => {
      const run = config.simulate('loan-broker');
      await run.request({ aggregateId: 'loan-none', payload: {} });
      await run.advance('8s');
      // (mutant killed: all settled with no success completes with nothing)
      expect(run.result()).toMatchObject({
        outcome: 'timed-out',
        completedBy: 'responders-settled',
        counts: { expected: 5, received: 0 },
      });
    });
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

    it('without a rate under the threshold, each silent bank is asked again at 3 s and settled at its own 8 s: the best so far is taken then, the silent banks missing as timed out', async () => {
      const run = config.simulate('loan-broker');
      await run.request({ aggregateId: 'loan-2', payload: { amount: 1 } });
      await run.reply('bank-4', { rate: 4.0, term: 20 });
      await run.reply('bank-5', { rate: 4.0, term: 15 });
      await run.advance('3s');
      const asked = run.subRequests(undefined, 'loan-2').map((s) => [s.recipient, s.attempt]);
      await run.advance('4999ms');
      expect(run.result()).toBeUndefined();
      await run.advance('1ms');
      expect(asked.filter(([, attempt]) => attempt === 2)).toEqual(
        [1, 2, 3].map((n) => [`fanin-bank-${n}`, 2]),
      );
      expect(run.result()).toMatchObject({
        outcome: 'completed',
        completedBy: 'all-settled',
        closedAt: DEFAULT_START + 8_000,
        // lowest rate, then the shortest term breaks the tie
        result: { replyId: '4', body: { rate: 4.0, term: 15 } },
        missing: [1, 2, 3].map((n) => ({ replyId: String(n - 1), label: `fanin-bank-${n}`, timedOut: true })),
      });
    });

    it('a bank that sends heartbeats is not asked again and keeps its quote in until the 10 s deadline', async () => {
      const run = config.simulate('loan-broker');
      await run.request({ aggregateId: 'loan-8', payload: { amount: 1 } });
      for (const bank of ['bank-1', 'bank-2', 'bank-3', 'bank-4'])
        await run.reply(bank, { rate: 4.2, term: 30 });
      for (const at of [2, 6]) {
        await run.advanceTo(DEFAULT_START + at * 1000);
        await run.heartbeat({ aggregateId: 'loan-8', replyId: '4' });
      }
      await run.advanceTo(DEFAULT_START + 9_500);
      await run.reply('bank-5', { rate: 3.9, term: 30 });
      expect(run.subRequests('bank-5', 'loan-8').map((s) => s.attempt)).toEqual([1]);
      expect(run.result()).toMatchObject({
        completedBy: 'all-arrived',
        result: { replyId: '4', body: { rate: 3.9 } },
        recipients: expect.arrayContaining([
          expect.objectContaining({ replyId: '4', fate: 'replied', heartbeatAt: DEFAULT_START + 6_000 }),
        ]),
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

    it("a request's own timeoutSeconds (5 to 120) moves the deadline, before the banks' own 8 s", async () => {
      const run = config.simulate('loan-broker');
      await run.request({ aggregateId: 'loan-5', payload: {}, parameters: { timeoutSeconds: 5 } });
      await run.reply('bank-1', { rate: 5 });
      await run.advance('4999ms');
      expect(run.result()).toBeUndefined();
      await run.advance('1ms');
      // the banks' own deadlines are cut off by the aggregate's: the deadline decides, at 5 s
      expect(run.result()).toMatchObject({ completedBy: 'deadline', closedAt: DEFAULT_START + 5_000 });
    });
    it('two tolerated failures are listed beside the best quote the deadline takes', async () => {
      const run = config.simulate('loan-broker');
      await run.request({ aggregateId: 'loan-6', payload: {} });
      await run.fail('bank-1', 'down', { code: 'DOWN' });
      await run.fail('bank-2', 'closed');
      await run.reply('bank-3', { rate: 4.4, term: 30 });
      await run.advance('8s');
      expect(run.result()).toMatchObject({
        outcome: 'completed',
        completedBy: 'all-settled',
        counts: { expected: 5, received: 3, failed: 2 },
        result: { replyId: '2', body: { rate: 4.4 } },
        failures: [
          { replyId: '0', error: 'down', body: { code: 'DOWN' } },
          { replyId: '1', error: 'closed' },
        ],
        missing: [4, 5].map((n) => ({ replyId: String(n - 1), label: `fanin-bank-${n}`, timedOut: true })),
      });
    });

    it('a quote sent twice counts once; a quote after the deadline is late', async () => {
      const run = config.simulate('loan-broker');
      await run.request({ aggregateId: 'loan-7', payload: {} });
      await run.reply('bank-1', { rate: 4.5, term: 30 }, { copies: 2 });
      await run.reply('bank-2', { rate: 4.1, term: 30 });
      await run.advance('10s');
      // three messages handled, two replies recorded
      expect(run.records.reply).toBe(3);
      expect(run.result()).toMatchObject({
        completedBy: 'all-settled',
        counts: { received: 2 },
        result: { replyId: '1', body: { rate: 4.1 } },
      });
      await run.reply('bank-3', { rate: 2.0, term: 30 });
      expect(run.outputs('late')).toMatchObject([
        { type: 'fanin.reply.late', aggregateId: 'loan-7', replyId: '2' },
      ]);
      expect(run.outputs('completed')).toHaveLength(1);
    });

    it('a quote for a loan fanin never opened goes to the unknown output at once', async () => {
      const run = config.simulate('loan-broker');
      await run.reply({ aggregateId: 'loan-404', replyId: '0', definition: 'loan-broker' }, { rate: 3.0 });
      expect(run.outputs('unknown')).toMatchObject([
        { type: 'fanin.reply.unknown', aggregateId: 'loan-404', replyId: '0', reason: 'no such aggregate' },
      ]);
    });

    it.each([
      ['a deadline under 5 s', { timeoutSeconds: 4 }, 'parameters.timeoutSeconds is 4, outside the bounds'],
      [
        'a deadline over 120 s',
        { timeoutSeconds: 121 },
        'parameters.timeoutSeconds is 121, outside the bounds',
      ],
      ['a threshold of its own', { threshold: 5 }, 'does not let a request set parameters.threshold'],
    ])(
      'a request asking for %s is refused to the error output and opens nothing',
      async (_what, parameters, reason) => {
        const run = config.simulate('loan-broker');
        await run.request({ aggregateId: 'loan-bad', payload: {}, parameters });
        expect(run.outputs('error')).toMatchObject([
          { type: 'fanin.error', source: 'ingress', reason: expect.stringContaining(reason) },
        ]);
        expect(run.subRequests()).toEqual([]);
        await run.advance('2m');
        expect(run.result('loan-bad')).toBeUndefined();
      },
    );

    it('an operator completes a loan with the best rate so far, purges another; set-parameters raises the threshold for loans opened afterwards', async () => {
      const run = config.simulate('loan-broker');
      await run.request({ aggregateId: 'loan-8', payload: {} });
      await run.reply('bank-1', { rate: 4.2, term: 30 });
      await run.control({ command: 'complete', aggregateId: 'loan-8' });
      expect(run.result('loan-8')).toMatchObject({
        outcome: 'completed',
        completedBy: 'external',
        result: { body: { rate: 4.2 } },
      });
      await run.request({ aggregateId: 'loan-9', payload: {} });
      await run.control({ command: 'purge', aggregateId: 'loan-9' });
      expect(run.result('loan-9')).toMatchObject({ outcome: 'purged', completedBy: 'purge' });

      await run.control({
        command: 'set-parameters',
        definition: 'loan-broker',
        parameters: { threshold: 4.5 },
      });
      await run.request({ aggregateId: 'loan-10', payload: {} });
      await run.reply('bank-1', { rate: 4.4, term: 30 });
      expect(run.result('loan-10')).toMatchObject({
        completedBy: 'threshold',
        result: { body: { rate: 4.4 } },
      });
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
    it('a bid sent twice counts once; bids for another lot open another auction', async () => {
      const run = config.simulate('auction');
      const bid = (auctionId: string, bidId: string, price: number, copies = 1) =>
        run.send({ auctionId, bidId, price }, { 'fanin-definition': 'auction' }).then(async () => {
          for (let c = 1; c < copies; c += 1)
            await run.send({ auctionId, bidId, price }, { 'fanin-definition': 'auction' });
        });
      await bid('lot-1', 'b1', 100, 2);
      await bid('lot-2', 'b2', 50);
      await run.advance('6s');
      expect(run.result('auction:lot-1')).toMatchObject({
        counts: { received: 1 },
        result: { replyId: 'b1' },
      });
      expect(run.result('auction:lot-2')).toMatchObject({
        counts: { received: 1 },
        result: { replyId: 'b2' },
      });
    });

    it('an operator closes an auction early with the highest bid so far (completedBy external)', async () => {
      const run = config.simulate('auction');
      await run.send({ auctionId: 'lot-3', bidId: 'b1', price: 70 }, { 'fanin-definition': 'auction' });
      await run.send({ auctionId: 'lot-3', bidId: 'b2', price: 90 }, { 'fanin-definition': 'auction' });
      await run.advance('2s');
      await run.control({ command: 'complete', aggregateId: 'auction:lot-3' });
      expect(run.result('auction:lot-3')).toMatchObject({
        outcome: 'completed',
        completedBy: 'external',
        closedAt: DEFAULT_START + 2000,
        result: { replyId: 'b2', body: { price: 90 } },
      });
    });

    it('an auction nobody bids on is never opened: nothing is published at any time', async () => {
      const run = config.simulate('auction');
      await run.advance('1m');
      expect(run.outputs()).toEqual([]);
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

    // On AWS the stack's rule delivers only matching events; one that reaches the control queue
    // otherwise is refused all the same.
    it('an event of another type or source does not complete it, nor one naming no order: each refused to the error output', async () => {
      const run = config.simulate('order-approval');
      await run.request({ aggregateId: 'order-44', expected: 2 });
      await run.event({
        source: 'example.orders',
        'detail-type': 'OrderCancelled',
        detail: { aggregateId: 'order-44' },
      });
      await run.event({
        source: 'example.other',
        'detail-type': 'OrderApproved',
        detail: { aggregateId: 'order-44' },
      });
      expect(run.result()).toBeUndefined();
      await run.event({ source: 'example.orders', 'detail-type': 'OrderApproved', detail: {} });
      expect(run.result()).toBeUndefined();
      expect(run.outputs('error').map((e) => [e.source, e.reason])).toEqual([
        ['control', expect.stringContaining('does not match the externalEventPattern')],
        ['control', expect.stringContaining('does not match the externalEventPattern')],
        ['control', expect.stringContaining('names no aggregate')],
      ]);
    });

    it('a complete command completes it as the event does; an approval after that is late, a duplicate counted once', async () => {
      const run = config.simulate('order-approval');
      await run.request({ aggregateId: 'order-45', expected: 3 });
      await run.reply({ replyId: '0' }, { approved: 'alice' }, { copies: 2 });
      await run.control({ command: 'complete', aggregateId: 'order-45' });
      expect(run.result()).toMatchObject({
        outcome: 'completed',
        completedBy: 'external',
        counts: { expected: 3, received: 1 },
        result: [{ replyId: '0', body: { approved: 'alice' } }],
      });
      await run.reply({ replyId: '1' }, { approved: 'bob' });
      expect(run.outputs('late')).toMatchObject([{ aggregateId: 'order-45', replyId: '1' }]);
    });

    it('a purge ends an order purged; an approval for an order never opened goes to the unknown output at once', async () => {
      const run = config.simulate('order-approval');
      await run.request({ aggregateId: 'order-46', expected: 1 });
      await run.control({ command: 'purge', aggregateId: 'order-46' });
      expect(run.result()).toMatchObject({ outcome: 'purged', completedBy: 'purge' });
      await run.reply(
        { aggregateId: 'order-404', replyId: '0', definition: 'order-approval' },
        { approved: 'eve' },
      );
      expect(run.outputs('unknown')).toMatchObject([
        { aggregateId: 'order-404', reason: 'no such aggregate' },
      ]);
    });
  });
});
