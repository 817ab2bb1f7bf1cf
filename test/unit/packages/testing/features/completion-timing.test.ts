import { describe, expect, it } from 'vitest';
import {
  DEFAULT_START,
  type DefinitionInput,
  type FaninSimulation,
  simulate,
} from '../../../../../packages/testing/src/index.ts';
import { noResult, oneResult } from './one-result.ts';

/**
 * The inactivity timeout (a deadline that moves with the replies, lazily: no reply writes the
 * header), periodic snapshots to the status output, and discarding or releasing a timed-out
 * aggregate's partial result, by the kit: the timers the handlers arm are SQS delay messages of
 * the model, delivered at their moment by `advance`. What needs a timer lost, delivered twice or
 * crashed around stays in test/integration/features/completion-timing.test.ts.
 */

const none = { type: 'none' } as const;
const definitions: Record<string, DefinitionInput> = {
  idle: { name: 'idle', fanOut: none, completion: { strategy: 'all' }, inactivityTimeoutSeconds: 10 },
  'idle-bounded': {
    name: 'idle-bounded',
    fanOut: none,
    completion: { strategy: 'all' },
    timeoutSeconds: 20,
    inactivityTimeoutSeconds: 10,
  },
  progress: {
    name: 'progress',
    fanOut: none,
    completion: { strategy: 'all' },
    timeoutSeconds: 300,
    snapshotIntervalSeconds: 10,
  },
  'progress-tolerant': {
    name: 'progress-tolerant',
    fanOut: none,
    completion: { strategy: 'all' },
    timeoutSeconds: 300,
    snapshotIntervalSeconds: 10,
    toleratedFailureCount: 1,
  },
  discarding: {
    name: 'discarding',
    fanOut: none,
    completion: { strategy: 'all' },
    timeoutSeconds: 5,
    onTimeout: 'discard',
  },
  releasing: { name: 'releasing', fanOut: none, completion: { strategy: 'all' }, timeoutSeconds: 5 },
  // Going once, going twice: the auction closes 5 s after the last bid.
  'lively-auction': {
    name: 'lively-auction',
    mode: 'self-starting',
    correlation: { source: 'path', path: '$.auctionId' },
    replyId: { source: 'path', path: '$.bidId' },
    completion: { strategy: 'timeout' },
    aggregation: { algorithm: 'best', criteria: [{ path: '$.price', order: 'max' }] },
    inactivityTimeoutSeconds: 5,
    snapshotIntervalSeconds: 10,
  },
};

/** A simulation of one definition with an aggregate `<name>-1` opened at the start, expecting `expected`. */
async function open(name: string, expected: number): Promise<{ run: FaninSimulation; id: string }> {
  const run = simulate(definitions[name] as DefinitionInput);
  const id = `${name}-1`;
  await run.request({ aggregateId: id, expected });
  return { run, id };
}

/** Moves the clock to `ms` after the start (where every aggregate here opens). */
const at = (run: FaninSimulation, ms: number) => run.advanceTo(DEFAULT_START + ms);

/** The aggregate's header as stored in the table model. */
function header(run: FaninSimulation, id: string): Record<string, unknown> | undefined {
  return run.models.dynamodb.items(run.topology.tableName).find((i) => i.pk === `A#${id}` && i.sk === 'H');
}

/** The timers of one kind armed for an aggregate and not delivered yet (delayed messages of the timer queue). */
function pending(run: FaninSimulation, id: string, kind: string): Record<string, number>[] {
  return run.models.sqs
    .messages(run.config.queueUrls.timer)
    .map((m) => JSON.parse(m.body) as { kind: string; aggregateId: string; dueAt: number; period?: number })
    .filter((t) => t.aggregateId === id && t.kind === kind)
    .map(({ dueAt, period }) => ({
      due: dueAt - DEFAULT_START,
      ...(period !== undefined ? { period } : {}),
    }));
}

const snapshots = (run: FaninSimulation, id: string) =>
  run
    .publications('status')
    .filter((p) => p.body.aggregateId === id && p.body.type === 'fanin.aggregate.snapshot');

describe('completion timing (kit)', () => {
  describe('inactivity timeout', () => {
    it('stays open while replies keep arriving, and times out once they stop', async () => {
      // Prepare
      const { run, id } = await open('idle', 3);
      expect(pending(run, id, 'deadline')).toEqual([{ due: 10_000 }]);
      await at(run, 6_000);
      await run.reply({ replyId: '0' }, { v: 0 });

      // Act 1: the first deadline comes, a reply came 4 s before it
      await at(run, 10_000);

      // Assess 1: the deadline moved to 10 s after that reply, and a timer is armed for it
      // (mutant killed: time out at the first deadline whatever arrived)
      expect(header(run, id)).toMatchObject({ status: 'open', deadline: DEFAULT_START + 16_000 });
      expect(pending(run, id, 'deadline')).toEqual([{ due: 16_000 }]);

      // Act 2: another reply, then the moved deadline comes
      await at(run, 15_000);
      await run.reply({ replyId: '1' }, { v: 1 });
      await at(run, 16_000);
      expect(header(run, id)).toMatchObject({ status: 'open', deadline: DEFAULT_START + 25_000 });

      // Act 3: nothing more arrives
      await at(run, 24_999);
      noResult(run, id);
      await at(run, 25_000);

      // Assess 3: timed out with what arrived, the missing reply listed, exactly once
      const { output, channel } = oneResult(run, id);
      expect(channel).toBe('timed-out');
      expect(output).toMatchObject({
        outcome: 'timed-out',
        counts: { expected: 3, received: 2 },
        closedAt: DEFAULT_START + 25_000,
        missing: [{ replyId: '2' }],
      });
    });

    it('with an absolute deadline too, the absolute deadline wins when it comes first', async () => {
      // Prepare: replies every 8 s keep the inactivity timeout from ever firing
      const { run, id } = await open('idle-bounded', 3);
      await at(run, 8_000);
      await run.reply({ replyId: '0' }, { v: 0 });
      await at(run, 16_000);
      await run.reply({ replyId: '1' }, { v: 1 });

      // Act: the moved deadline (18 s) comes; 16 s + 10 s would be 26 s, past the absolute 20 s
      await at(run, 18_000);
      const moved = header(run, id)?.deadline;
      await at(run, 20_000);

      // Assess (mutant killed: the absolute deadline left out of the move)
      expect(moved).toBe(DEFAULT_START + 20_000);
      const { output, channel } = oneResult(run, id);
      expect(channel).toBe('timed-out');
      expect(output).toMatchObject({ counts: { received: 2 }, closedAt: DEFAULT_START + 20_000 });
    });
  });

  it('a self-starting auction closes once the bids stop, completed with the best bid', async () => {
    // Prepare: the first bid opens the auction and arms its deadline and first snapshot timers
    const run = simulate(definitions['lively-auction'] as DefinitionInput);
    const id = 'lively-auction:lot-1';
    const bid = (bidId: string, price: number) =>
      run.send({ auctionId: 'lot-1', bidId, price }, { 'fanin-definition': 'lively-auction' });
    await bid('b1', 10);
    expect(pending(run, id, 'deadline')).toEqual([{ due: 5_000 }]);
    expect(pending(run, id, 'snapshot')).toEqual([{ due: 10_000, period: 1 }]);
    await at(run, 4_000);
    await bid('b2', 12);

    // Act: the first deadline moves to 5 s after the second bid; nothing comes after that
    await at(run, 8_999);
    noResult(run, id);
    await at(run, 10_000);

    // Assess: strategy 'timeout' completes with what arrived; the closed auction takes no snapshot
    const { output, channel } = oneResult(run, id);
    expect(channel).toBe('completed');
    expect(output).toMatchObject({
      closedAt: DEFAULT_START + 9_000,
      result: { replyId: 'b2', body: { price: 12 } },
    });
    expect(run.records.timer).toBeGreaterThanOrEqual(3);
    expect(run.publications('status').filter((p) => p.body.aggregateId === id)).toEqual([]);
  });

  describe('periodic snapshots', () => {
    it('reach the status output once per period with the replies so far, and the aggregate stays open', async () => {
      // Prepare
      const { run, id } = await open('progress', 3);
      await at(run, 2_000);
      await run.reply({ replyId: '0' }, { bid: 10 });

      // Act
      await at(run, 10_000);
      await at(run, 12_000);
      await run.reply({ replyId: '1' }, { bid: 12 });
      await at(run, 20_000);

      // Assess
      expect(pending(run, id, 'snapshot')).toEqual([{ due: 30_000, period: 3 }]);
      expect(snapshots(run, id).map((p) => p.body)).toMatchObject([
        {
          id: `${id}/snapshot/1`,
          period: 1,
          asOf: DEFAULT_START + 10_000,
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
      expect(snapshots(run, id)).toHaveLength(2);
      expect(header(run, id)?.status).toBe('open');
      noResult(run, id);
    });

    it('list failed replies beside the result so far, never in it', async () => {
      // Kills the mutant "snapshots pass failed replies to the algorithm as successes" (the
      // failure's body showed in the snapshot's result as if the responder had answered).
      // Prepare
      const { run, id } = await open('progress-tolerant', 3);
      await at(run, 2_000);
      await run.reply({ replyId: '0' }, { bid: 10 });
      await run.fail({ replyId: '1' }, 'bank down', { error: 'no quote today' });

      // Act
      await at(run, 10_000);

      // Assess
      expect(snapshots(run, id).map((p) => p.body)).toMatchObject([
        {
          id: `${id}/snapshot/1`,
          counts: { expected: 3, received: 2, failed: 1 },
          result: [{ replyId: '0', body: { bid: 10 } }],
          failures: [{ replyId: '1', error: 'bank down', body: { error: 'no quote today' } }],
          missing: [{ replyId: '2' }],
        },
      ]);
      expect(snapshots(run, id)[0]?.body.result).toHaveLength(1);
      expect(header(run, id)?.status).toBe('open');
    });

    it('no snapshot once the aggregate is closed, and no further timer', async () => {
      // Prepare: all replies in, the aggregate completes before its first snapshot is due
      const { run, id } = await open('progress', 2);
      await run.reply({ replyId: '0' }, { v: 0 });
      await run.reply({ replyId: '1' }, { v: 1 });
      oneResult(run, id);
      expect(pending(run, id, 'snapshot')).toEqual([{ due: 10_000, period: 1 }]);

      // Act: the snapshot timer comes
      await at(run, 10_000);

      // Assess (mutant killed: the status looked at neither before the mark nor in its condition;
      // each of the two checks alone keeps this test green, the mark's condition covers the race)
      expect(snapshots(run, id)).toEqual([]);
      expect(pending(run, id, 'snapshot')).toEqual([]);
    });
  });

  describe('on timeout: discard or release', () => {
    it('discard publishes the outcome, counts and missing list without the partial result', async () => {
      // Prepare
      const { run, id } = await open('discarding', 2);
      await run.reply({ replyId: '0' }, { secret: 'partial' });

      // Act
      await at(run, 5_000);

      // Assess (mutant killed: onTimeout ignored)
      const { output, channel } = oneResult(run, id);
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
      const { run, id } = await open('releasing', 2);
      await run.reply({ replyId: '0' }, { secret: 'partial' });

      // Act
      await at(run, 5_000);

      // Assess
      const { output, channel } = oneResult(run, id);
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
