import { ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { TimerMessage } from '../../../shared/ports.ts';
import { handleTimer } from '../../../shared/use-cases/timers.ts';
import { aws } from '../../support/clients.ts';
import { FaninUnderTest } from '../../support/fanin.ts';

/**
 * Every timer kind besides a plain deadline costs one timer per thing due, whatever its interval:
 * a held reply's unknown timeout, an inactivity timeout that moves, a snapshot
 * interval and an allowed life (`maxOpenSeconds`) of days are armed by the sweep as they enter SQS's
 * 15-minute delay horizon, never re-armed every 15 minutes. A snapshot due beyond the horizon has
 * an item of its own in the `due` index (its aggregate's next snapshot) for that.
 */

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const MINUTE = 60_000;
/** The driver sweeps every 14 minutes: the sweep's arming window (840 s), so nothing is armed late. */
const SWEEP_EVERY = 14 * MINUTE;

const DEFINITIONS = [
  {
    name: 'snap',
    fanOut: { type: 'none' },
    completion: { strategy: 'all' },
    timeoutSeconds: 60 * 60 * 60,
    snapshotIntervalSeconds: 86_400,
  },
  {
    name: 'held',
    fanOut: { type: 'none' },
    completion: { strategy: 'all' },
    timeoutSeconds: 60,
    unknownTimeoutSeconds: 86_400,
  },
  {
    name: 'idle',
    fanOut: { type: 'none' },
    completion: { strategy: 'all' },
    timeoutSeconds: 7 * 86_400,
    inactivityTimeoutSeconds: 86_400,
  },
  // No deadline: the allowed life ends it (a longer deadline would extend the life).
  { name: 'life', fanOut: { type: 'none' }, completion: { strategy: 'all' }, maxOpenSeconds: 2 * 86_400 },
] as const;

interface Sent {
  readonly timer: TimerMessage;
  readonly sentAt: number;
  readonly visibleAt: number;
}

/** The timers the system sent since probe sequence `since`, at the test clock's time. */
function timersSent(fanin: FaninUnderTest, since: number): Sent[] {
  const at = fanin.clock.now;
  return fanin.probe
    .callsAfter(since)
    .filter((c) => c.queueRole === 'timer' && c.name.startsWith('SQS.SendMessage') && c.outcome === 'ok')
    .flatMap((c) => {
      const entries = (c.input.Entries as Record<string, unknown>[] | undefined) ?? [c.input];
      return entries.map((e) => ({
        timer: JSON.parse(String(e.MessageBody)) as TimerMessage,
        sentAt: at,
        visibleAt: at + Number(e.DelaySeconds) * 1000,
      }));
    });
}

describe('timers of days beyond the deadline are armed once each, by the sweep', () => {
  let fanin: FaninUnderTest;
  let t0: number;
  const sent: Sent[] = [];
  const handled: { timer: TimerMessage; at: number }[] = [];
  let status: Record<string, unknown>[] = [];
  let unknown: Record<string, unknown>[] = [];
  let timedOut: Record<string, unknown>[] = [];

  /**
   * Three days at virtual time: the sweep every 14 minutes, each timer handled when its delay
   * ends (the emulator's real-time delays are not waited for: the delay each send asked for is),
   * and the replies of the inactivity aggregate at half a day and 1.2 days.
   */
  beforeAll(async () => {
    fanin = await FaninUnderTest.start(DEFINITIONS as never);
    t0 = fanin.clock.now;
    let since = fanin.probe.now;
    const collect = () => {
      sent.push(...timersSent(fanin, since));
      since = fanin.probe.now;
    };
    for (const [definition, id] of [
      ['snap', 's-1'],
      ['idle', 'i-1'],
      ['life', 'x-1'],
    ] as const)
      await fanin.sendRequest({ definition, aggregateId: id, expected: 3 });
    await fanin.sendReply(
      { v: 1 },
      { 'fanin-aggregate-id': 'h-1', 'fanin-reply-id': 'r', 'fanin-definition': 'held' },
    );
    await fanin.drain();
    collect();
    const replies = [
      { at: t0 + DAY / 2, id: '0' },
      { at: t0 + 1.2 * DAY, id: '1' },
    ];
    const pending = [...sent];
    let nextSweep = t0 + MINUTE;
    const end = t0 + 3 * DAY + HOUR;
    while (fanin.clock.now < end) {
      pending.sort((a, b) => a.visibleAt - b.visibleAt);
      const timer = pending[0];
      const reply = replies[0];
      const next = Math.min(timer?.visibleAt ?? Infinity, reply?.at ?? Infinity, nextSweep);
      fanin.clock.now = Math.max(fanin.clock.now, next);
      const before = sent.length;
      if (timer && timer.visibleAt === next) {
        pending.shift();
        handled.push({ timer: timer.timer, at: fanin.clock.now });
        await handleTimer(fanin.ctx, {
          messageId: `t-${handled.length}`,
          body: JSON.stringify(timer.timer),
          attributes: {},
          receiveCount: 1,
        });
      } else if (reply && reply.at === next) {
        replies.shift();
        await fanin.sendReply({ v: reply.id }, { 'fanin-aggregate-id': 'i-1', 'fanin-reply-id': reply.id });
        await fanin.drain();
      } else {
        nextSweep += SWEEP_EVERY;
        await fanin.sweep();
      }
      collect();
      pending.push(...sent.slice(before));
    }
    status = await fanin.outputs('status');
    unknown = await fanin.outputs('unknown');
    timedOut = await fanin.outputs('timed-out');
  }, 240_000);
  afterAll(() => fanin?.stop());

  const sentFor = (id: string) => sent.filter((s) => s.timer.aggregateId === id);
  const handledFor = (id: string) => handled.filter((h) => h.timer.aggregateId === id);
  /** Every timer of `id` was handled within 2 s after it was due. */
  const expectPrecise = (id: string) => {
    for (const h of handledFor(id)) {
      expect(h.at - h.timer.dueAt).toBeGreaterThanOrEqual(0);
      expect(h.at - h.timer.dueAt).toBeLessThanOrEqual(2_000);
    }
  };

  it('a snapshot interval of a day sends one timer a period (kills "a snapshot beyond the horizon hops every 15 minutes")', async () => {
    // Assess: periods 1 and 2 published; the one due after the deadline fires once and finds it closed
    expect(
      sentFor('s-1')
        .filter((s) => s.timer.kind === 'snapshot')
        .map((s) => s.timer.dueAt - t0),
    ).toEqual([DAY, 2 * DAY, 3 * DAY]);
    expect(
      sentFor('s-1')
        .filter((s) => s.timer.kind === 'snapshot')
        .every((s) => s.visibleAt - s.sentAt <= 900_000),
    ).toBe(true);
    const snapshots = status.filter((o) => o.aggregateId === 's-1' && o.type === 'fanin.aggregate.snapshot');
    expect(snapshots.map((o) => [o.id, Number(o.asOf) - t0])).toEqual([
      ['s-1/snapshot/1', DAY],
      ['s-1/snapshot/2', 2 * DAY],
    ]);
    expectPrecise('s-1');
    expect(timedOut.map((o) => o.aggregateId)).toContain('s-1');
  });

  it('an aggregate whose snapshots ended leaves nothing due behind (kills "the next-snapshot item is never deleted")', async () => {
    // Assess: no next-snapshot item left in the table (the sweeper would find it due every minute)
    const { Items = [] } = await aws.dynamo.send(
      new QueryCommand({
        TableName: fanin.provisioned.tableName,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': 'A#s-1' },
        ConsistentRead: true,
      }),
    );
    expect(Items.filter((i) => i.sk === 'S')).toEqual([]);
    expect(await fanin.ctx.store.dueItems(fanin.clock.now, 100)).toEqual([]);
  });

  it("a held reply's unknown timeout of a day sends one timer", async () => {
    expect(sentFor('h-1').map((s) => [s.timer.kind, s.timer.dueAt - t0])).toEqual([['held', DAY]]);
    expect(unknown.map((o) => o.aggregateId ?? (o as { attributes?: unknown }).attributes)).toHaveLength(1);
    expectPrecise('h-1');
  });

  it('an inactivity timeout of a day that moves twice sends one timer per deadline in force', async () => {
    // Prepare's replies at 0.5 and 1.2 days move the deadline to 1.5 and then 2.2 days
    expect(sentFor('i-1').map((s) => [s.timer.kind, Math.round((s.timer.dueAt - t0) / HOUR)])).toEqual([
      ['deadline', 24],
      ['deadline', 36],
      ['deadline', Math.round(2.2 * 24)],
    ]);
    expect(timedOut.filter((o) => o.aggregateId === 'i-1')).toHaveLength(1);
    expectPrecise('i-1');
  });

  it('an allowed life of two days (no deadline) sends one timer, for the end of the life', async () => {
    expect(sentFor('x-1').map((s) => [s.timer.kind, s.timer.dueAt - t0])).toEqual([['deadline', 2 * DAY]]);
    expect(await fanin.ctx.store.getHeader('x-1')).toMatchObject({ status: 'closed', closeBy: t0 + 2 * DAY });
    expectPrecise('x-1');
  });
});

describe('the sweeper is the backstop of a lost snapshot timer of a long interval', () => {
  let fanin: FaninUnderTest;
  afterEach(() => fanin?.stop());

  it('no timer is ever delivered: the sweeper takes the snapshot and puts the next one in the index (kills "the sweeper ignores next-snapshot items")', async () => {
    // Prepare
    fanin = await FaninUnderTest.start(DEFINITIONS as never);
    const t0 = fanin.clock.now;
    await fanin.sendRequest({ definition: 'snap', aggregateId: 'b-1', expected: 3 });
    await fanin.drain();

    // Act: the sweeper runs after the first period with no timer delivered
    fanin.clock.now = t0 + DAY + 1_000;
    await fanin.sweep();

    // Assess
    const snapshots = (await fanin.outputs('status')).filter((o) => o.type === 'fanin.aggregate.snapshot');
    expect(snapshots.map((o) => o.id)).toEqual(['b-1/snapshot/1']);
    const due = await fanin.ctx.store.dueItems(t0 + 2 * DAY, 100);
    expect(due).toContainEqual({ kind: 'snapshot', aggregateId: 'b-1', dueAt: t0 + 2 * DAY });
  });

  it('a listing paged one entry at a time steps over next-snapshot entries (kills "a cursor after a next-snapshot entry is refused")', async () => {
    // Prepare: three aggregates, each with its header and its next-snapshot item in the `due` index
    fanin = await FaninUnderTest.start(DEFINITIONS as never);
    for (const id of ['l-1', 'l-2', 'l-3'])
      await fanin.sendRequest({ definition: 'snap', aggregateId: id, expected: 3 });
    await fanin.drain();

    // Act: page by page, one index entry a page
    const listed: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await fanin.ctx.store.listActivePage({ limit: 1, ...(cursor ? { cursor } : {}) });
      listed.push(...page.aggregates.map((a) => a.header.aggregateId));
      cursor = page.next;
      pages += 1;
    } while (cursor !== undefined && pages < 50);

    // Assess: every aggregate once; pages for the snapshot entries too
    expect(listed.sort()).toEqual(['l-1', 'l-2', 'l-3']);
    expect(pages).toBeGreaterThanOrEqual(6);
  });

  it('a stale timer of an earlier period leaves the next-snapshot item in place (kills "the next-snapshot item is deleted whatever its due time")', async () => {
    // Prepare: the sweeper takes periods 1 and 2 (no timer delivered); the item is then period 3's
    fanin = await FaninUnderTest.start(DEFINITIONS as never);
    const t0 = fanin.clock.now;
    await fanin.sendRequest({ definition: 'snap', aggregateId: 'q-1', expected: 3 });
    await fanin.drain();
    fanin.clock.now = t0 + DAY + 1_000;
    await fanin.sweep();
    fanin.clock.now = t0 + 2 * DAY + 1_000;
    await fanin.sweep();

    // Act: the timer the sweep armed for period 1 is delivered late, after period 2 was marked
    await handleTimer(fanin.ctx, {
      messageId: 'stale',
      body: JSON.stringify({ kind: 'snapshot', aggregateId: 'q-1', dueAt: t0 + DAY }),
      attributes: {},
      receiveCount: 1,
    });

    // Assess
    expect(await fanin.ctx.store.dueItems(t0 + 3 * DAY, 100)).toContainEqual({
      kind: 'snapshot',
      aggregateId: 'q-1',
      dueAt: t0 + 3 * DAY,
    });
  });
});

/**
 * Precision at the emulators' clock: the test clock runs with real time, shifted to 3 s before
 * the thing due; the sweep arms its timer (a real SQS delay message on the emulator), and the
 * timer handler acts on each message as SQS releases it.
 */
describe('a timer of every kind fires within 2 s after it is due, a day or more away', () => {
  let fanin: FaninUnderTest;
  afterEach(() => fanin?.stop());

  async function takeTimers(waitSeconds: number) {
    const { Messages = [] } = await aws.sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: fanin.provisioned.queueUrls.timer,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: waitSeconds,
      }),
    );
    return Messages;
  }

  it.each([
    ['a snapshot a day away', 'snapshot'],
    ["a held reply's unknown timeout a day away", 'held'],
    ['an inactivity deadline moved a day away', 'idle'],
    ['an allowed life of two days', 'life'],
  ] as const)(
    '%s',
    async (_, kind) => {
      // Prepare
      fanin = await FaninUnderTest.start(DEFINITIONS as never);
      let offset = 0;
      const tick = () => {
        fanin.clock.now = Date.now() + offset;
      };
      tick();
      const t0 = fanin.clock.now;
      let due: number;
      let done: () => Promise<boolean>;
      if (kind === 'held') {
        await fanin.sendReply(
          { v: 1 },
          { 'fanin-aggregate-id': 'p-1', 'fanin-reply-id': 'r', 'fanin-definition': 'held' },
        );
        await fanin.drain();
        due = (await fanin.ctx.store.getHeld('p-1', 'r'))?.dueAt as number;
        done = async () => (await fanin.ctx.store.getHeld('p-1', 'r')) === undefined;
      } else {
        const definition = kind === 'snapshot' ? 'snap' : kind;
        await fanin.sendRequest({ definition, aggregateId: 'p-1', expected: 3 });
        await fanin.drain();
        if (kind === 'idle') {
          // A reply half a day in: the deadline at a day moves to 1.5 days when it comes
          offset = DAY / 2;
          tick();
          await fanin.sendReply({ v: 1 }, { 'fanin-aggregate-id': 'p-1', 'fanin-reply-id': '0' });
          await fanin.drain();
          offset = DAY;
          tick();
          await fanin.sweep();
          await handleTimer(fanin.ctx, {
            messageId: 'first',
            body: JSON.stringify({ kind: 'deadline', aggregateId: 'p-1', dueAt: t0 + DAY }),
            attributes: {},
            receiveCount: 1,
          });
        }
        const header = await fanin.ctx.store.getHeader('p-1');
        due =
          kind === 'snapshot'
            ? t0 + DAY
            : kind === 'life'
              ? (header?.closeBy as number)
              : (header?.deadline as number);
        done =
          kind === 'snapshot'
            ? async () => fanin.publications('p-1').some((p) => p.body.type === 'fanin.aggregate.snapshot')
            : async () => (await fanin.ctx.store.getHeader('p-1'))?.status === 'closed';
      }
      expect(due - t0).toBeGreaterThanOrEqual(DAY);
      while ((await takeTimers(0)).length > 0) {
        // the timers of the opening (none beyond the horizon) are not the ones measured
      }
      offset = due - 3_000 - Date.now();
      tick();
      await fanin.sweep();

      // Act
      let firedAt: number | undefined;
      for (let polls = 0; polls < 20 && firedAt === undefined; polls += 1) {
        for (const message of await takeTimers(1)) {
          tick();
          await handleTimer(fanin.ctx, {
            messageId: message.MessageId ?? '',
            body: message.Body ?? '',
            attributes: {},
            receiveCount: 1,
          });
          if (await done()) firedAt = fanin.clock.now;
        }
      }

      // Assess
      expect(firedAt).toBeDefined();
      expect((firedAt as number) - due).toBeGreaterThanOrEqual(0);
      expect((firedAt as number) - due).toBeLessThanOrEqual(2_000);
    },
    60_000,
  );
});
