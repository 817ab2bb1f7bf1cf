import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TimerMessage } from '../../../shared/ports.ts';
import { handleTimer } from '../../../shared/use-cases/timers.ts';
import { InjectedCrash } from '../../support/aws-probe.ts';
import { FaninUnderTest } from '../../support/fanin.ts';

/**
 * The inactivity timeout and periodic snapshots through the real handlers on the emulators,
 * where a timer is lost, delivered twice, late or crashed around, or malformed. What a definition
 * says of them (a deadline that moves with the replies, the absolute deadline, snapshots once per
 * period with the replies so far, none after the close, discard or release on timeout) is pinned
 * by the test kit in test/unit/packages/testing/features/completion-timing.test.ts.
 *
 * Timers are taken from what the system really armed (SQS delay messages, seen by the probe's
 * recorder) and delivered to the timer handler at the test clock's time, so nothing waits for a
 * real delay.
 */
describe('completion timing', () => {
  let fanin: FaninUnderTest;
  let n = 0;

  beforeAll(async () => {
    fanin = await FaninUnderTest.start([
      {
        name: 'idle',
        fanOut: { type: 'none' },
        completion: { strategy: 'all' },
        inactivityTimeoutSeconds: 10,
      },
      {
        name: 'progress',
        fanOut: { type: 'none' },
        completion: { strategy: 'all' },
        timeoutSeconds: 300,
        snapshotIntervalSeconds: 10,
      },
    ]);
  });
  afterAll(() => fanin.stop());

  /** Opens an aggregate of `definition` expecting `expected` replies; returns its id and opening time. */
  async function open(definition: string, expected: number): Promise<{ id: string; openedAt: number }> {
    const id = `${definition}-${++n}`;
    await fanin.sendRequest({ definition, aggregateId: id, expected });
    await fanin.drain();
    const header = await fanin.ctx.store.getHeader(id);
    return { id, openedAt: header?.openedAt ?? Number.NaN };
  }

  /** Records reply `replyId` of aggregate `id` at the test clock's time. */
  async function reply(id: string, replyId: number, body: unknown = { v: replyId }): Promise<void> {
    await fanin.sendReply(body, { 'fanin-aggregate-id': id, 'fanin-reply-id': String(replyId) });
    await fanin.drain();
  }

  /** Timers of one kind the system armed for an aggregate (SQS messages sent to the timer queue), in order. */
  function armed<K extends TimerMessage['kind']>(id: string, kind: K): Extract<TimerMessage, { kind: K }>[] {
    return fanin.probe.sent
      .filter((m) => m.role === 'timer')
      .map((m) => JSON.parse(m.body) as TimerMessage)
      .filter((t): t is Extract<TimerMessage, { kind: K }> => t.aggregateId === id && t.kind === kind);
  }

  /** Delivers a timer message to the timer handler, as the SQS event source would. */
  async function deliver(timer: TimerMessage, receiveCount = 1): Promise<void> {
    await handleTimer(fanin.ctx, {
      messageId: `timer-${timer.kind}-${timer.aggregateId}-${timer.dueAt}`,
      body: JSON.stringify(timer),
      attributes: {},
      receiveCount,
    });
  }

  /** Moves the test clock to `ms` after `openedAt`. */
  function at(openedAt: number, ms: number): void {
    fanin.clock.now = openedAt + ms;
  }

  describe('inactivity timeout', () => {
    it('a timer whose deadline was already moved by another does not arm a second chain', async () => {
      // Prepare: the sweeper moved the deadline (and armed a timer for it) before the timer came
      const { id, openedAt } = await open('idle', 2);
      at(openedAt, 4_000);
      await reply(id, 0);
      at(openedAt, 10_000);
      await fanin.sweep();
      const before = armed(id, 'deadline').length;

      // Act: the original timer arrives late
      await deliver(armed(id, 'deadline')[0] as TimerMessage);

      // Assess (mutant killed: every early timer re-arms, so each move doubles the timers)
      expect(armed(id, 'deadline')).toHaveLength(before);
      expect((await fanin.ctx.store.getHeader(id))?.deadline).toBe(openedAt + 14_000);
    });

    it('a lost timer: the sweeper moves the deadline while replies arrive and times out once they stop', async () => {
      // Prepare
      const { id, openedAt } = await open('idle', 2);
      at(openedAt, 7_000);
      await reply(id, 0);

      // Act 1: the first deadline passes; no timer is delivered, the sweeper runs
      at(openedAt, 11_000);
      await fanin.sweep();

      // Assess 1: still open, its deadline and due entry moved (mutant killed: the sweeper times
      // it out at the first deadline)
      expect((await fanin.ctx.store.getHeader(id))?.status).toBe('open');
      expect((await fanin.ctx.store.getHeader(id))?.deadline).toBe(openedAt + 17_000);
      fanin.expectNoTerminalOutput(id);

      // Act 2: nothing more; the sweeper runs after the moved deadline
      at(openedAt, 17_000);
      await fanin.sweep();

      // Assess 2
      const { output, channel } = fanin.expectExactlyOneTerminalOutput(id);
      expect(channel).toBe('timed-out');
      expect(output).toMatchObject({ counts: { received: 1 }, closedAt: openedAt + 17_000 });
    });

    it('a timer lost between the move and its arming: the moved due entry brings the sweeper', async () => {
      // Prepare
      const { id, openedAt } = await open('idle', 2);
      at(openedAt, 5_000);
      await reply(id, 0);
      at(openedAt, 10_000);
      fanin.probe.crashAt({ name: 'SQS.SendMessage', queueRole: 'timer' }, 'before');

      // Act: the deadline moves, the invocation dies before arming the next timer
      await expect(deliver(armed(id, 'deadline')[0] as TimerMessage)).rejects.toBeInstanceOf(InjectedCrash);
      fanin.probe.disarm();
      at(openedAt, 14_000);
      await fanin.sweep();
      fanin.expectNoTerminalOutput(id);
      at(openedAt, 15_000);
      await fanin.sweep();

      // Assess (mutant killed: the move puts the due entry later than the new deadline, e.g. at the
      // allowed life, so a lost timer leaves the aggregate open until then)
      expect((await fanin.ctx.store.getHeader(id))?.status).toBe('closed');
      const { output } = fanin.expectExactlyOneTerminalOutput(id);
      expect(output).toMatchObject({ closedAt: openedAt + 15_000, counts: { received: 1 } });
    });
  });

  describe('periodic snapshots', () => {
    const snapshots = (id: string) =>
      fanin
        .published('status')
        .filter((p) => p.body.aggregateId === id && p.body.type === 'fanin.aggregate.snapshot');

    it('a snapshot timer delivered twice yields one snapshot for its period and one next timer', async () => {
      // Prepare
      const { id, openedAt } = await open('progress', 2);
      at(openedAt, 10_000);
      const timer = armed(id, 'snapshot')[0] as TimerMessage;

      // Act: SQS delivers the same timer twice
      await deliver(timer);
      await deliver(timer);

      // Assess, below FIFO deduplication (mutant killed: publish without marking the period)
      expect(snapshots(id).map((p) => p.body.id)).toEqual([`${id}/snapshot/1`]);
      expect(armed(id, 'snapshot').map((t) => t.period)).toEqual([1, 2]);
    });

    it('a snapshot timer redelivered after its invocation died before publishing publishes the period once', async () => {
      // Prepare
      const { id, openedAt } = await open('progress', 2);
      await reply(id, 0);
      at(openedAt, 10_000);
      const timer = armed(id, 'snapshot')[0] as TimerMessage;
      fanin.probe.crashAt({ name: 'SQS.SendMessage', queueRole: 'status' }, 'before');

      // Act: the period is marked, the publication crashes; SQS redelivers the timer
      await expect(deliver(timer)).rejects.toBeInstanceOf(InjectedCrash);
      fanin.probe.disarm();
      await deliver(timer, 2);

      // Assess (mutant killed: a marked period is never published again, so a crash loses it)
      expect(snapshots(id).map((p) => [p.body.id, (p.body.counts as { received: number }).received])).toEqual(
        [[`${id}/snapshot/1`, 1]],
      );
      expect(armed(id, 'snapshot').map((t) => t.period)).toEqual([1, 2]);
    });

    it('a snapshot timer without a valid period goes to the error output with the reason', async () => {
      // Act
      await handleTimer(fanin.ctx, {
        messageId: 'bad-snapshot-timer',
        body: JSON.stringify({ kind: 'snapshot', aggregateId: 'progress-x', dueAt: 1, period: 0 }),
        attributes: {},
        receiveCount: 1,
      });

      // Assess (mutant killed: a snapshot timer accepted without checking its period)
      expect(fanin.published('error').map((p) => p.body)).toContainEqual(
        expect.objectContaining({
          id: 'error/timer/bad-snapshot-timer',
          source: 'timer',
          reason: expect.stringContaining('with kind deadline, held or snapshot'),
        }),
      );
    });
  });
});
