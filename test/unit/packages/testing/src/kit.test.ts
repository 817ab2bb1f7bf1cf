import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { fromConfig, raw, simulate } from '../../../../../packages/testing/src/index.ts';

/**
 * Where the kit once parted from `npm start` on the same timeline: a reply naming another
 * definition, queues that do not exist, a splitter's several sub-requests to one recipient,
 * timers beyond SQS's delay horizon, a regex the worker runs under plain node, a configuration
 * imported by the test runner, and a body that is not JSON. Each test states what the runtime
 * does and checks the kit does the same.
 */

const KIT = fileURLToPath(new URL('../../../../../packages/testing/src/index.ts', import.meta.url));

describe('kit: a reply naming a definition', () => {
  it("a reply whose definition is not its aggregate's goes to the error output and is not a member", async () => {
    const run = simulate([
      {
        name: 'all3',
        fanOut: { type: 'recipient-list', recipients: ['r1', 'r2', 'r3'] },
        completion: { strategy: 'all' },
        timeoutSeconds: 30,
      },
      { name: 'cnt', completion: { strategy: 'count', count: 1 }, timeoutSeconds: 30 },
    ]);
    await run.request({ definition: 'all3', aggregateId: 'A3' });
    await run.reply({ aggregateId: 'A3', replyId: '0', definition: 'cnt' }, { v: 1 });
    expect(run.outputs('error')).toMatchObject([
      { reason: expect.stringMatching(/names definition "cnt" but aggregate "A3" is of definition "all3"/) },
    ]);
    await run.reply('r1', { v: 1 });
    await run.reply('r2', { v: 2 });
    await run.reply('r3', { v: 3 });
    expect(run.result('A3')).toMatchObject({ outcome: 'completed', counts: { received: 3 } });
  });
});

describe('kit: recipient queues exist as the deployment provisions them', () => {
  const ask = (recipients: string[]) => ({
    name: 'ask',
    fanOut: { type: 'recipient-list' as const, recipients },
    completion: { strategy: 'all' as const },
    timeoutSeconds: 30,
  });

  it('a definition listing a queue that does not exist ends its aggregate failed at once, nothing sent, the request on the error output', async () => {
    const run = simulate(ask(['bank-1', 'bank-9']), { responderQueues: ['bank-1'] });
    await run.request({ aggregateId: 'q-1' });
    expect(run.result('q-1')).toMatchObject({
      outcome: 'failed',
      completedBy: 'failures',
      reason: expect.stringContaining('queue bank-9'),
      missing: [
        { label: 'bank-1', asked: false },
        { label: 'bank-9', asked: false },
      ],
    });
    expect(run.outputs('error').map((o) => o.id)).toEqual([
      'q-1/result',
      expect.stringMatching(/^error\/ingress\//),
    ]);
    expect(run.subRequests()).toEqual([]);
  });

  it('a request naming an unknown queue is refused; one the test created is asked', async () => {
    const run = simulate({ ...ask([]), fanOut: { type: 'recipient-list' } });
    await run.request({ aggregateId: 'q-2', recipients: ['ghost'] });
    // Refused before it opens: the error output has the request, and no result of q-2.
    expect(run.outputs('error')).toMatchObject([{ reason: expect.stringContaining('ghost') }]);
    expect(run.outputs().filter((o) => o.aggregateId === 'q-2')).toEqual([]);
    expect(run.queueExists('ghost')).toBe(false);
    run.createQueue('ghost');
    await run.request({ aggregateId: 'q-3', recipients: ['ghost'] });
    expect(run.subRequests('ghost').map((s) => s.aggregateId)).toEqual(['q-3']);
  });

  it('a queue deleted after the opening: the request delivered again ends its aggregate failed by failures', async () => {
    const run = simulate(ask(['bank-1', 'bank-2']));
    await run.request({ aggregateId: 'q-4', requestId: 'req-4' });
    expect(run.subRequests().map((s) => s.recipient)).toEqual(['bank-1', 'bank-2']);
    run.deleteQueue('bank-2');
    expect(run.subRequests().map((s) => s.recipient)).toEqual(['bank-1']);
    await run.request({ aggregateId: 'q-4', requestId: 'req-4' });
    expect(run.result('q-4')).toMatchObject({ outcome: 'failed', completedBy: 'failures' });
    expect(run.outputs('error').at(-1)).toMatchObject({ reason: expect.stringContaining('bank-2') });
  });
});

describe('kit: a recipient asked several times', () => {
  const inventory = {
    name: 'inventory',
    fanOut: { type: 'splitter' as const, itemsPath: '$.items', target: 'warehouse' },
    completion: { strategy: 'all' as const },
    timeoutSeconds: 30,
  };

  it('a recipient name answers its oldest unanswered sub-request, one per call, then refuses', async () => {
    const run = simulate(inventory);
    await run.request({ aggregateId: 'o-1', items: ['a', 'b', 'c'] });
    await run.reply('warehouse', { n: 1 });
    await run.reply('warehouse', { n: 2 });
    expect(run.result()).toBeUndefined();
    await run.reply('warehouse', { n: 3 });
    expect(run.result()).toMatchObject({
      outcome: 'completed',
      counts: { expected: 3, received: 3 },
      result: [
        { replyId: '0', body: { n: 1 } },
        { replyId: '1', body: { n: 2 } },
        { replyId: '2', body: { n: 3 } },
      ],
    });
    await expect(run.reply('warehouse', { n: 4 })).rejects.toThrow(/has been answered.*replyId: '2'/);
  });

  it('the reply-id form still answers a given sub-request, and a name then skips it', async () => {
    const run = simulate(inventory);
    await run.request({ aggregateId: 'o-2', items: ['a', 'b'] });
    await run.reply({ aggregateId: 'o-2', replyId: '0' }, { n: 'first' });
    await run.reply('warehouse', { n: 'second' });
    expect(run.result()).toMatchObject({
      outcome: 'completed',
      result: [
        { replyId: '0', body: { n: 'first' } },
        { replyId: '1', body: { n: 'second' } },
      ],
    });
  });
});

describe('kit: timers beyond the delay horizon', () => {
  it('a deadline an hour away fires within 2 s of it: the sweep arms it as it enters the horizon', async () => {
    const run = simulate({ name: 'slow', completion: { strategy: 'all' }, timeoutSeconds: 3600 });
    await run.advance('30s');
    await run.request({ aggregateId: 's-1', expected: 1 });
    await run.advance('3599s');
    expect(run.result()).toBeUndefined();
    await run.advance('2s');
    expect(run.received('timed-out')).toMatchObject([{ body: { aggregateId: 's-1' } }]);
    const closed = (run.received('timed-out')[0]?.at ?? 0) - (run.now() - run.elapsed());
    expect(closed).toBeGreaterThanOrEqual(3630_000);
    expect(closed).toBeLessThanOrEqual(3632_000);
    // Not a sweep a minute for an hour: the one arming it, and none before it entered the horizon.
    expect(run.sweeps.length).toBeLessThanOrEqual(3);
    expect(run.sweeps[0]).toBeGreaterThanOrEqual(run.now() - run.elapsed() + (3630 - 900) * 1000);
  });

  it('a 940 s unknown-reply timeout and a 930 s snapshot interval fire within 2 s of their time', async () => {
    const run = simulate({
      name: 'held',
      completion: { strategy: 'all' },
      timeoutSeconds: 3000,
      unknownTimeoutSeconds: 940,
      snapshotIntervalSeconds: 930,
    });
    const t0 = run.now();
    await run.reply({ aggregateId: 'h-0', replyId: '0', definition: 'held' }, { early: true });
    await run.request({ aggregateId: 'h-1', expected: 2 });
    await run.advance('1000s');
    const unknown = run.received('unknown');
    expect(unknown).toHaveLength(1);
    expect((unknown[0]?.at ?? 0) - t0).toBeGreaterThanOrEqual(940_000);
    expect((unknown[0]?.at ?? 0) - t0).toBeLessThanOrEqual(942_000);
    const status = run.received('status');
    expect(status).toHaveLength(1);
    expect((status[0]?.at ?? 0) - t0).toBeGreaterThanOrEqual(930_000);
    expect((status[0]?.at ?? 0) - t0).toBeLessThanOrEqual(932_000);
  });
});

describe('kit: bodies that are not JSON', () => {
  it('a raw reply body is sent as its text: fanin sends it to the error output', async () => {
    const run = simulate({
      name: 'ask',
      fanOut: { type: 'recipient-list', recipients: ['bank-1'] },
      completion: { strategy: 'all' },
      timeoutSeconds: 30,
    });
    await run.request({ aggregateId: 'j-1' });
    await run.reply('bank-1', raw('{"rate": 3.'));
    expect(run.outputs('error')).toMatchObject([
      { reason: expect.stringContaining('body is not valid JSON') },
    ]);
    await run.send(raw('not json'), {
      'fanin-aggregate-id': 'j-1',
      'fanin-reply-id': '0',
      'fanin-definition': 'ask',
    });
    expect(run.outputs('error')).toHaveLength(2);
    expect(run.result()).toBeUndefined();
  });
});

describe('kit: a configuration the test runner imported', () => {
  it('fromConfig takes the imported configuration (vitest loads the .ts), its responder queues the ones that exist', async () => {
    const module = await import('../../../../../fanin.config.ts');
    const configs = await fromConfig(module.default, 'fanin.config.ts');
    expect(configs).toMatchObject({ file: 'fanin.config.ts', prefix: 'fanin' });
    expect(configs.names).toContain('loan-broker');
    const run = configs.simulate('loan-broker');
    for (const n of [1, 2, 3, 4, 5]) expect(run.queueExists(`fanin-bank-${n}`)).toBe(true);
    expect(run.queueExists('fanin-bank-6')).toBe(false);
    await run.request({ aggregateId: 'loan-1', payload: { amount: 100 } });
    expect(run.subRequests()).toHaveLength(5);
    // The module's namespace is taken as well as its default export.
    expect((await fromConfig(module)).names).toEqual(configs.names);
  });

  it('fromConfig gives the simulation every topology option the file sets, not only a few, and the caller may override them', async () => {
    const config = {
      prefix: 'shop',
      replyPartitions: 2,
      replyBatchingWindowSeconds: 1,
      replyBatchSize: [25, 40],
      replyConcurrency: 3,
      definitions: [{ name: 'quotes', completion: { strategy: 'all' } }],
    };
    const run = (await fromConfig(config, 'mine')).simulate('quotes');
    expect(run.topology.replyPartitions.map((p) => p.name)).toEqual(['shop-reply-0', 'shop-reply-1']);
    expect(run.topology.replyConsumers.map((c) => [c.batchSize, c.maxConcurrency])).toEqual([
      [25, 3],
      [40, 3],
    ]);
    const overridden = (await fromConfig(config, 'mine')).simulate('quotes', {
      topology: { replyBatchSize: 5 },
    });
    expect(overridden.topology.replyConsumers.map((c) => c.batchSize)).toEqual([5, 5]);
  });

  it('a configuration that is not one is refused, naming the field', async () => {
    await expect(fromConfig({ definitions: [], replyPartitions: 0 }, 'mine')).rejects.toThrow(
      /mine: replyPartitions/,
    );
  });
});

describe('kit: outside vitest', () => {
  it('a predicate with a flagged regex (the regex worker) completes under plain node, and the process exits', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'kit-node-'));
    try {
      const script = join(dir, 'regex.mjs');
      await writeFile(
        script,
        `import { simulate } from ${JSON.stringify(KIT)};
const run = simulate({
  name: 'yes',
  fanOut: { type: 'recipient-list', recipients: ['a', 'b'] },
  completion: { strategy: 'predicate', expression: '$count(replies[$contains(s, /^yes$/i)]) > 0' },
  timeoutSeconds: 30,
});
await run.request({ aggregateId: 'y-1' });
await run.reply('a', { s: 'YES' });
console.log(JSON.stringify(run.result()));
`,
      );
      // tsx only loads the kit's TypeScript sources; the event loop is plain node's.
      const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', script], {
        cwd: fileURLToPath(new URL('../../../../../', import.meta.url)),
        timeout: 50_000,
      });
      expect(JSON.parse(stdout)).toMatchObject({ outcome: 'completed', completedBy: 'predicate' });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('kit: cancellation notices', () => {
  it('shows the notices an early completion sent apart from the sub-requests, on the queues of the recipients that did not reply', async () => {
    const run = simulate([
      {
        name: 'quotes',
        fanOut: { type: 'recipient-list', recipients: ['r1', 'r2', 'r3'] },
        completion: { strategy: 'first' },
        timeoutSeconds: 30,
        cancelOutstanding: true,
      },
    ]);
    await run.request({ definition: 'quotes', aggregateId: 'Q1' });
    await run.reply('r2', { rate: 3 });
    expect(run.result('Q1')).toMatchObject({ outcome: 'completed', completedBy: 'first' });
    expect(run.cancellations().map((c) => [c.recipient, c.replyId, c.attributes['fanin-cancelled']])).toEqual(
      [
        ['r1', '0', 'completed'],
        ['r3', '2', 'completed'],
      ],
    );
    expect(run.cancellations('r1', 'Q1')[0]?.attributes['fanin-completed-by']).toBe('first');
    expect(run.cancellations('r2')).toEqual([]);
    // the sub-requests are the three fanin sent, notices apart
    expect(run.subRequests().map((s) => s.recipient)).toEqual(['r1', 'r2', 'r3']);
  });

  it('shows none for a definition without the option', async () => {
    const run = simulate([
      {
        name: 'quotes',
        fanOut: { type: 'recipient-list', recipients: ['r1', 'r2'] },
        completion: { strategy: 'first' },
        timeoutSeconds: 30,
      },
    ]);
    await run.request({ definition: 'quotes', aggregateId: 'Q2' });
    await run.reply('r1', { rate: 3 });
    expect(run.result('Q2')).toMatchObject({ outcome: 'completed' });
    expect(run.cancellations()).toEqual([]);
  });
});
