import { ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { afterEach, describe, expect, it } from 'vitest';
import type { TimerMessage } from '../../../shared/ports.ts';
import { ARMING_MARGIN_MS, handleTimer } from '../../../shared/use-cases/timers.ts';
import { aws } from '../../support/clients.ts';
import { FaninUnderTest } from '../../support/fanin.ts';

/**
 * Timers whose cost does not grow with the deadline: a deadline or held reply due
 * within SQS's 15-minute delay is armed by its writer; one due later is armed once, by the sweep,
 * as it enters that horizon (a watermark on the state table says how far the sweeps have armed,
 * so each is armed once and a sweep that did not run is caught up), and a timer that fires early
 * beyond the horizon arms nothing. The sweeper stays the backstop.
 */

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const HORIZON = 900_000;

const DEFINITIONS = [
  { name: 'minute', fanOut: { type: 'none' }, completion: { strategy: 'all' }, timeoutSeconds: 60 },
  { name: 'day', fanOut: { type: 'none' }, completion: { strategy: 'all' }, timeoutSeconds: 86_400 },
  {
    name: 'month',
    fanOut: { type: 'none' },
    completion: { strategy: 'all' },
    timeoutSeconds: 30 * 86_400,
    maxOpenSeconds: 31 * 86_400,
  },
  {
    name: 'idle',
    fanOut: { type: 'none' },
    completion: { strategy: 'all' },
    timeoutSeconds: 86_400,
    inactivityTimeoutSeconds: 3_600,
  },
  {
    name: 'held',
    fanOut: { type: 'none' },
    completion: { strategy: 'all' },
    timeoutSeconds: 60,
    unknownTimeoutSeconds: 86_400,
  },
] as const;

describe('timers beyond the horizon are armed once, by the sweep', () => {
  let fanin: FaninUnderTest;
  afterEach(() => fanin?.stop());

  async function start(): Promise<FaninUnderTest> {
    fanin = await FaninUnderTest.start(DEFINITIONS as never);
    return fanin;
  }

  /** The timers the system sent since probe sequence `since`, with their delays. */
  function timersSent(since: number): { timer: TimerMessage; delaySeconds: number }[] {
    return fanin.probe
      .callsAfter(since)
      .filter((c) => c.queueRole === 'timer' && c.name.startsWith('SQS.SendMessage') && c.outcome === 'ok')
      .flatMap((c) => {
        const entries = (c.input.Entries as Record<string, unknown>[] | undefined) ?? [c.input];
        return entries.map((e) => ({
          timer: JSON.parse(String(e.MessageBody)) as TimerMessage,
          delaySeconds: Number(e.DelaySeconds),
        }));
      });
  }

  async function open(definition: string, id: string): Promise<number> {
    await fanin.sendRequest({ definition, aggregateId: id, expected: 2 });
    await fanin.drain();
    const header = await fanin.ctx.store.getHeader(id);
    return header?.deadline as number;
  }

  const fire = (timer: TimerMessage, messageId = 'fired') =>
    handleTimer(fanin.ctx, { messageId, body: JSON.stringify(timer), attributes: {}, receiveCount: 1 });

  it('a deadline within the horizon is armed at open; one a day away arms no timer at open', async () => {
    // Prepare
    await start();
    const since = fanin.probe.now;

    // Act
    await open('minute', 'm-1');
    await open('day', 'd-1');

    // Assess
    expect(timersSent(since).map((t) => [t.timer.aggregateId, t.delaySeconds])).toEqual([['m-1', 60]]);
  });

  it('the sweep arms a deadline as it enters the horizon, once, for its due time', async () => {
    // Prepare
    await start();
    const due = await open('day', 'd-2');
    await fanin.sweep();
    const since = fanin.probe.now;

    // Act: sweeps every minute from 16 minutes before the deadline
    const armed: { timer: TimerMessage; delaySeconds: number }[] = [];
    for (let at = due - 16 * 60_000; at < due; at += 60_000) {
      fanin.clock.now = at;
      const before = fanin.probe.now;
      await fanin.sweep();
      armed.push(...timersSent(before));
    }

    // Assess: one timer, armed by the first sweep whose window reached it, delayed to the deadline
    expect(armed).toHaveLength(1);
    expect(armed[0]?.timer).toEqual({ kind: 'deadline', aggregateId: 'd-2', dueAt: due });
    const armedAt =
      due - 16 * 60_000 + 60_000 * Math.ceil((HORIZON - ARMING_MARGIN_MS - 15 * 60_000) / 60_000 + 1);
    expect(armed[0]?.delaySeconds).toBeLessThanOrEqual((HORIZON - ARMING_MARGIN_MS) / 1000);
    expect(armed[0]?.delaySeconds).toBeGreaterThan((HORIZON - ARMING_MARGIN_MS - 60_000) / 1000);
    expect(armedAt).toBeLessThanOrEqual(due);
    expect(timersSent(since)).toHaveLength(1);
  });

  it('sweeps that did not run are caught up: the next arms every deadline that entered the horizon meanwhile', async () => {
    // Prepare: two deadlines four minutes apart; a sweep, then five minutes without one
    await start();
    const first = await open('day', 'c-1');
    fanin.clock.advance(4 * 60_000);
    const second = await open('day', 'c-2');
    fanin.clock.now = first - HORIZON;
    await fanin.sweep();
    const since = fanin.probe.now;

    // Act
    fanin.clock.advance(5 * 60_000);
    await fanin.sweep();

    // Assess
    const armed = timersSent(since).map((t) => t.timer);
    expect(armed).toEqual(
      expect.arrayContaining([
        { kind: 'deadline', aggregateId: 'c-1', dueAt: first },
        { kind: 'deadline', aggregateId: 'c-2', dueAt: second },
      ]),
    );
    expect(armed).toHaveLength(2);
  });

  it('a timer delivered twice long before its deadline arms nothing, so no chain of hops can fork', async () => {
    // Prepare
    await start();
    const due = await open('month', 'y-1');
    const since = fanin.probe.now;

    // Act: a timer of the old kind (a 15-minute hop) delivered twice, 29 days early
    fanin.clock.advance(DAY);
    await fire({ kind: 'deadline', aggregateId: 'y-1', dueAt: due }, 'hop');
    await fire({ kind: 'deadline', aggregateId: 'y-1', dueAt: due }, 'hop');

    // Assess
    expect(timersSent(since)).toEqual([]);
    expect((await fanin.ctx.store.getHeader('y-1'))?.status).toBe('open');
  });

  it('a timer that fires early within the horizon is armed again for the rest, and the deadline then decides', async () => {
    // Prepare
    await start();
    const due = await open('minute', 'e-1');
    const since = fanin.probe.now;

    // Act: fired 3 s early (a clock behind), then at the deadline
    fanin.clock.now = due - 3_000;
    await fire({ kind: 'deadline', aggregateId: 'e-1', dueAt: due });
    fanin.clock.now = due;
    await fire({ kind: 'deadline', aggregateId: 'e-1', dueAt: due });

    // Assess
    expect(timersSent(since).map((t) => t.delaySeconds)).toEqual([3]);
    expect(await fanin.outputs('timed-out')).toMatchObject([{ aggregateId: 'e-1' }]);
  });

  it('a sweep whose timers could not be sent leaves them to the next sweep, which arms them', async () => {
    // Prepare
    await start();
    const due = await open('day', 'f-1');
    fanin.clock.now = due - HORIZON + ARMING_MARGIN_MS;
    const failing = fanin.buildContext({
      timers: {
        ...fanin.ctx.timers,
        horizonMs: HORIZON,
        arm: async () => {
          throw new Error('SQS is down');
        },
        armAll: async () => {
          throw new Error('SQS is down');
        },
      },
    });
    await expect(
      import('../../../shared/use-cases/timers.ts').then(({ sweep }) => sweep(failing)),
    ).rejects.toThrow();
    fanin.buildContext();
    const since = fanin.probe.now;

    // Act
    fanin.clock.advance(60_000);
    await fanin.sweep();

    // Assess
    expect(timersSent(since).map((t) => t.timer)).toEqual([
      { kind: 'deadline', aggregateId: 'f-1', dueAt: due },
    ]);
  });

  it('a lost timer of a long deadline leaves the aggregate to the sweeper, which times it out', async () => {
    // Prepare
    await start();
    const due = await open('month', 'l-1');

    // Act: no timer is ever delivered; the sweeper runs after the deadline
    fanin.clock.now = due + 1;
    await fanin.sweep();

    // Assess
    expect(await fanin.outputs('timed-out')).toMatchObject([{ aggregateId: 'l-1' }]);
  });

  it('an inactivity timeout that moves beyond the horizon arms nothing as it moves; the sweep arms the moved deadline', async () => {
    // Prepare: an hour of inactivity allowed; a reply half an hour in
    await start();
    const first = await open('idle', 'i-1');
    fanin.clock.advance(30 * 60_000);
    await fanin.sendReply({ v: 1 }, { 'fanin-aggregate-id': 'i-1', 'fanin-reply-id': '0' });
    await fanin.drain();
    const since = fanin.probe.now;

    // Act 1: the first deadline comes; the reply moves it an hour after the reply
    fanin.clock.now = first;
    await fire({ kind: 'deadline', aggregateId: 'i-1', dueAt: first });
    const moved = (await fanin.ctx.store.getHeader('i-1'))?.deadline as number;
    const armedByTheMove = timersSent(since);

    // Act 2: the sweep whose window reaches the moved deadline
    fanin.clock.now = moved - HORIZON + ARMING_MARGIN_MS;
    await fanin.sweep();

    // Assess
    expect(moved).toBe(first + 30 * 60_000);
    expect(armedByTheMove).toEqual([]);
    expect(timersSent(since).map((t) => t.timer)).toEqual([
      { kind: 'deadline', aggregateId: 'i-1', dueAt: moved },
    ]);
  });

  it('a held reply whose unknown timeout is a day away is armed by the sweep as it enters the horizon', async () => {
    // Prepare: a reply for an aggregate that does not exist yet
    await start();
    const since = fanin.probe.now;
    await fanin.sendReply(
      { v: 1 },
      { 'fanin-aggregate-id': 'h-1', 'fanin-reply-id': 'r', 'fanin-definition': 'held' },
    );
    await fanin.drain();
    const held = await fanin.ctx.store.getHeld('h-1', 'r');
    expect(held).toBeDefined();
    expect(timersSent(since)).toEqual([]);

    // Act
    fanin.clock.now = (held?.dueAt as number) - HORIZON + ARMING_MARGIN_MS;
    await fanin.sweep();

    // Assess
    expect(timersSent(since).map((t) => t.timer)).toEqual([
      { kind: 'held', aggregateId: 'h-1', replyId: 'r', dueAt: held?.dueAt },
    ]);
  });
});

/**
 * Precision at the emulators' clock: the test clock runs with real time (shifted to just before
 * the deadline), the timer is a real SQS delay message on the emulator, and the deadline is acted
 * on when the message is received, whatever the deadline's length.
 */
describe('a deadline fires within 2 s after it is due, whatever its length', () => {
  let fanin: FaninUnderTest;
  afterEach(() => fanin?.stop());

  it.each([
    ['minute', 'armed at open'],
    ['day', 'armed by the sweep'],
    ['month', 'armed by the sweep'],
  ])(
    '%s (%s)',
    async (definition) => {
      // Prepare: opened now; the clock then jumps to 3 s before the deadline and runs with real time
      fanin = await FaninUnderTest.start(DEFINITIONS as never);
      let offset = 0;
      const tick = () => {
        fanin.clock.now = Date.now() + offset;
      };
      tick();
      await fanin.sendRequest({ definition, aggregateId: 'p-1', expected: 2 });
      await fanin.drain();
      const due = (await fanin.ctx.store.getHeader('p-1'))?.deadline as number;
      await takeTimers(fanin, 0);
      offset = due - 3_000 - Date.now();
      tick();
      if (definition === 'minute') {
        // The timer armed at open: sent again as it stands 3 s before the deadline (the open's
        // own delay is a minute of real time).
        await fanin.ctx.timers.arm({ kind: 'deadline', aggregateId: 'p-1', dueAt: due }, fanin.clock.now);
      } else {
        await fanin.sweep();
      }

      // Act: the timer handler runs on each timer message as SQS releases it
      let firedAt: number | undefined;
      for (let polls = 0; polls < 20 && firedAt === undefined; polls += 1) {
        for (const message of await takeTimers(fanin, 1)) {
          tick();
          await handleTimer(fanin.ctx, {
            messageId: message.MessageId ?? '',
            body: message.Body ?? '',
            attributes: {},
            receiveCount: 1,
          });
          if ((await fanin.ctx.store.getHeader('p-1'))?.status === 'closed') firedAt = fanin.clock.now;
        }
      }

      // Assess
      expect(firedAt).toBeDefined();
      expect((firedAt as number) - due).toBeGreaterThanOrEqual(0);
      expect((firedAt as number) - due).toBeLessThanOrEqual(2_000);
      expect(await fanin.outputs('timed-out')).toMatchObject([{ aggregateId: 'p-1' }]);
    },
    60_000,
  );
});

async function takeTimers(fanin: FaninUnderTest, waitSeconds: number) {
  const { Messages = [] } = await aws.sqs.send(
    new ReceiveMessageCommand({
      QueueUrl: fanin.provisioned.queueUrls.timer,
      MaxNumberOfMessages: 10,
      WaitTimeSeconds: waitSeconds,
    }),
  );
  return Messages;
}
