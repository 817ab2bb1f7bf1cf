import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TimerMessage } from '../../../shared/ports.ts';
import { handleTimer } from '../../../shared/use-cases/timers.ts';
import { InjectedCrash } from '../../support/aws-probe.ts';
import { FaninUnderTest } from '../../support/fanin.ts';

/**
 * Issue 14, part B, through the real handlers on the emulators: the inactivity timeout (a
 * deadline that moves with the replies, lazily: no reply writes the header), periodic snapshots
 * to the status output, and discarding a timed-out aggregate's partial result.
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
        name: 'idle-bounded',
        fanOut: { type: 'none' },
        completion: { strategy: 'all' },
        timeoutSeconds: 20,
        inactivityTimeoutSeconds: 10,
      },
      {
        name: 'progress',
        fanOut: { type: 'none' },
        completion: { strategy: 'all' },
        timeoutSeconds: 300,
        snapshotIntervalSeconds: 10,
      },
      {
        name: 'discarding',
        fanOut: { type: 'none' },
        completion: { strategy: 'all' },
        timeoutSeconds: 5,
        onTimeout: 'discard',
      },
      {
        // Going once, going twice: the auction closes 5 s after the last bid.
        name: 'lively-auction',
        mode: 'self-starting',
        correlation: { source: 'path', path: '$.auctionId' },
        replyId: { source: 'path', path: '$.bidId' },
        completion: { strategy: 'timeout' },
        aggregation: { algorithm: 'best', criteria: [{ path: '$.price', order: 'max' }] },
        inactivityTimeoutSeconds: 5,
        snapshotIntervalSeconds: 10,
      },
      {
        name: 'progress-tolerant',
        fanOut: { type: 'none' },
        completion: { strategy: 'all' },
        timeoutSeconds: 300,
        snapshotIntervalSeconds: 10,
        toleratedFailureCount: 1,
      },
      {
        name: 'releasing',
        fanOut: { type: 'none' },
        completion: { strategy: 'all' },
        timeoutSeconds: 5,
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
    it('stays open while replies keep arriving, and times out once they stop', async () => {
      // Prepare
      const { id, openedAt } = await open('idle', 3);
      expect(armed(id, 'deadline').map((t) => t.dueAt)).toEqual([openedAt + 10_000]);
      at(openedAt, 6_000);
      await reply(id, 0);

      // Act 1: the first deadline comes, a reply came 4 s before it
      at(openedAt, 10_000);
      await deliver(armed(id, 'deadline')[0] as TimerMessage);

      // Assess 1: the deadline moved to 10 s after that reply, and a timer is armed for it
      // (mutant killed: time out at the first deadline whatever arrived)
      expect((await fanin.ctx.store.getHeader(id))?.status).toBe('open');
      expect((await fanin.ctx.store.getHeader(id))?.deadline).toBe(openedAt + 16_000);
      expect(armed(id, 'deadline').map((t) => t.dueAt)).toEqual([openedAt + 10_000, openedAt + 16_000]);

      // Act 2: another reply, then the moved deadline comes
      at(openedAt, 15_000);
      await reply(id, 1);
      at(openedAt, 16_000);
      await deliver(armed(id, 'deadline')[1] as TimerMessage);
      expect((await fanin.ctx.store.getHeader(id))?.deadline).toBe(openedAt + 25_000);

      // Act 3: nothing more arrives
      at(openedAt, 25_000);
      await deliver(armed(id, 'deadline')[2] as TimerMessage);

      // Assess 3: timed out with what arrived, the missing reply listed, exactly once
      const { output, channel } = fanin.expectExactlyOneTerminalOutput(id);
      expect(channel).toBe('timed-out');
      expect(output).toMatchObject({
        outcome: 'timed-out',
        counts: { expected: 3, received: 2 },
        closedAt: openedAt + 25_000,
        missing: [{ replyId: '2' }],
      });
    });

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

    it('with an absolute deadline too, the absolute deadline wins when it comes first', async () => {
      // Prepare: replies every 8 s keep the inactivity timeout from ever firing
      const { id, openedAt } = await open('idle-bounded', 3);
      at(openedAt, 8_000);
      await reply(id, 0);
      at(openedAt, 10_000);
      await deliver(armed(id, 'deadline')[0] as TimerMessage);
      at(openedAt, 16_000);
      await reply(id, 1);

      // Act: the moved deadline (18 s) comes; 16 s + 10 s would be 26 s, past the absolute 20 s
      at(openedAt, 18_000);
      await deliver(armed(id, 'deadline')[1] as TimerMessage);
      const moved = (await fanin.ctx.store.getHeader(id))?.deadline;
      at(openedAt, 20_000);
      await deliver(armed(id, 'deadline')[2] as TimerMessage);

      // Assess (mutant killed: the absolute deadline left out of the move)
      expect(moved).toBe(openedAt + 20_000);
      const { output, channel } = fanin.expectExactlyOneTerminalOutput(id);
      expect(channel).toBe('timed-out');
      expect(output).toMatchObject({ counts: { received: 2 }, closedAt: openedAt + 20_000 });
    });
  });

  it('a self-starting auction closes once the bids stop, completed with the best bid', async () => {
    // Prepare: the first bid opens the auction and arms its deadline and first snapshot timers
    const key = `lot-${++n}`;
    const id = `lively-auction:${key}`;
    const bid = (bidId: string, price: number) =>
      fanin
        .sendReply({ auctionId: key, bidId, price }, { 'fanin-definition': 'lively-auction' })
        .then(() => fanin.drain());
    await bid('b1', 10);
    const openedAt = (await fanin.ctx.store.getHeader(id))?.openedAt ?? Number.NaN;
    expect(armed(id, 'deadline').map((t) => t.dueAt - openedAt)).toEqual([5_000]);
    expect(armed(id, 'snapshot').map((t) => [t.period, t.dueAt - openedAt])).toEqual([[1, 10_000]]);
    at(openedAt, 4_000);
    await bid('b2', 12);

    // Act: the first deadline moves to 5 s after the second bid; nothing comes after that
    at(openedAt, 5_000);
    await deliver(armed(id, 'deadline')[0] as TimerMessage);
    at(openedAt, 9_000);
    await deliver(armed(id, 'deadline')[1] as TimerMessage);
    at(openedAt, 10_000);
    await deliver(armed(id, 'snapshot')[0] as TimerMessage);

    // Assess: strategy 'timeout' completes with what arrived; the closed auction takes no snapshot
    const { output, channel } = fanin.expectExactlyOneTerminalOutput(id);
    expect(channel).toBe('completed');
    expect(output).toMatchObject({
      closedAt: openedAt + 9_000,
      result: { replyId: 'b2', body: { price: 12 } },
    });
    expect(fanin.published('status').filter((p) => p.body.aggregateId === id)).toEqual([]);
  });

  describe('periodic snapshots', () => {
    const snapshots = (id: string) =>
      fanin
        .published('status')
        .filter((p) => p.body.aggregateId === id && p.body.type === 'fanin.aggregate.snapshot');

    it('reach the status output once per period with the replies so far, and the aggregate stays open', async () => {
      // Prepare
      const { id, openedAt } = await open('progress', 3);
      at(openedAt, 2_000);
      await reply(id, 0, { bid: 10 });

      // Act
      at(openedAt, 10_000);
      await deliver(armed(id, 'snapshot')[0] as TimerMessage);
      at(openedAt, 12_000);
      await reply(id, 1, { bid: 12 });
      at(openedAt, 20_000);
      await deliver(armed(id, 'snapshot')[1] as TimerMessage);

      // Assess
      expect(armed(id, 'snapshot').map((t) => [t.period, t.dueAt - openedAt])).toEqual([
        [1, 10_000],
        [2, 20_000],
        [3, 30_000],
      ]);
      expect(snapshots(id).map((p) => p.body)).toMatchObject([
        {
          id: `${id}/snapshot/1`,
          period: 1,
          asOf: openedAt + 10_000,
          counts: { expected: 3, received: 1 },
          result: [{ replyId: '0', body: { bid: 10 } }],
          missing: [{ replyId: '1' }, { replyId: '2' }],
        },
        {
          id: `${id}/snapshot/2`,
          period: 2,
          counts: { expected: 3, received: 2 },
          result: [
            { replyId: '0', body: { bid: 10 } },
            { replyId: '1', body: { bid: 12 } },
          ],
        },
      ]);
      expect((await fanin.ctx.store.getHeader(id))?.status).toBe('open');
      fanin.expectNoTerminalOutput(id);
    });

    it('list failed replies beside the result so far, never in it', async () => {
      // Kills the mutant "snapshots pass failed replies to the algorithm as successes" (the
      // failure's body showed in the snapshot's result as if the responder had answered).
      // Prepare
      const { id, openedAt } = await open('progress-tolerant', 3);
      at(openedAt, 2_000);
      await reply(id, 0, { bid: 10 });
      await fanin.sendReply(
        { error: 'no quote today' },
        { 'fanin-aggregate-id': id, 'fanin-reply-id': '1', 'fanin-failure': 'bank down' },
      );
      await fanin.drain();

      // Act
      at(openedAt, 10_000);
      await deliver(armed(id, 'snapshot')[0] as TimerMessage);

      // Assess
      expect(snapshots(id).map((p) => p.body)).toMatchObject([
        {
          id: `${id}/snapshot/1`,
          counts: { expected: 3, received: 2, failed: 1 },
          result: [{ replyId: '0', body: { bid: 10 } }],
          failures: [{ replyId: '1', error: 'bank down', body: { error: 'no quote today' } }],
          missing: [{ replyId: '2' }],
        },
      ]);
      expect((await fanin.ctx.store.getHeader(id))?.status).toBe('open');
    });

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

    it('no snapshot once the aggregate is closed, and no further timer', async () => {
      // Prepare: all replies in, the aggregate completes before its first snapshot is due
      const { id, openedAt } = await open('progress', 2);
      await reply(id, 0);
      await reply(id, 1);
      fanin.expectExactlyOneTerminalOutput(id);

      // Act
      at(openedAt, 10_000);
      await deliver(armed(id, 'snapshot')[0] as TimerMessage);

      // Assess (mutant killed: the status looked at neither before the mark nor in its condition;
      // each of the two checks alone keeps this test green, the mark's condition covers the race)
      expect(snapshots(id)).toEqual([]);
      expect(armed(id, 'snapshot')).toHaveLength(1);
    });
  });

  describe('on timeout: discard or release', () => {
    it('discard publishes the outcome, counts and missing list without the partial result', async () => {
      // Prepare
      const { id, openedAt } = await open('discarding', 2);
      await reply(id, 0, { secret: 'partial' });

      // Act
      at(openedAt, 5_000);
      await fanin.sweep();

      // Assess (mutant killed: onTimeout ignored)
      const { output, channel } = fanin.expectExactlyOneTerminalOutput(id);
      expect(channel).toBe('timed-out');
      expect(output).toMatchObject({
        outcome: 'timed-out',
        result: null,
        discarded: true,
        counts: { expected: 2, received: 1 },
        missing: [{ replyId: '1' }],
      });
      expect(JSON.stringify(output)).not.toContain('partial');
    });

    it('release (the default) publishes the partial result', async () => {
      // Prepare
      const { id, openedAt } = await open('releasing', 2);
      await reply(id, 0, { secret: 'partial' });

      // Act
      at(openedAt, 5_000);
      await fanin.sweep();

      // Assess
      const { output, channel } = fanin.expectExactlyOneTerminalOutput(id);
      expect(channel).toBe('timed-out');
      expect(output).toMatchObject({
        outcome: 'timed-out',
        result: [{ replyId: '0', body: { secret: 'partial' } }],
        missing: [{ replyId: '1' }],
      });
      expect(output).not.toHaveProperty('discarded');
    });
  });
});
