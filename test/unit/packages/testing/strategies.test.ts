import { describe, expect, it } from 'vitest';
import { DEFAULT_START, simulate } from '../../../../packages/testing/src/index.ts';

/**
 * The kit on every completion strategy (docs/definitions.md, "Completion strategies"): each
 * completes when the table says, with the `completedBy` the table says, and times out at its
 * deadline at exactly the deadline's virtual instant. These run the production fan-out, reply,
 * timer and control handlers; they fail when the kit stops delivering what becomes due (its
 * timers) or when the engine's rule changes.
 */

const banks = (n: number) => ({
  type: 'recipient-list' as const,
  recipients: Array.from({ length: n }, (_, i) => `bank-${i + 1}`),
});

describe('kit: completion strategies', () => {
  it('all: completes when every expected reply is in, not before (completedBy all-arrived)', async () => {
    const run = simulate({
      name: 'all3',
      fanOut: banks(3),
      completion: { strategy: 'all' },
      timeoutSeconds: 30,
    });
    await run.request({ aggregateId: 'a-1', payload: { q: 1 } });
    await run.reply('bank-1', { v: 1 });
    await run.reply('bank-3', { v: 3 });
    expect(run.result()).toBeUndefined();
    await run.advance('2s');
    await run.reply('bank-2', { v: 2 });
    expect(run.result()).toMatchObject({
      outcome: 'completed',
      completedBy: 'all-arrived',
      closedAt: DEFAULT_START + 2000,
      counts: { expected: 3, received: 3, failed: 0 },
      result: [
        { replyId: '0', body: { v: 1 } },
        { replyId: '1', body: { v: 2 } },
        { replyId: '2', body: { v: 3 } },
      ],
    });
  });

  it('all: times out at the deadline, not a millisecond earlier, with the missing recipients (kills a kit whose advance skips timers)', async () => {
    const run = simulate({
      name: 'all3',
      fanOut: banks(3),
      completion: { strategy: 'all' },
      timeoutSeconds: 30,
    });
    await run.request({ aggregateId: 'a-2', payload: {} });
    await run.reply('bank-2', { v: 2 });
    await run.advance(29_999);
    expect(run.result()).toBeUndefined();
    await run.advance(1);
    expect(run.result()).toMatchObject({
      type: 'fanin.aggregate.timed-out',
      outcome: 'timed-out',
      completedBy: 'deadline',
      closedAt: DEFAULT_START + 30_000,
      missing: [
        { replyId: '0', label: 'bank-1' },
        { replyId: '2', label: 'bank-3' },
      ],
    });
    expect(run.outputs('timed-out')).toHaveLength(1);
  });

  it('a deadline inside one advance fires at its own moment, not at the end of the advance', async () => {
    const run = simulate({
      name: 'all3',
      fanOut: banks(3),
      completion: { strategy: 'all' },
      timeoutSeconds: 30,
    });
    await run.request({ aggregateId: 'a-3', payload: {} });
    await run.advance('45s');
    expect(run.result()).toMatchObject({ outcome: 'timed-out', closedAt: DEFAULT_START + 30_000 });
    // published by the timer at the deadline (SQS's SentTimestamp of the output), not at 45 s
    expect(run.received('timed-out').map((p) => p.at)).toEqual([DEFAULT_START + 30_000]);
    expect(run.now()).toBe(DEFAULT_START + 45_000);
  });

  it('count: completes at the count of successful replies (completedBy count)', async () => {
    const run = simulate({
      name: 'two-of-four',
      fanOut: banks(4),
      completion: { strategy: 'count', count: 2 },
      timeoutSeconds: 60,
    });
    await run.request({ aggregateId: 'c-1', payload: {} });
    await run.reply('bank-4', { v: 4 });
    expect(run.result()).toBeUndefined();
    await run.reply('bank-1', { v: 1 });
    expect(run.result()).toMatchObject({
      outcome: 'completed',
      completedBy: 'count',
      counts: { received: 2 },
    });
  });

  it('first: the first reply completes it; a later one is late (completedBy first)', async () => {
    const run = simulate({
      name: 'fastest',
      fanOut: banks(3),
      completion: { strategy: 'first' },
      timeoutSeconds: 10,
    });
    await run.request({ aggregateId: 'f-1', payload: {} });
    await run.advance('1s');
    await run.reply('bank-3', { v: 3 });
    await run.reply('bank-1', { v: 1 });
    expect(run.result()).toMatchObject({ completedBy: 'first', result: [{ replyId: '2', body: { v: 3 } }] });
    expect(run.outputs('late')).toMatchObject([
      { type: 'fanin.reply.late', aggregateId: 'f-1', replyId: '0' },
    ]);
  });

  it('timeout: completes at the deadline with what arrived; timed out when nothing did', async () => {
    const def = {
      name: 'window',
      fanOut: banks(3),
      completion: { strategy: 'timeout' as const },
      timeoutSeconds: 5,
    };
    const run = simulate(def);
    await run.request({ aggregateId: 't-1', payload: {} });
    await run.reply('bank-1', { v: 1 });
    await run.advance('4s');
    expect(run.result()).toBeUndefined();
    await run.advance('1s');
    expect(run.result()).toMatchObject({
      outcome: 'completed',
      completedBy: 'deadline',
      closedAt: DEFAULT_START + 5000,
    });
    await run.request({ aggregateId: 't-2', payload: {} });
    await run.advance('5s');
    expect(run.result('t-2')).toMatchObject({ outcome: 'timed-out', completedBy: 'deadline' });
  });

  it('override (threshold): a reply at or under the threshold completes at once (completedBy threshold)', async () => {
    const run = simulate({
      name: 'rates',
      fanOut: banks(3),
      completion: {
        strategy: 'override',
        score: { source: 'path', path: '$.rate' },
        threshold: 3.0,
        direction: 'below',
      },
      aggregation: { algorithm: 'best', criteria: [{ path: '$.rate', order: 'min' }] },
      timeoutSeconds: 30,
    });
    await run.request({ aggregateId: 'o-1', payload: {} });
    await run.reply('bank-1', { rate: 3.5 });
    expect(run.result()).toBeUndefined();
    await run.advance('3s');
    await run.reply('bank-2', { rate: 3.0 });
    expect(run.result()).toMatchObject({
      completedBy: 'threshold',
      closedAt: DEFAULT_START + 3000,
      result: { replyId: '1', body: { rate: 3.0 } },
    });
  });

  it('predicate: completes when the expression holds on the replies and the request', async () => {
    const run = simulate({
      name: 'quorum',
      fanOut: banks(4),
      completion: {
        strategy: 'predicate',
        expression: '$count(replies[vote = "yes"]) >= request.body.quorum',
      },
      timeoutSeconds: 60,
    });
    await run.request({ aggregateId: 'p-1', payload: { loan: 1000 }, quorum: 2 });
    await run.reply('bank-1', { vote: 'yes' });
    await run.reply('bank-2', { vote: 'no' });
    expect(run.result()).toBeUndefined();
    await run.reply('bank-4', { vote: 'yes' });
    expect(run.result()).toMatchObject({ completedBy: 'predicate', counts: { received: 3 } });
  });

  it('any: the first rule that holds completes it, and is the one reported', async () => {
    const quotes = {
      name: 'quotes',
      fanOut: banks(5),
      completion: {
        strategy: 'any' as const,
        rules: [
          {
            rule: 'threshold' as const,
            score: { source: 'path' as const, path: '$.rate' },
            threshold: 3.0,
            direction: 'below' as const,
          },
          { rule: 'count' as const, count: 3 },
          { rule: 'all-arrived' as const },
        ],
      },
      aggregation: { algorithm: 'best' as const, criteria: [{ path: '$.rate', order: 'min' as const }] },
      timeoutSeconds: 30,
    };
    const byCount = simulate(quotes);
    await byCount.request({ aggregateId: 'q-1', payload: {} });
    for (const [bank, rate] of [
      ['bank-1', 4.1],
      ['bank-2', 3.9],
    ] as const)
      await byCount.reply(bank, { rate });
    expect(byCount.result()).toBeUndefined();
    await byCount.reply('bank-5', { rate: 3.7 });
    expect(byCount.result()).toMatchObject({
      completedBy: 'count',
      result: { replyId: '4', body: { rate: 3.7 } },
    });

    const byThreshold = simulate(quotes);
    await byThreshold.request({ aggregateId: 'q-2', payload: {} });
    await byThreshold.reply('bank-3', { rate: 2.9 });
    expect(byThreshold.result()).toMatchObject({ completedBy: 'threshold' });
  });

  it('external: only an external event matching the pattern completes it (completedBy external)', async () => {
    const run = simulate({
      name: 'approval',
      fanOut: banks(2),
      completion: { strategy: 'external' },
      timeoutSeconds: 3600,
      externalEventPattern: { source: ['example.orders'], 'detail-type': ['OrderApproved'] },
    });
    await run.request({ aggregateId: 'order-1', payload: {} });
    await run.reply('bank-1', { ok: true });
    await run.reply('bank-2', { ok: true });
    expect(run.result()).toBeUndefined();
    await run.event({
      source: 'example.other',
      'detail-type': 'OrderApproved',
      detail: { aggregateId: 'order-1' },
    });
    expect(run.result()).toBeUndefined();
    expect(run.outputs('error')).toHaveLength(1);
    await run.advance('1m');
    await run.event({
      source: 'example.orders',
      'detail-type': 'OrderApproved',
      detail: { aggregateId: 'order-1' },
    });
    expect(run.result()).toMatchObject({
      outcome: 'completed',
      completedBy: 'external',
      closedAt: DEFAULT_START + 60_000,
      counts: { received: 2 },
    });
  });
});
