import { describe, expect, it } from 'vitest';
import {
  DEFAULT_START,
  type DefinitionInput,
  type FaninSimulation,
  simulate,
} from '../../../../../packages/testing/src/index.ts';
import { noResult, oneResult } from './one-result.ts';

/**
 * Acceptance scenarios of the Aggregator by the kit: the self-starting auction, a wait-for-all
 * order through a splitter, a missing-message detector, a market closed by an external event,
 * held and unknown replies, duplicates. How replies are stored (compression, write shards,
 * trigger counters, the stored request) stays in test/integration/features/scenarios.test.ts,
 * on DynamoDB Local.
 */

const definitions: DefinitionInput[] = [
  {
    name: 'auction',
    mode: 'self-starting',
    correlation: { source: 'path', path: '$.auctionId' },
    replyId: { source: 'path', path: '$.bidId' },
    completion: { strategy: 'count', count: 3 },
    aggregation: { algorithm: 'best', criteria: [{ path: '$.price', order: 'min' }] },
    timeoutSeconds: 600,
  },
  {
    name: 'order',
    fanOut: { type: 'splitter', itemsPath: '$.items', target: 'warehouse', labelPath: '$.sku' },
    completion: { strategy: 'all' },
    timeoutSeconds: 60,
    unknownTimeoutSeconds: 30,
  },
  { name: 'detector', fanOut: { type: 'none' }, completion: { strategy: 'all' }, timeoutSeconds: 10 },
  {
    name: 'market',
    fanOut: { type: 'none' },
    completion: { strategy: 'external' },
    aggregation: { algorithm: 'condense', field: '$.qty', functions: ['count', 'sum'] },
    externalEventPattern: { source: ['exchange'], 'detail-type': ['MarketClosed'] },
    externalEventCompletesAll: true,
  },
  { name: 'strict', fanOut: { type: 'none' }, completion: { strategy: 'all' }, unknownTimeoutSeconds: 0 },
];

/** The stored items of one aggregate whose sort key starts with `prefix` (`H` its header, `U#` its held replies). */
const items = (run: FaninSimulation, id: string, prefix: string) =>
  run.models.dynamodb
    .items(run.topology.tableName)
    .filter((i) => i.pk === `A#${id}` && String(i.sk).startsWith(prefix));

describe('data plane scenarios (kit)', () => {
  it('auction: self-starting, the first bid opens the aggregate and the lowest of three bids wins', async () => {
    // Prepare
    const run = simulate(definitions);
    const bid = (bidId: string, price: number) =>
      run.send({ auctionId: 'lot-7', bidId, price }, { 'fanin-definition': 'auction' });

    // Act
    await bid('b1', 120);
    await bid('b2', 95);
    const before = run.outputs('completed');
    await bid('b3', 101);

    // Assess
    expect(before).toHaveLength(0);
    const { output } = oneResult(run, 'auction:lot-7');
    expect(output).toMatchObject({
      aggregateId: 'auction:lot-7',
      definition: 'auction',
      counts: { received: 3 },
      result: { replyId: 'b2', body: { price: 95 } },
    });
  });

  it('auction: a bid after the auction closed is late, does not reopen it, and the result is unchanged', async () => {
    // Prepare
    const run = simulate(definitions);
    for (const [bidId, price] of [
      ['c1', 10],
      ['c2', 11],
      ['c3', 12],
    ] as const) {
      await run.send({ auctionId: 'lot-8', bidId, price }, { 'fanin-definition': 'auction' });
    }

    // Act
    await run.send({ auctionId: 'lot-8', bidId: 'c4', price: 1 }, { 'fanin-definition': 'auction' });

    // Assess
    expect(oneResult(run, 'auction:lot-8').output).toMatchObject({ result: { replyId: 'c1' } });
    expect(run.outputs('late')).toMatchObject([
      { aggregateId: 'auction:lot-8', replyId: 'c4', aggregateStatus: 'closed' },
    ]);
    expect(run.outputs('completed')).toHaveLength(1);
    expect(items(run, 'auction:lot-8', 'H')).toMatchObject([
      { status: 'closed', outcome: 'completed', lateCount: 1 },
    ]);
  });

  it('wait-for-all order: completes when every item has replied, in item order', async () => {
    // Prepare
    const run = simulate(definitions);
    await run.request({
      definition: 'order',
      aggregateId: 'order-1',
      items: [{ sku: 'A' }, { sku: 'B' }, { sku: 'C' }],
    });
    const requests = run.subRequests('warehouse');
    expect(requests).toHaveLength(3);

    // Act: replies in reverse order
    for (const request of [...requests].reverse()) {
      await run.reply(request, { sku: (request.body as { sku: string }).sku, picked: true });
    }

    // Assess
    expect(oneResult(run, 'order-1').output).toMatchObject({
      aggregateId: 'order-1',
      counts: { expected: 3, received: 3 },
      result: [
        { replyId: '0', body: { sku: 'A' } },
        { replyId: '1', body: { sku: 'B' } },
        { replyId: '2', body: { sku: 'C' } },
      ],
      missing: [],
    });
  });

  it('wait-for-all order: times out listing the missing item when one never replies', async () => {
    // Prepare
    const run = simulate(definitions);
    await run.request({
      definition: 'order',
      aggregateId: 'order-2',
      items: [{ sku: 'A' }, { sku: 'B' }, { sku: 'C' }],
    });
    for (const request of run.subRequests('warehouse').filter((r) => (r.body as { sku: string }).sku !== 'B'))
      await run.reply(request, { ok: true });

    // Act
    await run.advance('59999ms');
    const before = run.result();
    await run.advance('1ms');

    // Assess
    expect(before).toBeUndefined();
    expect(run.outputs('completed')).toHaveLength(0);
    expect(oneResult(run, 'order-2')).toMatchObject({
      channel: 'timed-out',
      output: {
        aggregateId: 'order-2',
        type: 'fanin.aggregate.timed-out',
        counts: { expected: 3, received: 2 },
        closedAt: DEFAULT_START + 60_000,
        missing: [{ replyId: '1', label: 'B' }],
      },
    });
  });

  it('missing-message detector: a message that crossed only one of two paths raises the alert at the timeout', async () => {
    // Prepare: every business message travels two paths; the aggregate expects both copies.
    const run = simulate(definitions);
    for (const id of ['msg-ok', 'msg-lost'])
      await run.request({ definition: 'detector', aggregateId: id, expected: 2 });
    const path = (aggregateId: string, replyId: '0' | '1') =>
      run.reply({ aggregateId, replyId }, { path: replyId === '0' ? 'reliable' : 'unreliable' });

    // Act: the unreliable path drops msg-lost's copy
    await path('msg-ok', '0');
    await path('msg-ok', '1');
    await path('msg-lost', '0');
    await run.advance('10s');

    // Assess
    expect(run.outputs('completed')).toMatchObject([{ aggregateId: 'msg-ok' }]);
    expect(run.outputs('timed-out')).toMatchObject([
      { aggregateId: 'msg-lost', closedAt: DEFAULT_START + 10_000, missing: [{ replyId: '1' }] },
    ]);
  });

  it('external event: a market close completes every open aggregate of the definition, and only those', async () => {
    // Prepare
    const run = simulate(definitions);
    for (const id of ['m-1', 'm-2']) await run.request({ definition: 'market', aggregateId: id });
    await run.request({ definition: 'detector', aggregateId: 'other-1', expected: 5 });
    await run.reply({ aggregateId: 'm-1', replyId: 'o1' }, { qty: 5 });
    await run.reply({ aggregateId: 'm-1', replyId: 'o2' }, { qty: 7 });

    // Act: the EventBridge event, as the stack's rule delivers it to the control queue
    await run.event({ source: 'exchange', 'detail-type': 'MarketClosed', detail: {} });

    // Assess
    const completed = run.outputs('completed');
    expect(completed.map((c) => c.aggregateId).sort()).toEqual(['m-1', 'm-2']);
    expect(completed.find((c) => c.aggregateId === 'm-1')).toMatchObject({ result: { count: 2, sum: 12 } });
    expect(items(run, 'other-1', 'H')).toMatchObject([{ status: 'open' }]);
    expect(run.outputs('status')).toMatchObject([{ type: 'fanin.control.result', command: 'complete' }]);
  });

  it('a reply that arrives before its aggregate is held, then consolidated when the aggregate appears', async () => {
    // Prepare: the reply beats the request (it was sent directly)
    const run = simulate(definitions);
    await run.reply({ aggregateId: 'order-3', replyId: '0', definition: 'order' }, { sku: 'A', early: true });
    expect(run.outputs('unknown')).toHaveLength(0);
    expect(items(run, 'order-3', 'U#')).toHaveLength(1);

    // Act
    await run.request({ definition: 'order', aggregateId: 'order-3', items: [{ sku: 'A' }, { sku: 'B' }] });
    const b = run.subRequests('warehouse').find((r) => (r.body as { sku: string }).sku === 'B');
    await run.reply(b as NonNullable<typeof b>, { sku: 'B' });

    // Assess
    expect(oneResult(run, 'order-3').output).toMatchObject({
      aggregateId: 'order-3',
      counts: { received: 2 },
      result: [{ body: { early: true } }, { body: { sku: 'B' } }],
    });
    expect(items(run, 'order-3', 'U#')).toHaveLength(0);
    await run.advance('31s');
    expect(run.outputs('unknown')).toHaveLength(0);
  });

  it('a held reply whose aggregate never appears goes to the unknown output at its unknown timeout', async () => {
    // Prepare
    const run = simulate(definitions);
    await run.reply({ aggregateId: 'order-404', replyId: '0', definition: 'order' }, { orphan: true });

    // Act
    await run.advance('29999ms');
    const before = run.outputs('unknown');
    await run.advance('1ms');

    // Assess
    expect(before).toHaveLength(0);
    expect(run.received('unknown')).toMatchObject([
      { at: DEFAULT_START + 30_000, body: { aggregateId: 'order-404', replyId: '0', definition: 'order' } },
    ]);
    expect(items(run, 'order-404', 'U#')).toHaveLength(0);
  });

  it('with an unknown timeout of 0 an unknown reply goes to the unknown output at once', async () => {
    // Act
    const run = simulate(definitions);
    await run.reply({ aggregateId: 'nope', replyId: '0', definition: 'strict' }, { x: 1 });

    // Assess
    const [unknown] = run.outputs('unknown');
    expect(unknown).toMatchObject({ aggregateId: 'nope', replyId: '0', reason: 'no such aggregate' });
    expect(JSON.parse(String((unknown?.message as { body?: string } | undefined)?.body))).toEqual({ x: 1 });
  });

  it('the same reply delivered three times in different batches is counted once', async () => {
    // Prepare
    const run = simulate(definitions);
    await run.request({ definition: 'detector', aggregateId: 'dup-1', expected: 2 });

    // Act
    for (let i = 0; i < 3; i += 1) await run.reply({ replyId: '0' }, { n: i });

    // Assess
    expect(run.records.reply).toBe(3);
    noResult(run, 'dup-1');
    await run.reply({ replyId: '1' }, { n: 9 });
    expect(oneResult(run, 'dup-1').output).toMatchObject({
      aggregateId: 'dup-1',
      counts: { received: 2 },
      result: [{ replyId: '0', body: { n: 0 } }, { replyId: '1' }],
    });
  });
});
