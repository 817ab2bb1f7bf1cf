import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeSweeperHandler } from '../../../functions/handlers.ts';
import { aggregateKey, dueShard } from '../../../shared/adapters/dynamo-state-store.ts';
import { FaninUnderTest } from '../../support/fanin.ts';

/**
 * The sweeper within its invocation's time: a due item whose handling hangs must not hold the
 * items behind it until the Lambda times out (sweep after sweep, since the hung item stays the
 * earliest due), and a sweep with its time nearly spent starts nothing it cannot finish. The hang
 * is a DynamoDB call of the system's held by the probe; the time left is a Lambda context whose
 * clock is real time.
 */
describe('the sweeper within its invocation’s time', () => {
  let fanin: FaninUnderTest;

  beforeAll(async () => {
    fanin = await FaninUnderTest.start([
      { name: 'swept', fanOut: { type: 'none' }, completion: { strategy: 'all' }, timeoutSeconds: 60 },
    ]);
  });
  afterAll(() => fanin.stop());

  /** Opens `first`, then an aggregate of the same `due` shard a second later; both past their deadline. */
  const twoDueInOneShard = async (first: string): Promise<string> => {
    let second = '';
    for (let i = 0; second === ''; i += 1) {
      const candidate = `${first.split('-')[0]}-behind-${i}`;
      if (dueShard(aggregateKey(candidate)) === dueShard(aggregateKey(first))) second = candidate;
    }
    await fanin.sendRequest({ definition: 'swept', aggregateId: first, expected: 1 });
    await fanin.drain();
    fanin.clock.advance(1_000);
    await fanin.sendRequest({ definition: 'swept', aggregateId: second, expected: 1 });
    await fanin.drain();
    fanin.clock.advance(120_000);
    return second;
  };
  /** A Lambda context with `ms` left from now, on the real clock. */
  const invocationWith = (ms: number) => {
    const end = Date.now() + ms;
    return { getRemainingTimeInMillis: () => end - Date.now() };
  };
  const headerDueAt = async (aggregateId: string) =>
    (await fanin.scanState()).find((i) => i.pk === `A#${aggregateId}` && i.sk === 'H')?.dueAt;

  it('gives up on a due item that hangs, defers it, and handles the items behind it within the invocation', async () => {
    // Prepare: the hanging item is the earliest of its shard; its first call never answers
    const hung = 'hung-item';
    const behind = await twoDueInOneShard(hung);
    const wasDue = await headerDueAt(hung);
    const pause = fanin.probe.pauseAt({ touches: hung });
    try {
      // Act: one sweep in an invocation with 8 s left
      const sweeper = makeSweeperHandler(() => fanin.ctx);
      const outcome = await Promise.race([
        sweeper(undefined, invocationWith(8_000)).then(
          () => 'returned',
          () => 'threw',
        ),
        new Promise((resolve) => setTimeout(() => resolve('still running after 9 s'), 9_000)),
      ]);
      await fanin.drain();

      // Assess (mutant killed: a sweep that awaits each item however long it takes — it is still
      // waiting on the hung item past the invocation's end, and the item behind it never ends):
      // the sweep ended within the invocation, counting the hung item as failed; the item behind
      // it has its result; the hung one was moved back in the index, with an alarm
      expect(outcome).toBe('threw');
      fanin.expectExactlyOneTerminalOutput(behind);
      fanin.expectNoTerminalOutput(hung);
      expect(await headerDueAt(hung)).toBe(fanin.clock.now + 60_000);
      expect(await headerDueAt(hung)).not.toBe(wasDue);
      expect(fanin.alarms('due-item-failed').some((l) => l.fields.aggregateId === hung)).toBe(true);
    } finally {
      pause.release();
    }
  });

  it('lets a slow due item it gave up on finish before the invocation ends, after the items behind it', async () => {
    // Prepare: the earliest item's first call takes 6 s, more than its budget (5 s of 12 s less the margin, halved)
    const slow = 'slow-item';
    const behind = await twoDueInOneShard(slow);
    const pause = fanin.probe.pauseAt({ touches: slow });
    void pause.reached.then(() => setTimeout(() => pause.release(), 6_000));
    const sweeper = makeSweeperHandler(() => fanin.ctx);

    // Act
    await sweeper(undefined, invocationWith(12_000)).catch(() => undefined);

    // Assess (mutant killed: a sweep that returns as soon as its loop ends, leaving the item it gave
    // up on to a frozen invocation): when the sweep returns both have their result, the slow one
    // too, and the slow one was deferred meanwhile (its alarm)
    fanin.expectExactlyOneTerminalOutput(behind);
    fanin.expectExactlyOneTerminalOutput(slow);
    expect(fanin.alarms('due-item-failed').some((l) => l.fields.aggregateId === slow)).toBe(true);
  });

  it('starts no due item once its invocation’s time is nearly spent, and leaves them all to the next sweep', async () => {
    // Prepare: two aggregates past their deadline
    const first = 'late-sweep';
    const second = await twoDueInOneShard(first);
    const sweeper = makeSweeperHandler(() => fanin.ctx);

    // Act: a sweep with 1.5 s left (less than the margin it keeps), then one with time
    const starved = await sweeper(undefined, invocationWith(1_500));
    await fanin.drain();

    // Assess (mutant killed: a sweep that starts items whatever the time left, which on AWS is cut
    // off in the middle of one): nothing was examined, nothing ended; the next sweep ends both
    expect(starved).toEqual({ examined: 0 });
    fanin.expectNoTerminalOutput(first);
    fanin.expectNoTerminalOutput(second);
    await sweeper(undefined, invocationWith(30_000));
    await fanin.drain();
    fanin.expectExactlyOneTerminalOutput(first);
    fanin.expectExactlyOneTerminalOutput(second);
  });
});
