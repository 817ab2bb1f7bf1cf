import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { counterKey, shardKey } from '../../../shared/adapters/state-keys.ts';
import { aws } from '../../support/clients.ts';
import { FaninUnderTest } from '../../support/fanin.ts';

/**
 * How the data plane stores replies, on DynamoDB Local: compressed payloads, write shards, the
 * completion trigger's counters, a request stored only when read. The acceptance scenarios of
 * the Aggregator (the auction, a wait-for-all order, the missing-message detector, a market
 * closed by an external event, held, unknown and duplicate replies) are pinned by the test kit in
 * test/unit/packages/testing/features/scenarios.test.ts.
 */
describe('data plane scenarios', () => {
  let fanin: FaninUnderTest;

  beforeAll(async () => {
    fanin = await FaninUnderTest.start([
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
    ]);
  });
  afterAll(() => fanin.stop());

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
