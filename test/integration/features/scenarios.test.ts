import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { counterKey, shardKey } from '../../../shared/adapters/state-keys.ts';
import { aws } from '../../support/clients.ts';
import { FaninUnderTest } from '../../support/fanin.ts';

/** Acceptance scenarios of the data plane, from seeds 000 (IBM aggregation) and 002 (EIP Aggregator). */
describe('data plane scenarios', () => {
  let fanin: FaninUnderTest;
  let warehouse: string;

  beforeAll(async () => {
    fanin = await FaninUnderTest.start([
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
        fanOut: { type: 'splitter', itemsPath: '$.items', target: 'placeholder', labelPath: '$.sku' },
        completion: { strategy: 'all' },
        timeoutSeconds: 60,
        unknownTimeoutSeconds: 30,
      },
      {
        name: 'detector',
        fanOut: { type: 'none' },
        completion: { strategy: 'all' },
        timeoutSeconds: 10,
      },
      {
        name: 'hot',
        fanOut: { type: 'none' },
        completion: { strategy: 'all' },
        writeShards: 4,
      },
      { name: 'broadcast', fanOut: { type: 'none' }, completion: { strategy: 'all' } },
      { name: 'broadcast-wide', fanOut: { type: 'none' }, completion: { strategy: 'all' }, writeShards: 4 },
      {
        name: 'market',
        fanOut: { type: 'none' },
        completion: { strategy: 'external' },
        aggregation: { algorithm: 'condense', field: '$.qty', functions: ['count', 'sum'] },
        externalEventPattern: { source: ['exchange'], 'detail-type': ['MarketClosed'] },
        externalEventCompletesAll: true,
      },
      {
        name: 'strict',
        fanOut: { type: 'none' },
        completion: { strategy: 'all' },
        unknownTimeoutSeconds: 0,
      },
    ]);
    warehouse = await fanin.targetQueue('warehouse');
    // The splitter's target is a queue name in this run; definitions are per deployment.
    const order = fanin.topology.definitions.get('order');
    if (order?.fanOut?.type === 'splitter') Object.assign(order.fanOut, { target: warehouse });
  });
  afterAll(() => fanin.stop());

  it('auction: self-starting, the first bid opens the aggregate and the lowest of three bids wins', async () => {
    // Prepare
    const bid = (bidId: string, price: number) =>
      fanin.sendReply({ auctionId: 'lot-7', bidId, price }, { 'fanin-definition': 'auction' });

    // Act
    await bid('b1', 120);
    await bid('b2', 95);
    await fanin.drain();
    expect(await fanin.outputs('completed')).toHaveLength(0);
    await bid('b3', 101);
    await fanin.drain();

    // Assess
    const [result, ...rest] = await fanin.outputs('completed');
    expect(rest).toHaveLength(0);
    expect(result).toMatchObject({
      aggregateId: 'auction:lot-7',
      definition: 'auction',
      counts: { received: 3 },
      result: { replyId: 'b2', body: { price: 95 } },
    });
  });

  it('auction: a bid after the auction closed is late, does not reopen it, and the result is unchanged', async () => {
    // Prepare
    for (const [bidId, price] of [
      ['c1', 10],
      ['c2', 11],
      ['c3', 12],
    ] as const) {
      await fanin.sendReply({ auctionId: 'lot-8', bidId, price }, { 'fanin-definition': 'auction' });
    }
    await fanin.drain();
    const [completed] = await fanin.outputs('completed');

    // Act
    await fanin.sendReply({ auctionId: 'lot-8', bidId: 'c4', price: 1 }, { 'fanin-definition': 'auction' });
    await fanin.drain();

    // Assess
    expect(completed).toMatchObject({ aggregateId: 'auction:lot-8', result: { replyId: 'c1' } });
    const late = await fanin.outputs('late');
    expect(late).toMatchObject([{ aggregateId: 'auction:lot-8', replyId: 'c4', aggregateStatus: 'closed' }]);
    expect(await fanin.outputs('completed')).toHaveLength(0);
    const header = await fanin.ctx.store.getHeader('auction:lot-8');
    expect(header).toMatchObject({ status: 'closed', outcome: 'completed', lateCount: 1 });
  });

  it('wait-for-all order: completes when every item has replied, in item order', async () => {
    // Prepare
    await fanin.sendRequest({
      definition: 'order',
      aggregateId: 'order-1',
      items: [{ sku: 'A' }, { sku: 'B' }, { sku: 'C' }],
    });
    await fanin.drain();
    const requests = await fanin.takeRequests(warehouse);
    expect(requests).toHaveLength(3);

    // Act: replies in reverse order
    for (const request of [...requests].reverse()) {
      const item = JSON.parse(request.Body ?? '{}') as { sku: string };
      await fanin.reply(request, { sku: item.sku, picked: true });
    }
    await fanin.drain();

    // Assess
    const [result] = await fanin.outputs('completed');
    expect(result).toMatchObject({
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
    await fanin.sendRequest({
      definition: 'order',
      aggregateId: 'order-2',
      items: [{ sku: 'A' }, { sku: 'B' }, { sku: 'C' }],
    });
    await fanin.drain();
    const requests = await fanin.takeRequests(warehouse);
    for (const request of requests.filter((r) => !r.Body?.includes('"B"')))
      await fanin.reply(request, { ok: true });
    await fanin.drain();

    // Act
    fanin.clock.advance(61_000);
    await fanin.sweep();

    // Assess
    expect(await fanin.outputs('completed')).toHaveLength(0);
    const [timedOut] = await fanin.outputs('timed-out');
    expect(timedOut).toMatchObject({
      aggregateId: 'order-2',
      type: 'fanin.aggregate.timed-out',
      counts: { expected: 3, received: 2 },
      missing: [{ replyId: '1', label: 'B' }],
    });
  });

  it('a kilobyte JSON reply is stored compressed, below a write unit, and the result carries it unchanged', async () => {
    // Prepare
    await fanin.sendRequest({ definition: 'detector', aggregateId: 'kb-1', expected: 2 });
    await fanin.drain();
    const quote = (bank: string) => ({
      bank,
      rate: 4.8731,
      conditions: Array.from(
        { length: 18 },
        (_, i) => `condition ${i}: subject to credit approval and appraisal`,
      ),
      officer: { name: 'J. Doe', email: `quotes@${bank}.example` },
    });

    // Act
    await fanin.sendReply(quote('bank-1'), { 'fanin-aggregate-id': 'kb-1', 'fanin-reply-id': 'a' });
    await fanin.drain();
    const { Item } = await fanin.clients.dynamo.send(
      new GetCommand({ TableName: fanin.topology.tableName, Key: { pk: 'A#kb-1', sk: 'R#a' } }),
    );
    await fanin.sendReply(quote('bank-2'), { 'fanin-aggregate-id': 'kb-1', 'fanin-reply-id': 'b' });
    await fanin.drain();

    // Assess
    expect(JSON.stringify(quote('bank-1')).length).toBeGreaterThan(1_024);
    expect(Item?.payload).toBeUndefined();
    expect(Item?.payloadBr).toBeInstanceOf(Uint8Array);
    expect((Item?.payloadBr as Uint8Array | undefined)?.byteLength).toBeLessThan(300);
    const [completed] = await fanin.outputs('completed');
    expect(completed).toMatchObject({ aggregateId: 'kb-1' });
    expect(completed?.result).toEqual([
      { replyId: 'a', body: quote('bank-1') },
      { replyId: 'b', body: quote('bank-2') },
    ]);
  });

  it('missing-message detector: a message that crossed only one of two paths raises the alert at the timeout', async () => {
    // Prepare: every business message travels two paths; the aggregate expects both copies.
    const watch = async (id: string) => {
      await fanin.sendRequest({ definition: 'detector', aggregateId: id, expected: 2 });
      await fanin.drain();
    };
    const path = (id: string, replyId: '0' | '1') =>
      fanin.sendReply(
        { path: replyId === '0' ? 'reliable' : 'unreliable' },
        { 'fanin-aggregate-id': id, 'fanin-reply-id': replyId },
      );
    await watch('msg-ok');
    await watch('msg-lost');

    // Act: the unreliable path drops msg-lost's copy
    await path('msg-ok', '0');
    await path('msg-ok', '1');
    await path('msg-lost', '0');
    await fanin.drain();
    fanin.clock.advance(11_000);
    await fanin.sweep();

    // Assess
    expect(await fanin.outputs('completed')).toMatchObject([{ aggregateId: 'msg-ok' }]);
    expect(await fanin.outputs('timed-out')).toMatchObject([
      { aggregateId: 'msg-lost', missing: [{ replyId: '1' }] },
    ]);
  });

  it('external event: a market close completes every open aggregate of the definition, and only those', async () => {
    // Prepare
    for (const id of ['m-1', 'm-2']) {
      await fanin.sendRequest({ definition: 'market', aggregateId: id });
    }
    await fanin.sendRequest({ definition: 'detector', aggregateId: 'other-1', expected: 5 });
    await fanin.drain();
    await fanin.sendReply({ qty: 5 }, { 'fanin-aggregate-id': 'm-1', 'fanin-reply-id': 'o1' });
    await fanin.sendReply({ qty: 7 }, { 'fanin-aggregate-id': 'm-1', 'fanin-reply-id': 'o2' });
    await fanin.drain();

    // Act: the raw EventBridge event, as a rule delivers it to the control queue
    await fanin.sendControl({
      version: '0',
      id: 'ev-1',
      source: 'exchange',
      'detail-type': 'MarketClosed',
      detail: {},
    });
    await fanin.drain();

    // Assess
    const completed = await fanin.outputs('completed');
    expect(completed.map((c) => c.aggregateId).sort()).toEqual(['m-1', 'm-2']);
    expect(completed.find((c) => c.aggregateId === 'm-1')).toMatchObject({ result: { count: 2, sum: 12 } });
    expect((await fanin.ctx.store.getHeader('other-1'))?.status).toBe('open');
    expect(await fanin.outputs('status')).toMatchObject([
      { type: 'fanin.control.result', command: 'complete' },
    ]);
  });

  it('a reply that arrives before its aggregate is held, then consolidated when the aggregate appears', async () => {
    // Prepare: the reply beats the request (it was sent directly)
    await fanin.sendReply(
      { sku: 'A', early: true },
      { 'fanin-aggregate-id': 'order-3', 'fanin-reply-id': '0', 'fanin-definition': 'order' },
    );
    await fanin.drain();
    expect(await fanin.outputs('unknown')).toHaveLength(0);

    // Act
    await fanin.sendRequest({
      definition: 'order',
      aggregateId: 'order-3',
      items: [{ sku: 'A' }, { sku: 'B' }],
    });
    await fanin.drain();
    const requests = await fanin.takeRequests(warehouse);
    await fanin.reply(requests.find((r) => r.Body?.includes('"B"'))!, { sku: 'B' });
    await fanin.drain();

    // Assess
    const [result] = await fanin.outputs('completed');
    expect(result).toMatchObject({
      aggregateId: 'order-3',
      counts: { received: 2 },
      result: [{ body: { early: true } }, { body: { sku: 'B' } }],
    });
    expect(await fanin.ctx.store.listHeld('order-3')).toHaveLength(0);
  });

  it('a held reply whose aggregate never appears goes to the unknown output at its unknown timeout', async () => {
    // Prepare
    await fanin.sendReply(
      { orphan: true },
      { 'fanin-aggregate-id': 'order-404', 'fanin-reply-id': '0', 'fanin-definition': 'order' },
    );
    await fanin.drain();

    // Act
    fanin.clock.advance(31_000);
    await fanin.sweep();

    // Assess
    expect(await fanin.outputs('unknown')).toMatchObject([
      { aggregateId: 'order-404', replyId: '0', definition: 'order' },
    ]);
    expect(await fanin.ctx.store.listHeld('order-404')).toHaveLength(0);
  });

  it('with an unknown timeout of 0 an unknown reply goes to the unknown output at once', async () => {
    // Act
    await fanin.sendReply(
      { x: 1 },
      { 'fanin-aggregate-id': 'nope', 'fanin-reply-id': '0', 'fanin-definition': 'strict' },
    );
    await fanin.drain();

    // Assess
    const [unknown] = await fanin.outputs('unknown');
    expect(unknown).toMatchObject({ aggregateId: 'nope', replyId: '0', reason: 'no such aggregate' });
    expect(JSON.parse(String((unknown?.message as { body?: string } | undefined)?.body))).toEqual({ x: 1 });
  });

  it('the same reply delivered three times in different batches is counted once', async () => {
    // Prepare
    await fanin.sendRequest({ definition: 'detector', aggregateId: 'dup-1', expected: 2 });
    await fanin.drain();

    // Act
    for (let i = 0; i < 3; i += 1) {
      await fanin.sendReply({ n: i }, { 'fanin-aggregate-id': 'dup-1', 'fanin-reply-id': '0' });
      await fanin.drain();
    }

    // Assess
    const { header, replies } = await fanin.ctx.store.readAggregate('dup-1');
    expect(header).toMatchObject({ status: 'open' });
    expect(replies.map((r) => r.replyId)).toEqual(['0']);
    await fanin.sendReply({ n: 9 }, { 'fanin-aggregate-id': 'dup-1', 'fanin-reply-id': '1' });
    await fanin.drain();
    const [result] = await fanin.outputs('completed');
    expect(result).toMatchObject({
      aggregateId: 'dup-1',
      counts: { received: 2 },
      result: [{ replyId: '0', body: { n: 0 } }, { replyId: '1' }],
    });
  });

  it('a hot aggregate spreads its replies over its write shards and still completes with every reply once', async () => {
    // Prepare
    await fanin.sendRequest({ definition: 'hot', aggregateId: 'hot-1', expected: 12 });
    await fanin.drain();
    const ids = Array.from({ length: 12 }, (_, i) => `r${i}`);

    // Act: every reply twice, so duplicates land on the same shard as their first copy
    for (const id of [...ids, ...ids])
      await fanin.sendReply({ id }, { 'fanin-aggregate-id': 'hot-1', 'fanin-reply-id': id });
    await fanin.drain();

    // Assess: the items live under several partition keys (mutant killed: every reply under A#hot-1)
    const keys = new Set<string>();
    for (const pk of [0, 1, 2, 3].map((shard) => shardKey('hot-1', shard))) {
      const { Items = [] } = await aws.dynamo.send(
        new QueryCommand({
          TableName: fanin.topology.tableName,
          // Replies alone (R#…) and packs of one batch's replies (Q#…).
          KeyConditionExpression: 'pk = :pk AND sk BETWEEN :q AND :r',
          ExpressionAttributeValues: { ':pk': pk, ':q': 'Q#', ':r': 'R$' },
        }),
      );
      if (Items.length > 0) keys.add(pk);
    }
    expect(keys.size).toBeGreaterThan(1);
    const results = await fanin.outputs('completed');
    const result = results.find((r) => r.aggregateId === 'hot-1');
    expect(result).toMatchObject({ counts: { expected: 12, received: 12 }, missing: [] });
    const members = (result?.result ?? []) as { replyId: string }[];
    expect(members.map((r) => r.replyId).sort()).toEqual([...ids].sort());
  });

  it('a large aggregate of unnamed replies completes on its 200th reply, triggered by one counter write per batch', async () => {
    // Prepare
    await fanin.sendRequest({ definition: 'broadcast', aggregateId: 'wide-1', expected: 200 });
    await fanin.drain();

    // Act
    for (let i = 0; i < 200; i += 1)
      await fanin.sendReply({ i }, { 'fanin-aggregate-id': 'wide-1', 'fanin-reply-id': `listener-${i}` });
    await fanin.drain();

    // Assess (mutant killed: the counter compared against a threshold it can never reach)
    const result = (await fanin.outputs('completed')).find((r) => r.aggregateId === 'wide-1');
    expect(result).toMatchObject({ counts: { expected: 200, received: 200 } });
    const counter = async (pk: string) =>
      (await aws.dynamo.send(new GetCommand({ TableName: fanin.topology.tableName, Key: { pk, sk: 'C' } })))
        .Item;
    // A trigger, not a count: batches add their size, never less than what was recorded.
    expect(Number((await counter(counterKey('wide-1', 0)))?.replies)).toBeGreaterThanOrEqual(200);
    // On a key of its own (mutant killed: the counter on the header's key, where its per-batch
    // write would take a tenth of a hot aggregate's 1,000 write units per second from its replies)
    expect(await counter('A#wide-1')).toBeUndefined();
  });

  it('a definition that never reads its request does not store it (one write less per aggregate)', async () => {
    // Act
    await fanin.sendRequest({ definition: 'detector', aggregateId: 'noreq-1', expected: 1 });
    await fanin.drain();

    // Assess (mutant killed: keepsRequest always true)
    const { Item } = await aws.dynamo.send(
      new GetCommand({ TableName: fanin.topology.tableName, Key: { pk: 'A#noreq-1', sk: 'B' } }),
    );
    expect(Item).toBeUndefined();
    expect(await fanin.ctx.store.getHeader('noreq-1')).toMatchObject({ status: 'open' });
  });

  it('a hot sharded aggregate keeps one trigger counter per write shard and completes on its last reply', async () => {
    // Prepare
    await fanin.sendRequest({ definition: 'broadcast-wide', aggregateId: 'wide-2', expected: 160 });
    await fanin.drain();

    // Act
    for (let i = 0; i < 160; i += 1)
      await fanin.sendReply({ i }, { 'fanin-aggregate-id': 'wide-2', 'fanin-reply-id': `l${i}` });
    await fanin.drain();

    // Assess (mutants killed: a total that reads only its own shard's counter — it never reaches
    // 160 and the aggregate stays open; one counter for every shard — only shard 0's exists)
    const result = (await fanin.outputs('completed')).find((r) => r.aggregateId === 'wide-2');
    expect(result).toMatchObject({ counts: { expected: 160, received: 160 } });
    let counters = 0;
    for (const pk of [0, 1, 2, 3].map((shard) => counterKey('wide-2', shard))) {
      const { Item } = await aws.dynamo.send(
        new GetCommand({ TableName: fanin.topology.tableName, Key: { pk, sk: 'C' } }),
      );
      if (Item) counters += 1;
    }
    expect(counters).toBeGreaterThan(1);
  });
});
