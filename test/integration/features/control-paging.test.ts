import type { SQSEvent } from 'aws-lambda';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { makeControlHandler } from '../../../functions/handlers.ts';
import { QueuePoller } from '../../../local/poller.ts';
import { listActivePage } from '../../../local/views.ts';
import { createSqsClient } from '../../../shared/aws/clients.ts';
import { AggregateStatus } from '../../../shared/engine/constants.ts';
import type { AggregateHeader } from '../../../shared/ports.ts';
import { FaninUnderTest, takeAll } from '../../support/fanin.ts';

/**
 * `complete`/`purge` of every aggregate of a definition, and `list`, work a page of the `due`
 * index at a time: a control invocation's calls are bounded by the page size, not by how many
 * aggregates are open, and a whole definition is completed by a chain of continuations sent to
 * the control queue. Under at-least-once delivery (a duplicated continuation, a crash after a
 * page's completions before or after its continuation is sent) every aggregate is completed
 * exactly once and every chain ends.
 */

const PAGE = 25;
/** Aggregates of the definition a command completes, and of another one interleaved in the index. */
const ALPHA = 300;
const BETA = 40;

describe('control commands page through the due index', () => {
  let fanin: FaninUnderTest;
  const sqs = createSqsClient();
  let poller: QueuePoller;
  /** Calls the system made in each control invocation, in order. */
  let perInvocation: number[] = [];
  let opened = 0;
  /** The time each invocation has left, as Lambda's context tells it: a fresh clock per invocation. */
  let remainingMs: (() => () => number) | undefined;

  beforeAll(async () => {
    fanin = await FaninUnderTest.start(
      [
        { name: 'alpha', fanOut: { type: 'none' }, completion: { strategy: 'all' }, timeoutSeconds: 3600 },
        { name: 'beta', fanOut: { type: 'none' }, completion: { strategy: 'all' }, timeoutSeconds: 3600 },
      ],
      { overrides: { controlPageSize: PAGE, controlPagesPerInvocation: 1 } },
    );
    const handler = makeControlHandler(() => fanin.ctx);
    poller = new QueuePoller({
      sqs,
      queueUrl: fanin.provisioned.queueUrls.control,
      // One Lambda invocation per record, as the control queue's event source runs it (batch 1).
      handler: async (event: SQSEvent) => {
        const before = fanin.probe.now;
        try {
          const remaining = remainingMs?.();
          return await handler(event, remaining ? { getRemainingTimeInMillis: remaining } : undefined);
        } finally {
          perInvocation.push(fanin.probe.callsAfter(before).length);
        }
      },
      batchSize: 1,
      failedVisibilitySeconds: 0,
    });
  });
  afterAll(async () => {
    sqs.destroy();
    await fanin?.stop();
  });
  beforeEach(() => {
    perInvocation = [];
    remainingMs = undefined;
  });

  /** Opens aggregates directly in the state store (as a fan-out's first write does), `at` the test clock. */
  async function open(definition: string, count: number, at = fanin.clock.now): Promise<string[]> {
    const ids = Array.from({ length: count }, () => `${definition}-${String(opened++).padStart(5, '0')}`);
    for (let i = 0; i < ids.length; i += 16) {
      await Promise.all(
        ids.slice(i, i + 16).map((aggregateId, k) => {
          const header: AggregateHeader = {
            aggregateId,
            definition,
            status: AggregateStatus.OPEN,
            expected: 2,
            received: 0,
            lateCount: 0,
            openedAt: at,
            params: { timeoutSeconds: 3600 },
            requestId: aggregateId,
            // Spread over the index: deadlines a second apart, in no order of the ids.
            deadline: at + 3_600_000 + (((i + k) * 7919) % 1000) * 1000,
            closeBy: at + 86_400_000,
          };
          return fanin.ctx.store.openAggregate(header);
        }),
      );
    }
    return ids;
  }

  /** Runs the control consumer until its queue stays empty; returns how many invocations ran. */
  async function runControl(): Promise<number> {
    let invocations = 0;
    for (let idle = 0; idle < 2; ) {
      const taken = await poller.pollOnce(0);
      invocations += taken;
      idle = taken === 0 ? idle + 1 : 0;
      if (invocations > 300)
        throw new Error('the control queue never emptied: a chain of parts that does not end');
    }
    return invocations;
  }

  /** Terminal publications (below SQS deduplication) of each aggregate, by type. */
  function terminals(ids: readonly string[]): Map<string, string[]> {
    return new Map(
      ids.map((id) => [
        id,
        fanin
          .publications(id)
          .filter(
            (p) => p.body.type === 'fanin.aggregate.completed' || p.body.type === 'fanin.aggregate.purged',
          )
          .map((p) => String(p.body.type)),
      ]),
    );
  }

  async function statuses(ids: readonly string[]): Promise<string[]> {
    return Promise.all(ids.map(async (id) => (await fanin.ctx.store.getHeader(id))?.status ?? 'gone'));
  }

  /** Empties every output queue a test looks at, and checks nothing went to the control DLQ. */
  async function settle(): Promise<void> {
    for (const role of ['completed', 'status', 'error'] as const) await fanin.outputs(role);
  }

  it('completing a whole definition makes at most a page’s calls per invocation, however many aggregates are open, and completes each aggregate once', async () => {
    // Prepare: 300 of alpha and 40 of beta, interleaved in every shard of the index
    const alpha = await open('alpha', ALPHA);
    const beta = await open('beta', BETA);

    // Act
    await fanin.sendControl({ command: 'complete', definition: 'alpha' });
    const invocations = await runControl();

    // Assess: a chain of invocations, each bounded by the page (index queries, one read per entry,
    // the completions of its matches, the continuation and the result), none by the 340 open
    // (mutant killed: "every page in one invocation")
    const max = Math.max(...perInvocation);
    const total = perInvocation.reduce((a, b) => a + b, 0);
    console.info(
      `[control-paging] ${ALPHA + BETA} open, page ${PAGE}: ${invocations} invocations, ${total} calls, at most ${max} per invocation`,
    );
    expect(invocations).toBeGreaterThanOrEqual(Math.ceil((ALPHA + BETA) / PAGE));
    expect(max).toBeLessThanOrEqual(9 + PAGE * 8);
    expect(total).toBeGreaterThan(5 * max);
    // every alpha aggregate completed exactly once, every beta one left open
    expect([...terminals(alpha).values()].filter((t) => t.length !== 1)).toEqual([]);
    expect(new Set(await statuses(alpha))).toEqual(new Set(['closed']));
    expect(new Set(await statuses(beta))).toEqual(new Set(['open']));
    // each part's result names what it closed, the last one without `more`
    const results = (await fanin.outputs('status')).filter((s) => s.type === 'fanin.control.result');
    expect(results.flatMap((r) => r.affected as string[]).sort()).toEqual([...alpha].sort());
    expect(results.filter((r) => r.more !== true)).toHaveLength(1);
    expect(new Set(results.map((r) => r.run)).size).toBe(1);
    await fanin.sendControl({ command: 'purge', definition: 'beta' });
    await runControl();
    await settle();
  });

  it('a duplicated continuation completes every aggregate exactly once, and both chains end', async () => {
    // Prepare: the third continuation is sent twice (as SQS may deliver it twice); beta's
    // aggregates, which the command leaves open, stay in the index around alpha's
    const ids = await open('alpha', 120);
    const beta = await open('beta', 30);
    const send = fanin.ctx.continueControl;
    let sent = 0;
    fanin.ctx = {
      ...fanin.ctx,
      continueControl: async (body) => {
        sent += 1;
        await send(body);
        if (sent === 3) await send(body);
      },
    };

    // Act
    await fanin.sendControl({ command: 'complete', definition: 'alpha' });
    const invocations = await runControl();
    fanin.buildContext();

    // Assess (mutant killed: "a continuation starts over from the first page")
    expect([...terminals(ids).values()].filter((t) => t.length !== 1)).toEqual([]);
    expect(new Set(await statuses(ids))).toEqual(new Set(['closed']));
    expect(invocations).toBeLessThan(2 * Math.ceil(150 / PAGE) + 2);
    expect(new Set(await statuses(beta))).toEqual(new Set(['open']));
    expect(
      await takeAll(fanin.provisioned.allQueueUrls[`${fanin.topology.prefix}-control-dlq`] ?? ''),
    ).toEqual([]);
    await fanin.sendControl({ command: 'purge', definition: 'beta' });
    await runControl();
    await settle();
  });

  it.each([
    [
      'before',
      'a crash after a page’s completions, before its continuation is sent, is redelivered and goes on from the same cursor',
    ],
    [
      'after',
      'a crash after the continuation was sent, before the part is done, leaves two chains that both end',
    ],
  ] as const)('%s: %s, and every aggregate is completed exactly once', async (mode, _description) => {
    // Prepare
    const ids = await open('alpha', 120);
    fanin.probe.crashAt({ name: 'SQS.SendMessage', queueRole: 'control' }, mode, 2);

    // Act
    await fanin.sendControl({ command: 'purge', definition: 'alpha' });
    await runControl();

    // Assess: the part is redelivered and redoes its page from the same cursor (before), or a
    // second chain runs beside the first (after); either way each aggregate closes once
    expect(fanin.probe.disarm()).toBeDefined();
    expect([...terminals(ids).values()].filter((t) => t.length !== 1)).toEqual([]);
    expect(new Set(await statuses(ids))).toEqual(new Set(['closed']));
    await settle();
  });

  it('a crash in the middle of a page’s completions fails the part, and its redelivery completes what the crash left', async () => {
    // Prepare: the 30th seal crashes (the second page's fifth completion)
    const ids = await open('alpha', 120);
    fanin.probe.crashAt(
      { name: 'DynamoDB.UpdateItem', where: (c) => String(c.input.UpdateExpression).includes(':completing') },
      'before',
      30,
    );

    // Act
    await fanin.sendControl({ command: 'complete', definition: 'alpha' });
    await runControl();

    // Assess (mutant killed: "a failed completion is passed over")
    expect(fanin.probe.disarm()).toBeDefined();
    expect([...terminals(ids).values()].filter((t) => t.length !== 1)).toEqual([]);
    expect(new Set(await statuses(ids))).toEqual(new Set(['closed']));
    await settle();
  });

  it('an invocation short of time stops between completions, and its continuation goes on from the last one it completed', async () => {
    // Prepare: each invocation has time for about ten completions (then less than the margin),
    // however many pages it may work through
    const ids = await open('alpha', 120);
    fanin.ctx = { ...fanin.ctx, controlPagesPerInvocation: 10 };
    remainingMs = () => {
      let asked = 0;
      return () => (++asked > 10 ? 5_000 : 60_000);
    };

    // Act
    await fanin.sendControl({ command: 'complete', definition: 'alpha' });
    const invocations = await runControl();
    fanin.buildContext();

    // Assess: several parts, none past its time, every aggregate once
    // (mutant killed: "a part stopped early goes on from the end of its page")
    expect(invocations).toBeGreaterThanOrEqual(120 / 20);
    expect([...terminals(ids).values()].filter((t) => t.length !== 1)).toEqual([]);
    expect(new Set(await statuses(ids))).toEqual(new Set(['closed']));
    const results = (await fanin.outputs('status')).filter((s) => s.type === 'fanin.control.result');
    expect(Math.max(...results.map((r) => (r.affected as string[]).length))).toBeLessThanOrEqual(10 + 8);
    await settle();
  });

  it('an invocation with no time left still completes one aggregate, so every chain ends', async () => {
    // Prepare: Lambda says no time is left, every time it is asked
    const ids = await open('alpha', 20);
    remainingMs = () => () => 0;

    // Act
    await fanin.sendControl({ command: 'complete', definition: 'alpha' });
    const invocations = await runControl();

    // Assess (mutant killed: "a part short of time moves on by nothing": it would resend the
    // same cursor forever)
    expect(invocations).toBeGreaterThanOrEqual(20);
    expect(new Set(await statuses(ids))).toEqual(new Set(['closed']));
    await settle();
  });

  it('the CLI’s listing shows up to its limit, and its cursor leads to the next page; a cursor it did not make is refused', async () => {
    // Prepare
    const ids = await open('alpha', 45);
    await open('beta', 10);

    // Act
    const pages: string[][] = [];
    let cursor: string | undefined;
    do {
      const page = await listActivePage(fanin.clients.dynamo, fanin.topology.tableName, {
        definition: 'alpha',
        limit: 20,
        ...(cursor !== undefined ? { cursor } : {}),
      });
      pages.push(page.aggregates.map((a) => a.aggregateId));
      cursor = page.next;
    } while (cursor !== undefined && pages.length < 10);

    // Assess
    expect(pages.map((p) => p.length)).toEqual([20, 20, 5]);
    expect(pages.flat().sort()).toEqual([...ids].sort());
    await expect(
      listActivePage(fanin.clients.dynamo, fanin.topology.tableName, { cursor: 'not a cursor' }),
    ).rejects.toThrow(/invalid cursor/);
    await fanin.sendControl({ command: 'purge', all: true });
    await runControl();
    await settle();
  });

  it('a continuation naming one definition never touches another’s aggregates, wherever its cursor points', async () => {
    // Prepare: a cursor taken from the middle of a listing of everything (beta's aggregates around it)
    const alpha = await open('alpha', 30);
    const beta = await open('beta', 30);
    const first = await listActivePage(fanin.clients.dynamo, fanin.topology.tableName, { limit: 20 });
    expect(first.next).toBeDefined();

    // Act: a forged continuation for alpha with that cursor
    await fanin.sendControl({
      command: 'complete',
      definition: 'alpha',
      cursor: first.next,
      openedUpTo: fanin.clock.now,
      run: 'forged',
    });
    await runControl();

    // Assess: beta is untouched, and alpha's aggregates after the cursor are completed
    // (mutant killed: "a page completes every aggregate it reads")
    expect(new Set(await statuses(beta))).toEqual(new Set(['open']));
    const before = new Set(first.aggregates.map((a) => a.aggregateId));
    const after = alpha.filter((id) => !before.has(id));
    expect(new Set(await statuses(after))).toEqual(new Set(['closed']));
    await fanin.sendControl({ command: 'purge', all: true });
    await runControl();
    await settle();
  });

  it.each([
    ['a cursor that is not one a page made', { cursor: 'bm90IGEgY3Vyc29y' }, 'invalid cursor'],
    [
      'a cursor with a key outside the aggregates',
      { cursor: Buffer.from(JSON.stringify([0, 1, 'D#alpha', 'H'])).toString('base64url') },
      'invalid cursor',
    ],
    [
      "a cursor at the arming watermark's key",
      { cursor: Buffer.from(JSON.stringify([0, 1, 'A#\uffffarming', 'H'])).toString('base64url') },
      'invalid cursor',
    ],
    [
      'a cursor naming a shard the index has not',
      { cursor: Buffer.from(JSON.stringify([8])).toString('base64url') },
      'invalid cursor',
    ],
    ['openedUpTo in the future', { openedUpTo: Date.now() + 86_400_000 * 400 }, 'in the future'],
  ])(
    'a continuation with %s goes to the error output and completes nothing',
    async (_case, fields, reason) => {
      // Prepare
      const ids = await open('alpha', 3);

      // Act
      await fanin.sendControl({ command: 'complete', definition: 'alpha', ...fields });
      await runControl();

      // Assess (mutant killed: "the cursor's key taken as it comes")
      const [error] = await fanin.outputs('error');
      expect(error).toMatchObject({ type: 'fanin.error', source: 'control' });
      expect(String(error?.reason)).toContain(reason);
      expect(new Set(await statuses(ids))).toEqual(new Set(['open']));
      await fanin.sendControl({ command: 'purge', all: true });
      await runControl();
      await settle();
    },
  );

  it('aggregates opened after the command are left open by it', async () => {
    // Prepare: some open now, some opened a minute after the command is handled
    const now = await open('alpha', 10);
    const later = await open('alpha', 10, fanin.clock.now + 60_000);

    // Act
    await fanin.sendControl({ command: 'complete', definition: 'alpha' });
    await runControl();

    // Assess (mutant killed: "openedUpTo not applied")
    expect(new Set(await statuses(now))).toEqual(new Set(['closed']));
    expect(new Set(await statuses(later))).toEqual(new Set(['open']));
    fanin.clock.advance(120_000);
    await fanin.sendControl({ command: 'purge', all: true });
    await runControl();
    await settle();
  });

  it('list pages: each page at most its limit, its next cursor leading to the following one, every aggregate listed once', async () => {
    // Prepare
    const ids = await open('alpha', 60);

    // Act: the control bus's list, page after page
    const listed: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      await fanin.sendControl({
        command: 'list',
        definition: 'alpha',
        limit: 25,
        ...(cursor ? { cursor } : {}),
      });
      await runControl();
      const [status] = await fanin.outputs('status');
      expect(status?.type).toBe('fanin.status.active');
      const aggregates = status?.aggregates as { aggregateId: string }[];
      expect(aggregates.length).toBeLessThanOrEqual(25);
      listed.push(...aggregates.map((a) => a.aggregateId));
      cursor = status?.next as string | undefined;
      pages += 1;
    } while (cursor !== undefined && pages < 10);

    // Assess (mutant killed: "list reads every page")
    expect(pages).toBe(3);
    expect(listed.sort()).toEqual([...ids].sort());
    expect(Math.max(...perInvocation)).toBeLessThanOrEqual(9 + 25 * 2 + 1);
    await fanin.sendControl({ command: 'purge', all: true });
    await runControl();
    await settle();
  });
});
