import { describe, expect, it } from 'vitest';
import { DEFAULT_START, durationMs, simulate } from '../../../../packages/testing/src/index.ts';

/**
 * What the kit lets a test say besides the strategies: what recipients receive, failed replies,
 * duplicate copies and SQS redeliveries, held (unknown) replies, late replies, inactivity
 * timeouts, custom JSONata aggregation, snapshots, control commands, self-starting definitions,
 * and the sweeper standing in for a lost timer. Each asserts the behaviour docs/definitions.md and
 * docs/wire-contract.md state, as the production handlers produce it.
 */

const banks = (n: number) => ({
  type: 'recipient-list' as const,
  recipients: Array.from({ length: n }, (_, i) => `bank-${i + 1}`),
});

describe('kit: durations', () => {
  it('reads ms, s, m, h, d and their sums; refuses anything else', () => {
    expect(durationMs('500ms')).toBe(500);
    expect(durationMs('3s')).toBe(3000);
    expect(durationMs('1m30s')).toBe(90_000);
    expect(durationMs('2h')).toBe(7_200_000);
    expect(durationMs('1d')).toBe(86_400_000);
    expect(durationMs(42)).toBe(42);
    expect(() => durationMs('3 weeks')).toThrow(/not a number of ms, s, m, h or d/);
    expect(() => durationMs('3sx')).toThrow(/not a number/);
    expect(() => durationMs(-1)).toThrow(/>= 0/);
  });
});

describe('kit: requests and what the recipients receive', () => {
  it('a recipient list sends each recipient the payload with the fanin attributes a responder copies', async () => {
    const run = simulate({
      name: 'ask',
      fanOut: banks(2),
      completion: { strategy: 'all' },
      timeoutSeconds: 30,
    });
    await run.request({ aggregateId: 'r-1', requestId: 'req-1', payload: { amount: 5 } });
    const sent = run.subRequests();
    expect(sent.map((s) => [s.recipient, s.replyId, s.body])).toEqual([
      ['bank-1', '0', { amount: 5 }],
      ['bank-2', '1', { amount: 5 }],
    ]);
    expect(sent[0]?.attributes).toMatchObject({
      'fanin-aggregate-id': 'r-1',
      'fanin-reply-id': '0',
      'fanin-definition': 'ask',
      'fanin-request-id': 'req-1',
    });
    expect(sent[0]?.attributes['fanin-reply-to']).toMatch(/kit-reply-\d$/);
    expect(run.subRequests('bank-2')).toHaveLength(1);
  });

  it('a splitter sends one sub-request per item, labelled; a reply by reply id answers it', async () => {
    const run = simulate({
      name: 'inventory',
      fanOut: { type: 'splitter', itemsPath: '$.items', target: 'warehouse', labelPath: '$.sku' },
      completion: { strategy: 'all' },
      timeoutSeconds: 30,
      onTimeout: 'discard',
    });
    await run.request({ aggregateId: 'inv-1', items: [{ sku: 'A' }, { sku: 'B' }, { sku: 'C' }] });
    expect(run.subRequests('warehouse').map((s) => s.body)).toEqual([
      { sku: 'A' },
      { sku: 'B' },
      { sku: 'C' },
    ]);
    await run.reply({ replyId: '0' }, { stock: 1 });
    await run.reply(run.subRequests('warehouse')[2] as never, { stock: 3 });
    await run.advance('30s');
    expect(run.result()).toMatchObject({
      outcome: 'timed-out',
      result: null,
      discarded: true,
      missing: [{ replyId: '1', label: 'B' }],
    });
  });

  it('a request that names no aggregate gets the id fanin chooses, which reply and result then default to', async () => {
    const run = simulate({ name: 'anon', completion: { strategy: 'all' }, timeoutSeconds: 30 });
    await run.request({ requestId: 'r-9', expected: 1 });
    expect(run.lastAggregateId()).toMatch(/^anon-/);
    await run.reply({ replyId: '0' }, { ok: true });
    expect(run.result()).toMatchObject({ aggregateId: run.lastAggregateId(), outcome: 'completed' });
  });

  it("a request's own parameters set its deadline; one out of bounds goes to the error output and opens nothing", async () => {
    const run = simulate({
      name: 'sized',
      completion: { strategy: 'count', count: 3 },
      timeoutSeconds: 600,
      requestParameters: { count: { min: 1, max: 5 }, timeoutSeconds: { min: 10, max: 120 } },
    });
    await run.request({ aggregateId: 's-1', expected: 10, parameters: { count: 2, timeoutSeconds: 60 } });
    await run.advance('60s');
    expect(run.result('s-1')).toMatchObject({ outcome: 'timed-out', closedAt: DEFAULT_START + 60_000 });
    await run.request({ aggregateId: 's-2', expected: 10, parameters: { count: 9 } });
    expect(run.outputs('error').at(-1)).toMatchObject({ type: 'fanin.error' });
    expect(JSON.stringify(run.outputs('error').at(-1))).toContain('parameters.count is 9');
  });
});

describe('kit: failures, duplicates, redeliveries', () => {
  const tolerant = {
    name: 'survey',
    fanOut: banks(4),
    completion: { strategy: 'all' as const },
    toleratedFailureCount: 1,
    timeoutSeconds: 300,
  };

  it('a tolerated failure is listed beside the result; one beyond the tolerance fails the aggregate at once', async () => {
    const run = simulate(tolerant);
    await run.request({ aggregateId: 'sv-1', payload: {} });
    await run.fail('bank-2', 'credit check unavailable', { code: 'DOWN' });
    expect(run.result()).toBeUndefined();
    await run.advance('1s');
    await run.fail('bank-3', 'refused');
    expect(run.result()).toMatchObject({
      type: 'fanin.aggregate.failed',
      outcome: 'failed',
      completedBy: 'failures',
      closedAt: DEFAULT_START + 1000,
      counts: { expected: 4, received: 2, failed: 2 },
      failures: [
        { replyId: '1', error: 'credit check unavailable', body: { code: 'DOWN' } },
        { replyId: '2', error: 'refused', body: null },
      ],
    });
  });

  it('two copies of one reply count once, both handled (observed below the dedup: two reply messages, one member)', async () => {
    const run = simulate({ ...tolerant, completion: { strategy: 'count', count: 2 } });
    await run.request({ aggregateId: 'd-1', payload: {} });
    const before = run.records.reply;
    await run.reply('bank-1', { v: 1 }, { copies: 2 });
    expect(run.records.reply - before).toBe(2);
    expect(run.models.sqs.messages(run.config.replyQueueUrls[0] as string)).toHaveLength(0);
    expect(run.result()).toBeUndefined();
    await run.reply('bank-2', { v: 2 });
    expect(run.result()).toMatchObject({ counts: { received: 2 } });
  });

  it('an action returns once every queue fanin consumes is still: twelve copies, more than a batch, all handled', async () => {
    const run = simulate({ ...tolerant, completion: { strategy: 'count', count: 2 } });
    await run.request({ aggregateId: 'd-2', payload: {} });
    const before = run.records.reply;
    await run.reply('bank-1', { v: 1 }, { copies: 12 });
    expect(run.records.reply - before).toBe(12);
    expect(run.models.sqs.messages(run.config.replyQueueUrls[0] as string)).toHaveLength(0);
  });

  it('an SQS redelivery (a lost delete) comes back after the visibility timeout and is recognised', async () => {
    const run = simulate({ ...tolerant, completion: { strategy: 'count', count: 2 } });
    await run.request({ aggregateId: 'rd-1', payload: {} });
    await run.reply('bank-1', { v: 1 }, { redeliveries: 1 });
    const handled = run.records.reply;
    const visibility = run.topology.replyPartitions[0]?.visibilityTimeoutSeconds ?? 0;
    expect(visibility).toBeGreaterThan(0);
    await run.advance(visibility * 1000 - 1);
    expect(run.records.reply).toBe(handled);
    await run.advance(1);
    expect(run.records.reply).toBe(handled + 1);
    expect(run.result()).toBeUndefined();
    await run.reply('bank-2', { v: 2 });
    expect(run.result()).toMatchObject({ counts: { received: 2 } });
  });
});

describe('kit: held, unknown and late replies', () => {
  const def = {
    name: 'held',
    completion: { strategy: 'all' as const },
    timeoutSeconds: 30,
    unknownTimeoutSeconds: 10,
  };

  it('a reply before its request is held and counts when the request opens the aggregate', async () => {
    const run = simulate(def);
    await run.reply({ aggregateId: 'h-1', replyId: '0', definition: 'held' }, { early: true });
    expect(run.outputs('unknown')).toEqual([]);
    await run.advance('5s');
    await run.request({ aggregateId: 'h-1', expected: 2 });
    await run.reply({ replyId: '1' }, { early: false });
    expect(run.result()).toMatchObject({
      outcome: 'completed',
      completedBy: 'all-arrived',
      result: [
        { replyId: '0', body: { early: true } },
        { replyId: '1', body: { early: false } },
      ],
    });
  });

  it('a reply whose aggregate never opens goes to the unknown output after the unknown timeout', async () => {
    const run = simulate(def);
    await run.reply({ aggregateId: 'nobody', replyId: '0', definition: 'held' }, { x: 1 });
    await run.advance(9_999);
    expect(run.outputs('unknown')).toEqual([]);
    await run.advance(1);
    expect(run.outputs('unknown')).toMatchObject([
      { type: 'fanin.reply.unknown', aggregateId: 'nobody', replyId: '0' },
    ]);
  });

  it('a reply after the deadline is late, and latePolicy discard drops it', async () => {
    const run = simulate({ ...def, latePolicy: 'route' });
    await run.request({ aggregateId: 'l-1', expected: 2 });
    await run.advance('31s');
    await run.reply({ replyId: '0' }, { v: 0 });
    expect(run.outputs('late')).toMatchObject([
      { type: 'fanin.reply.late', aggregateId: 'l-1', replyId: '0' },
    ]);
    const quiet = simulate({ ...def, latePolicy: 'discard' });
    await quiet.request({ aggregateId: 'l-2', expected: 2 });
    await quiet.advance('31s');
    await quiet.reply({ replyId: '0' }, { v: 0 });
    expect(quiet.outputs('late')).toEqual([]);
  });
});

describe('kit: inactivity, custom aggregation, snapshots', () => {
  it('an inactivity timeout moves with each reply and ends the aggregate once replies stop', async () => {
    const run = simulate({
      name: 'survey',
      fanOut: banks(3),
      completion: { strategy: 'all' },
      inactivityTimeoutSeconds: 60,
      timeoutSeconds: 900,
    });
    await run.request({ aggregateId: 'i-1', payload: {} });
    await run.advance('50s');
    await run.reply('bank-1', { v: 1 });
    await run.advance('50s');
    await run.reply('bank-2', { v: 2 });
    await run.advance('59s');
    expect(run.result()).toBeUndefined();
    await run.advance('2s');
    expect(run.result()).toMatchObject({
      outcome: 'timed-out',
      completedBy: 'deadline',
      closedAt: DEFAULT_START + 160_000,
      missing: [{ replyId: '2', label: 'bank-3' }],
    });
  });

  it('a custom JSONata aggregation builds the result from the replies and the request', async () => {
    const run = simulate({
      name: 'total',
      fanOut: banks(3),
      completion: { strategy: 'all' },
      aggregation: {
        algorithm: 'custom',
        expression: '{ "total": $sum(replies.amount), "for": request.body.payload.who }',
      },
      timeoutSeconds: 30,
    });
    await run.request({ aggregateId: 'cu-1', payload: { who: 'ada' } });
    for (const [bank, amount] of [
      ['bank-1', 1],
      ['bank-2', 20],
      ['bank-3', 300],
    ] as const)
      await run.reply(bank, { amount });
    expect(run.result()).toMatchObject({ result: { total: 321, for: 'ada' } });
  });

  it('a custom expression that fails ends the aggregate failed with the reason', async () => {
    const run = simulate({
      name: 'broken',
      fanOut: banks(1),
      completion: { strategy: 'all' },
      aggregation: { algorithm: 'custom', expression: '$error("no way")' },
      timeoutSeconds: 30,
    });
    await run.request({ aggregateId: 'cf-1', payload: {} });
    await run.reply('bank-1', {});
    expect(run.result()).toMatchObject({ outcome: 'failed' });
    expect(String(run.result()?.reason)).toContain('no way');
  });

  it('snapshots go to the status output every interval while the aggregate is open', async () => {
    const run = simulate({
      name: 'approvals',
      fanOut: banks(2),
      completion: { strategy: 'external' },
      timeoutSeconds: 3600,
      snapshotIntervalSeconds: 60,
    });
    await run.request({ aggregateId: 'sn-1', payload: {} });
    await run.advance('30s');
    await run.reply('bank-1', { approved: 'alice' });
    await run.advance('3m');
    const snapshots = run.outputs('status').filter((o) => o.type === 'fanin.aggregate.snapshot');
    expect(snapshots.map((s) => s.period)).toEqual([1, 2, 3]);
    expect(snapshots[0]).toMatchObject({
      id: 'sn-1/snapshot/1',
      asOf: DEFAULT_START + 60_000,
      counts: { expected: 2, received: 1 },
      result: [{ replyId: '0', body: { approved: 'alice' } }],
    });
  });
});

describe('kit: control commands and self-starting definitions', () => {
  const def = {
    name: 'market',
    fanOut: banks(2),
    completion: { strategy: 'all' as const },
    timeoutSeconds: 600,
  };

  it('complete completes an open aggregate with what it has (completedBy external); purge ends one purged', async () => {
    const run = simulate(def);
    await run.request({ aggregateId: 'm-1', payload: {} });
    await run.request({ aggregateId: 'm-2', payload: {} });
    await run.reply('bank-1', { v: 1 }, { aggregateId: 'm-1' });
    await run.control({ command: 'complete', aggregateId: 'm-1' });
    expect(run.result('m-1')).toMatchObject({
      outcome: 'completed',
      completedBy: 'external',
      counts: { received: 1 },
    });
    await run.control({ command: 'purge', aggregateId: 'm-2' });
    expect(run.result('m-2')).toMatchObject({ type: 'fanin.aggregate.purged', completedBy: 'purge' });
    expect(run.outputs('status').filter((o) => o.type === 'fanin.control.result')).toHaveLength(2);
  });

  it('set-parameters applies to aggregates opened afterwards', async () => {
    const run = simulate(def);
    await run.request({ aggregateId: 'sp-1', payload: {} });
    await run.control({
      command: 'set-parameters',
      definition: 'market',
      parameters: { timeoutSeconds: 30 },
    });
    await run.request({ aggregateId: 'sp-2', payload: {} });
    await run.advance('30s');
    expect(run.result('sp-2')).toMatchObject({ outcome: 'timed-out', closedAt: DEFAULT_START + 30_000 });
    expect(run.result('sp-1')).toBeUndefined();
    await run.advance('570s');
    expect(run.result('sp-1')).toMatchObject({ outcome: 'timed-out', closedAt: DEFAULT_START + 600_000 });
  });

  it('a self-starting auction opens with its first bid; the highest bid wins at the close; a bid after it is late', async () => {
    const run = simulate({
      name: 'auction',
      mode: 'self-starting',
      correlation: { source: 'path', path: '$.auctionId' },
      replyId: { source: 'path', path: '$.bidId' },
      completion: { strategy: 'timeout' },
      aggregation: { algorithm: 'best', criteria: [{ path: '$.price', order: 'max' }] },
      timeoutSeconds: 6,
    });
    const bid = (bidId: string, price: number) =>
      run.send({ auctionId: 'lot-7', bidId, price }, { 'fanin-definition': 'auction' });
    await bid('b1', 10);
    await run.advance('2s');
    await bid('b2', 30);
    await bid('b2', 30);
    await bid('b3', 20);
    await run.advance('4s');
    expect(run.result('auction:lot-7')).toMatchObject({
      outcome: 'completed',
      completedBy: 'deadline',
      counts: { received: 3 },
      result: { replyId: 'b2', body: { price: 30 } },
      closedAt: DEFAULT_START + 6000,
    });
    await bid('b4', 99);
    expect(run.outputs('late')).toMatchObject([{ aggregateId: 'auction:lot-7', replyId: 'b4' }]);
  });
});

describe('kit: the sweeper stands in for a lost timer, on the minute', () => {
  it('with its timer message gone, the aggregate still times out at the first sweep after the deadline', async () => {
    const run = simulate({
      name: 'lost',
      fanOut: banks(2),
      completion: { strategy: 'all' },
      timeoutSeconds: 30,
    });
    await run.request({ aggregateId: 'lost-1', payload: {} });
    run.models.sqs.handle('PurgeQueueCommand', { QueueUrl: run.config.queueUrls.timer });
    expect(run.models.sqs.messages(run.config.queueUrls.timer)).toHaveLength(0);
    await run.advance('59s');
    expect(run.result()).toBeUndefined();
    expect(run.invocations.sweeper).toBe(0);
    await run.advance('1s');
    expect(run.sweeps).toEqual([DEFAULT_START + 60_000]);
    expect(run.result()).toMatchObject({ outcome: 'timed-out', completedBy: 'deadline' });
  });
});

describe('kit: the clock never moves back', () => {
  it('an item found overdue after the clock passed its minute is swept at the next minute from now, not in the past', async () => {
    const run = simulate({
      name: 'late-due',
      fanOut: banks(1),
      completion: { strategy: 'all' },
      timeoutSeconds: 300,
    });
    await run.request({ aggregateId: 'ld-1', payload: {} });
    run.models.sqs.handle('PurgeQueueCommand', { QueueUrl: run.config.queueUrls.timer });
    await run.advance('90s');
    // the due entry moved into the past (as a header whose timer was lost long ago would be)
    run.models.dynamodb.handle('UpdateCommand', {
      TableName: run.config.tableName,
      Key: { pk: 'A#ld-1', sk: 'H' },
      UpdateExpression: 'SET dueAt = :t',
      ExpressionAttributeValues: { ':t': DEFAULT_START + 30_000 },
    });
    await run.advance('60s');
    // The sweep at 60 s armed what entered the horizon; the overdue item waits for the one at 120 s.
    expect(run.sweeps).toEqual([DEFAULT_START + 60_000, DEFAULT_START + 120_000]);
    expect(run.now()).toBe(DEFAULT_START + 150_000);
    for (const log of run.logs) expect(log.at).toBeGreaterThanOrEqual(DEFAULT_START + 90_000);
    expect(run.received().every((p) => p.at >= DEFAULT_START + 90_000)).toBe(true);
  });
});

describe('kit: outputs stay readable', () => {
  it("a result is still there after SQS's 14-day retention has passed", async () => {
    const run = simulate({
      name: 'kept',
      fanOut: banks(1),
      completion: { strategy: 'all' },
      timeoutSeconds: 30,
    });
    await run.request({ aggregateId: 'k-1', payload: {} });
    await run.reply('bank-1', { v: 1 });
    await run.advance('15d');
    expect(run.models.sqs.messages(run.config.queueUrls.completed)).toHaveLength(0);
    expect(run.result()).toMatchObject({ outcome: 'completed', aggregateId: 'k-1' });
  });
});

describe('kit: determinism', () => {
  it('two runs of one script publish the same outputs, byte for byte', async () => {
    const script = async () => {
      const run = simulate({
        name: 'det',
        fanOut: banks(3),
        completion: { strategy: 'count', count: 2 },
        timeoutSeconds: 9,
      });
      await run.request({ aggregateId: 'x', payload: {} });
      await run.reply('bank-2', { v: 2 }, { copies: 2 });
      await run.advance('10s');
      await run.reply('bank-1', { v: 1 });
      return JSON.stringify(run.received());
    };
    expect(await script()).toBe(await script());
  });
});

describe('kit: deployment options as the construct takes them', () => {
  it('FIFO reply partitions: the sub-requests name a FIFO partition, and replies sent there complete the aggregate', async () => {
    const run = simulate(
      { name: 'ordered', fanOut: banks(2), completion: { strategy: 'all' }, timeoutSeconds: 30 },
      { topology: { fifoReplies: true, replyPartitions: 1 } },
    );
    await run.request({ aggregateId: 'fifo-1', payload: {} });
    expect(run.subRequests()[0]?.attributes['fanin-reply-to']).toMatch(/\.fifo$/);
    await run.reply('bank-1', { v: 1 });
    await run.reply('bank-2', { v: 2 });
    expect(run.result()).toMatchObject({ outcome: 'completed', counts: { received: 2 } });
  });

  it('outputs.eventBridge: the result is also put on the bus (channel events)', async () => {
    const run = simulate({
      name: 'bus',
      fanOut: banks(1),
      completion: { strategy: 'all' },
      timeoutSeconds: 30,
      outputs: { eventBridge: true },
    });
    await run.request({ aggregateId: 'bus-1', payload: {} });
    await run.reply('bank-1', { v: 1 });
    expect(run.outputs('events')).toMatchObject([{ id: 'bus-1/result', outcome: 'completed' }]);
  });

  it('a payload over the claim-check threshold goes through the bucket; the recipient reads it whole', async () => {
    const run = simulate(
      { name: 'big', fanOut: banks(1), completion: { strategy: 'all' }, timeoutSeconds: 30 },
      { claimCheckThresholdBytes: 1024 },
    );
    const blob = 'x'.repeat(4000);
    await run.request({ aggregateId: 'big-1', payload: { blob } });
    expect(run.subRequests()[0]?.body).toEqual({ blob });
    expect(run.subRequests()[0]?.attributes.ExtendedPayloadSize).toBeDefined();
    await run.reply('bank-1', { echo: blob });
    expect(run.result()).toMatchObject({
      outcome: 'completed',
      result: [{ replyId: '0', body: { echo: blob } }],
    });
  });
});
