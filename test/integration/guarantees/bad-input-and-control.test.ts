import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openingRequestId } from '../../../shared/use-cases/fan-out.ts';
import { FaninUnderTest, takeAll } from '../../support/fanin.ts';

/**
 * Bad input never blocks a queue and is never lost: it lands on the error output with its reason
 * and the original message. The control bus (the Aggregator pattern's control channel) purges, lists,
 * completes and changes runtime parameters.
 */
describe('bad input', () => {
  let fanin: FaninUnderTest;
  let okCounter = 0;

  beforeAll(async () => {
    fanin = await FaninUnderTest.start([
      { name: 'plain', fanOut: { type: 'none' }, completion: { strategy: 'all' }, timeoutSeconds: 60 },
      {
        name: 'broken',
        fanOut: { type: 'none' },
        completion: { strategy: 'all' },
        aggregation: { algorithm: 'custom', expression: '$error("boom")' },
      },
      {
        name: 'runaway',
        fanOut: { type: 'none' },
        completion: { strategy: 'all' },
        aggregation: { algorithm: 'custom', expression: '($f := function($x){ $f($x + 1) }; $f(0))' },
      },
      {
        name: 'keyed',
        mode: 'self-starting',
        correlation: {
          source: 'jsonata',
          expression: '($loop := function($x){ $loop($x) }; $loop(body.id))',
        },
        completion: { strategy: 'count', count: 2 },
        timeoutSeconds: 60,
      },
      { name: 'recipients', fanOut: { type: 'recipient-list' }, completion: { strategy: 'all' } },
      {
        name: 'splitter',
        fanOut: { type: 'splitter', itemsPath: '$.items', target: 'nowhere' },
        completion: { strategy: 'all' },
      },
    ]);
  });
  afterAll(() => fanin.stop());

  it.each([
    ['a body that is not JSON', 'not json {', {}, 'body is not valid JSON'],
    ['a body that is not an object', '[1,2]', {}, 'must be a JSON object'],
    ['no definition', { aggregateId: 'x' }, {}, 'names no definition'],
    ['an unknown definition', { definition: 'nope' }, {}, 'unknown definition "nope"'],
    [
      'a splitter request without its items array',
      { definition: 'splitter', items: 'x' },
      {},
      '$.items is not an array',
    ],
    [
      'an invalid aggregate id',
      { definition: 'plain', aggregateId: 'bad id with spaces', expected: 1 },
      {},
      'aggregateId must be',
    ],
    ['a missing expected count', { definition: 'plain' }, {}, 'body.expected must be a non-negative integer'],
    [
      'an expected count of the wrong type',
      { definition: 'plain', expected: '3' },
      {},
      'body.expected must be a non-negative integer',
    ],
    [
      'recipients that are not a list',
      { definition: 'recipients', recipients: 'bank' },
      {},
      'needs recipients',
    ],
    ['a self-starting definition', { definition: 'keyed' }, {}, 'is self-starting'],
  ])(
    'a request with %s goes to the error output with its reason',
    async (_case, body, attributes, reason) => {
      // Act
      await fanin.sendRequest(body, attributes);
      await fanin.drain();

      // Assess
      const [error, ...rest] = await fanin.outputs('error');
      expect(rest).toEqual([]);
      expect(error).toMatchObject({ type: 'fanin.error', source: 'ingress' });
      expect(String(error?.reason)).toContain(reason);
      expect((error?.message as { body?: string } | undefined)?.body).toBe(
        typeof body === 'string' ? body : JSON.stringify(body),
      );
    },
  );

  it.each([
    ['a body that is not JSON', '{{', { 'fanin-aggregate-id': 'a' }, 'body is not valid JSON'],
    ['no correlation at all', { v: 1 }, {}, 'missing correlation'],
    [
      'an unknown definition',
      { v: 1 },
      { 'fanin-definition': 'nope', 'fanin-aggregate-id': 'a' },
      'unknown definition',
    ],
    [
      'a body too large for the state store',
      { pad: 'x'.repeat(360_000) },
      { 'fanin-aggregate-id': 'a' },
      'bytes; at most',
    ],
    [
      'a reply id longer than 256 characters',
      { v: 1 },
      { 'fanin-aggregate-id': 'a', 'fanin-reply-id': 'r'.repeat(300) },
      'longer than 256',
    ],
    ['an empty aggregate id attribute', { v: 1 }, { 'fanin-aggregate-id': '' }, 'missing correlation'],
    ['a correlation expression that runs away', { id: 'x' }, { 'fanin-definition': 'keyed' }, 'exceeded its'],
  ])(
    'a reply with %s goes to the error output and the rest of its batch flows',
    async (_case, body, attributes, reason) => {
      // Prepare: a good reply in the same batch
      okCounter += 1;
      const ok = `ok-${okCounter}`;
      await fanin.sendRequest({ definition: 'plain', aggregateId: ok, expected: 1 });
      await fanin.drain();
      await fanin.sendReply(body, attributes);
      await fanin.sendReply({ fine: true }, { 'fanin-aggregate-id': ok, 'fanin-reply-id': '0' });

      // Act
      await fanin.drain();

      // Assess
      const [error] = await fanin.outputs('error');
      expect(error).toMatchObject({ type: 'fanin.error', source: 'reply' });
      expect(String(error?.reason)).toContain(reason);
      expect(await fanin.outputs('completed')).toMatchObject([{ aggregateId: ok }]);
    },
  );

  it('a request reusing an aggregate id of another request is refused; the first aggregate is untouched', async () => {
    // Prepare
    await fanin.sendRequest({ definition: 'plain', aggregateId: 'taken', requestId: 'r1', expected: 2 });
    await fanin.drain();

    // Act
    await fanin.sendRequest({ definition: 'plain', aggregateId: 'taken', requestId: 'r2', expected: 9 });
    await fanin.drain();

    // Assess
    const [error] = await fanin.outputs('error');
    expect(String(error?.reason)).toContain('already in use by another request');
    const header = await fanin.ctx.store.getHeader('taken');
    expect(header).toMatchObject({ expected: 2 });
    expect(openingRequestId(header)).toBe('r1');
  });

  it('a retried request (same request id) opens no second aggregate', async () => {
    // Act
    await fanin.sendRequest({ definition: 'plain', requestId: 'same', expected: 1 });
    await fanin.sendRequest({ definition: 'plain', requestId: 'same', expected: 1 });
    await fanin.drain();

    // Assess
    expect(await fanin.outputs('error')).toEqual([]);
    const open = await fanin.ctx.store.listOpen('plain');
    expect(open.filter((h) => openingRequestId(h) === 'same')).toHaveLength(1);
  });

  it('a custom expression that runs away fails its aggregate with the budget it exceeded; the handler goes on', async () => {
    // Prepare
    await fanin.sendRequest({ definition: 'runaway', aggregateId: 'rw-1', expected: 1 });
    await fanin.drain();

    // Act
    await fanin.sendReply({ v: 1 }, { 'fanin-aggregate-id': 'rw-1', 'fanin-reply-id': '0' });
    await fanin.drain();

    // Assess
    const [failed] = await fanin.outputs('error');
    expect(failed).toMatchObject({ type: 'fanin.aggregate.failed', aggregateId: 'rw-1' });
    expect(String(failed?.reason)).toMatch(/exceeded its (time|depth) budget/);
  });

  it('a custom expression that throws fails the aggregate to the error output with the reason', async () => {
    // Prepare
    await fanin.sendRequest({ definition: 'broken', aggregateId: 'b-1', expected: 1 });
    await fanin.drain();

    // Act
    await fanin.sendReply({ v: 1 }, { 'fanin-aggregate-id': 'b-1', 'fanin-reply-id': '0' });
    await fanin.drain();

    // Assess
    const [failed] = await fanin.outputs('error');
    expect(failed).toMatchObject({ type: 'fanin.aggregate.failed', aggregateId: 'b-1' });
    expect(String(failed?.reason)).toContain('boom');
    expect(await fanin.ctx.store.getHeader('b-1')).toMatchObject({ status: 'closed', outcome: 'failed' });
  });
});

describe('control bus', () => {
  let fanin: FaninUnderTest;

  beforeAll(async () => {
    fanin = await FaninUnderTest.start([
      { name: 'alpha', fanOut: { type: 'none' }, completion: { strategy: 'all' }, timeoutSeconds: 60 },
      { name: 'beta', fanOut: { type: 'none' }, completion: { strategy: 'all' }, timeoutSeconds: 60 },
    ]);
  });
  afterAll(() => fanin.stop());

  async function open(definition: string, ...ids: string[]) {
    for (const id of ids) await fanin.sendRequest({ definition, aggregateId: id, expected: 2 });
    await fanin.drain();
  }

  it('list publishes a snapshot of the active aggregates to the status output', async () => {
    // Prepare
    await open('alpha', 'l-1', 'l-2');

    // Act
    await fanin.sendControl({ command: 'list', definition: 'alpha' });
    await fanin.drain();

    // Assess
    const [status] = await fanin.outputs('status');
    expect(status?.type).toBe('fanin.status.active');
    const ids = ((status?.aggregates ?? []) as { aggregateId: string }[]).map((a) => a.aggregateId);
    expect(ids).toEqual(expect.arrayContaining(['l-1', 'l-2']));
    await fanin.sendControl({ command: 'purge', definition: 'alpha' });
    await fanin.drain();
    await fanin.outputs('status');
  });

  it('list shows open aggregates oldest first with the replies counted so far, and none that has closed', async () => {
    // Prepare: three aggregates opened a second apart; one gets a reply, one completes
    for (const id of ['o-1', 'o-2', 'o-3']) {
      await open('beta', id);
      fanin.clock.advance(1_000);
    }
    await fanin.sendReply({}, { 'fanin-aggregate-id': 'o-2', 'fanin-reply-id': 'a' });
    for (const replyId of ['a', 'b']) {
      await fanin.sendReply({}, { 'fanin-aggregate-id': 'o-3', 'fanin-reply-id': replyId });
    }
    await fanin.drain();

    // Act
    await fanin.sendControl({ command: 'list', definition: 'beta' });
    await fanin.drain();

    // Assess: the index holds only keys, so the counts come from each header as it is now
    expect((await fanin.outputs('completed')).map((r) => r.aggregateId)).toEqual(['o-3']);
    const [status] = await fanin.outputs('status');
    expect(status?.aggregates).toEqual([
      expect.objectContaining({ aggregateId: 'o-1', received: 0, expected: 2 }),
      expect.objectContaining({ aggregateId: 'o-2', received: 1, expected: 2 }),
    ]);
    await fanin.sendControl({ command: 'purge', definition: 'beta' });
    await fanin.drain();
    await fanin.outputs('status');
  });

  it('the list reads every shard of the due index and merges one definition’s aggregates oldest first', async () => {
    // Prepare
    const ids = Array.from({ length: 16 }, (_, i) => `spread-${String(i).padStart(2, '0')}`);
    for (const id of ids) {
      await fanin.sendRequest({ definition: 'alpha', aggregateId: id, expected: 2 });
      await fanin.drain(); // opened now, by the test's clock
      fanin.clock.advance(10);
    }

    // Act
    const { Items = [] } = await fanin.clients.dynamo.send(
      new ScanCommand({ TableName: fanin.topology.tableName, IndexName: 'due' }),
    );
    const listed = await fanin.ctx.store.listOpen('alpha');

    // Assess: the headers are spread over several shards, and none is lost in the merge
    // (mutant killed: a listing that reads only the first shard)
    const shards = new Set(
      Items.filter((item) => String(item.pk).startsWith('A#spread-')).map((item) => String(item.dueShard)),
    );
    expect(shards.size).toBeGreaterThan(1);
    expect(listed.map((h) => h.aggregateId)).toEqual(ids);
    await fanin.sendControl({ command: 'purge', definition: 'alpha' });
    await fanin.drain();
    await fanin.outputs('status');
  });

  it('purge one ends that aggregate as purged; a reply to it afterwards is late', async () => {
    // Prepare
    await open('alpha', 'p-1', 'p-2');

    // Act
    await fanin.sendControl({ command: 'purge', aggregateId: 'p-1' });
    await fanin.drain();
    await fanin.sendReply({}, { 'fanin-aggregate-id': 'p-1', 'fanin-reply-id': '0' });
    await fanin.drain();

    // Assess
    const status = await fanin.outputs('status');
    expect(status).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ type: 'fanin.aggregate.purged', aggregateId: 'p-1' }),
        expect.objectContaining({ type: 'fanin.control.result', command: 'purge', affected: ['p-1'] }),
      ]),
    );
    expect(await fanin.outputs('late')).toMatchObject([{ aggregateId: 'p-1' }]);
    expect((await fanin.ctx.store.getHeader('p-2'))?.status).toBe('open');
    await fanin.sendControl({ command: 'purge', all: true });
    await fanin.drain();
    await fanin.outputs('status');
  });

  it('purge all of a definition leaves the other definitions open', async () => {
    // Prepare
    await open('alpha', 'pd-1');
    await open('beta', 'pd-2');

    // Act
    await fanin.sendControl({ command: 'purge', definition: 'alpha' });
    await fanin.drain();

    // Assess
    expect((await fanin.ctx.store.getHeader('pd-1'))?.status).toBe('closed');
    expect((await fanin.ctx.store.getHeader('pd-2'))?.status).toBe('open');
    await fanin.sendControl({ command: 'purge', all: true });
    await fanin.drain();
    expect((await fanin.ctx.store.getHeader('pd-2'))?.status).toBe('closed');
    await fanin.outputs('status');
  });

  it('complete one aggregate completes it with the replies it has', async () => {
    // Prepare
    await open('beta', 'c-1');
    await fanin.sendReply({ v: 1 }, { 'fanin-aggregate-id': 'c-1', 'fanin-reply-id': '0' });
    await fanin.drain();

    // Act
    await fanin.sendControl({ command: 'complete', aggregateId: 'c-1' });
    await fanin.drain();

    // Assess
    expect(await fanin.outputs('completed')).toMatchObject([
      { aggregateId: 'c-1', counts: { received: 1, expected: 2 } },
    ]);
    await fanin.outputs('status');
  });

  it('set-parameters changes the timeout of aggregates opened afterwards, not of open ones', async () => {
    // Prepare
    await open('beta', 'before');

    // Act
    await fanin.sendControl({
      command: 'set-parameters',
      definition: 'beta',
      parameters: { timeoutSeconds: 5 },
    });
    await fanin.drain();
    await open('beta', 'after');

    // Assess
    const before = await fanin.ctx.store.getHeader('before');
    const after = await fanin.ctx.store.getHeader('after');
    expect(before?.params.timeoutSeconds).toBe(60);
    expect(after?.params.timeoutSeconds).toBe(5);
    expect((after?.deadline ?? 0) - (after?.openedAt ?? 0)).toBe(5000);
    await fanin.sendControl({ command: 'set-parameters', definition: 'beta', parameters: {} });
    await fanin.sendControl({ command: 'purge', all: true });
    await fanin.drain();
    await fanin.outputs('status');
  });

  it.each([
    ['an unknown command', { command: 'explode' }, 'invalid control command'],
    ['purge with no target', { command: 'purge' }, 'exactly one of'],
    ['an unknown definition', { command: 'list', definition: 'nope' }, 'unknown definition'],
    [
      'bad parameters',
      { command: 'set-parameters', definition: 'alpha', parameters: { timeoutSeconds: -1 } },
      'parameters.timeoutSeconds',
    ],
    // Stored, a count for a definition without a count rule was acknowledged and never applied.
    [
      'a count for a definition that completes on all',
      { command: 'set-parameters', definition: 'alpha', parameters: { count: 2 } },
      'parameters.count: completion strategy \'all\' of "alpha" has no count to set',
    ],
    [
      'a threshold for a definition that completes on all',
      { command: 'set-parameters', definition: 'alpha', parameters: { threshold: 3 } },
      'has no score threshold to set',
    ],
    [
      'an event no definition matches',
      { source: 'x', 'detail-type': 'y', detail: {} },
      "no definition's external event pattern",
    ],
    // Beyond DynamoDB's 2 KB partition key these cycled to the control DLQ on ValidationException.
    [
      'a purge naming an aggregate id of 3,000 bytes',
      { command: 'purge', aggregateId: 'x'.repeat(3000) },
      'at most 1024 bytes',
    ],
    [
      'an event naming an aggregate id of 3,000 bytes',
      { source: 'x', 'detail-type': 'y', detail: { aggregateId: 'x'.repeat(3000) } },
      'detail.aggregateId is over 1024 bytes',
    ],
  ])('a control message with %s goes to the error output', async (_case, body, reason) => {
    // Act
    await fanin.sendControl(body);
    await fanin.drain();

    // Assess
    const [error] = await fanin.outputs('error');
    expect(error).toMatchObject({ type: 'fanin.error', source: 'control' });
    expect(String(error?.reason)).toContain(reason);
  });
});

describe('poison messages', () => {
  let fanin: FaninUnderTest;

  beforeAll(async () => {
    fanin = await FaninUnderTest.start(
      [{ name: 'plain', fanOut: { type: 'none' }, completion: { strategy: 'all' }, timeoutSeconds: 60 }],
      { maxReceiveCount: 3 },
    );
  });
  afterAll(() => fanin.stop());

  it('a reply that always fails moves to the partition DLQ after maxReceiveCount while other aggregates keep completing', async () => {
    // Prepare: replies to "cursed" fail every time (a store that always refuses them)
    await fanin.sendRequest({ definition: 'plain', aggregateId: 'healthy', expected: 1 });
    await fanin.sendRequest({ definition: 'plain', aggregateId: 'cursed', expected: 1 });
    await fanin.drain();
    const store = fanin.ctx.store;
    fanin.ctx = {
      ...fanin.ctx,
      store: new Proxy(store, {
        get(target, property, receiver) {
          const value = Reflect.get(target, property, receiver);
          if (property !== 'putReplies' || typeof value !== 'function') return value;
          return (id: string, ...rest: unknown[]) =>
            id === 'cursed'
              ? Promise.reject(new Error('poison'))
              : (value as (...a: unknown[]) => unknown).call(target, id, ...rest);
        },
      }),
    };

    // Act
    await fanin.sendReply({ v: 1 }, { 'fanin-aggregate-id': 'cursed', 'fanin-reply-id': '0' });
    await fanin.sendReply({ v: 2 }, { 'fanin-aggregate-id': 'healthy', 'fanin-reply-id': '0' });
    await fanin.drain();

    // Assess
    expect(await fanin.outputs('completed')).toMatchObject([{ aggregateId: 'healthy' }]);
    const dlq = fanin.provisioned.allQueueUrls[fanin.topology.replyPartitions[0]?.dlqName ?? ''] ?? '';
    const dead = await takeAll(dlq);
    expect(dead.map((m) => JSON.parse(m.Body ?? '{}'))).toEqual([{ v: 1 }]);
  });
});
