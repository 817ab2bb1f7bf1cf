import { describe, expect, it } from 'vitest';
import { Random } from '../../../sim/random.ts';
import { type CallFate, Scheduler, sdkError } from '../../../sim/scheduler.ts';

/**
 * The scheduler's own rules, each on a few hand-made tasks: a call inside a task waits until the
 * scheduler picks it, a call outside any applies at once; every fate the fault plan can give (a
 * failure before or after the effect, a crash before or after it, a pause) does what it says to
 * the model and to the caller; timers fire in time order; a task's clock carries its skew; and
 * the same seed gives the same trace. The seeds (simulate.test.ts) only see all of this mixed.
 */

const START = Date.UTC(2026, 0, 1);

function scheduler(seed = 1) {
  return new Scheduler({ start: START, random: new Random(seed), keepTrace: true });
}

async function runAll(s: Scheduler, horizon = START + 3_600_000): Promise<void> {
  await s.settle();
  while (await s.step(horizon, () => undefined)) {
    // one decision at a time
  }
}

/** A task that makes `calls` calls, each applying `effect` and recording its answer or error. */
function task(s: Scheduler, name: string, calls: number, effects: string[], seen: string[]) {
  return s.spawn(name, 0, async () => {
    for (let i = 0; i < calls; i += 1) {
      try {
        const answer = await s.intercept('sqs', `Call${i}`, {}, () => {
          effects.push(`${name}.${i}`);
          return `${name}.${i} ok`;
        });
        seen.push(String(answer));
      } catch (error) {
        seen.push(`${name}.${i} ${(error as Error).name}`);
      }
    }
    return 'done';
  });
}

describe('the scheduler', () => {
  it('applies a call made outside any task at once', async () => {
    const s = scheduler();
    let applied = false;
    await expect(
      s.intercept('sqs', 'CreateQueueCommand', {}, () => {
        applied = true;
        return 'url';
      }),
    ).resolves.toBe('url');
    expect(applied).toBe(true);
  });

  it('holds the calls of a task until a step picks them, each after a latency of virtual time', async () => {
    const s = scheduler();
    const effects: string[] = [];
    const seen: string[] = [];
    const t = task(s, 'a', 3, effects, seen);
    await s.settle();
    expect(effects).toEqual([]);
    await runAll(s);
    expect(effects).toEqual(['a.0', 'a.1', 'a.2']);
    expect(seen).toEqual(['a.0 ok', 'a.1 ok', 'a.2 ok']);
    expect(t.done).toBe(true);
    expect(s.now).toBeGreaterThan(START);
    expect(s.counts).toMatchObject({ tasks: 1, calls: 3 });
  });

  it('fails a call before its effect or after it, as the fault plan says, and marks its task faulted', async () => {
    for (const [kind, applied] of [
      ['fail-before', []],
      ['fail-after', ['a.0']],
    ] as const) {
      const s = scheduler();
      s.faults = (call) =>
        call.command === 'Call0' ? ({ kind, error: 'ThrottlingException' } as CallFate) : { kind: 'apply' };
      const effects: string[] = [];
      const seen: string[] = [];
      const t = task(s, 'a', 1, effects, seen);
      await runAll(s);
      expect(effects, kind).toEqual(applied);
      expect(seen, kind).toEqual(['a.0 ThrottlingException']);
      expect(s.faulted.has(t.id)).toBe(true);
    }
  });

  it('crashes a task at a call, before or after its effect: nothing of it runs again and its end says crashed', async () => {
    for (const afterEffect of [false, true]) {
      const s = scheduler();
      s.faults = (call) => (call.command === 'Call1' ? { kind: 'crash', afterEffect } : { kind: 'apply' });
      const effects: string[] = [];
      const seen: string[] = [];
      const ends: string[] = [];
      const t = s.spawn(
        'a',
        0,
        async () => {
          for (let i = 0; i < 3; i += 1) {
            seen.push(String(await s.intercept('sqs', `Call${i}`, {}, () => effects.push(`a.${i}`))));
          }
        },
        (_value, how) => ends.push(how),
      );
      await runAll(s);
      expect(effects).toEqual(afterEffect ? ['a.0', 'a.1'] : ['a.0']);
      expect(seen).toHaveLength(1);
      expect(ends).toEqual(['crashed']);
      expect(t.crashed).toBe(true);
      expect(s.active).toBe(0);
      expect(s.counts.crashes).toBe(1);
    }
  });

  it('pauses a call for the time the plan says, then applies it; a pause within the lease excuses nothing', async () => {
    for (const withinLease of [false, true]) {
      const s = scheduler();
      s.faults = () => ({ kind: 'pause', ms: 600_000, withinLease });
      const effects: string[] = [];
      const t = task(s, 'a', 1, effects, []);
      await runAll(s);
      expect(effects).toEqual(['a.0']);
      expect(s.now - START).toBeGreaterThanOrEqual(600_000);
      expect(s.faulted.has(t.id)).toBe(!withinLease);
    }
  });

  it('never faults a calm task', async () => {
    const s = scheduler();
    s.faults = () => ({ kind: 'fail-before', error: 'InternalServerError' });
    const effects: string[] = [];
    s.spawn('calm', 0, async () => s.intercept('sqs', 'Call0', {}, () => effects.push('x')), undefined, true);
    await runAll(s);
    expect(effects).toEqual(['x']);
  });

  it('fires timers in time order, each at its time, and one set in the past at once', async () => {
    const s = scheduler();
    const fired: string[] = [];
    s.at(START + 5000, () => fired.push(`b@${s.now - START}`));
    s.at(START + 1000, () => fired.push(`a@${s.now - START}`));
    s.at(START - 1000, () => fired.push(`past@${s.now - START}`));
    await runAll(s);
    expect(fired).toEqual(['past@0', 'a@1000', 'b@5000']);
  });

  it('stops at the horizon, leaving later work undone', async () => {
    const s = scheduler();
    const fired: string[] = [];
    s.at(START + 10_000, () => fired.push('late'));
    await runAll(s, START + 5_000);
    expect(fired).toEqual([]);
    expect(await s.step(START + 5_000, () => START + 4_000)).toBe(true);
    expect(s.now).toBe(START + 4_000);
  });

  it("gives a task's code its clock: virtual time plus its skew", async () => {
    const s = scheduler();
    let seen = 0;
    s.spawn('skewed', 250, async () => {
      seen = s.clock() - s.now;
    });
    await s.settle();
    expect(seen).toBe(250);
    expect(s.clock()).toBe(s.now);
  });

  it('interleaves concurrent tasks the same way for the same seed, and another way for another', async () => {
    const order = async (seed: number) => {
      const s = scheduler(seed);
      const effects: string[] = [];
      for (const name of ['a', 'b', 'c']) task(s, name, 4, effects, []);
      await runAll(s);
      return { effects, digest: s.trace.digest().full };
    };
    const first = await order(11);
    expect(await order(11)).toEqual(first);
    const others = await Promise.all([12, 13, 14].map(order));
    expect(others.some((o) => o.effects.join() !== first.effects.join())).toBe(true);
  });
});

describe('sdkError', () => {
  it('is shaped like the SDK: its name, a server fault for a 500 or a timeout, a client one otherwise', () => {
    expect(sdkError('InternalServerError')).toMatchObject({
      name: 'InternalServerError',
      $fault: 'server',
      $metadata: { httpStatusCode: 500 },
    });
    expect(sdkError('TimeoutError')).toMatchObject({ $fault: 'server' });
    expect(sdkError('ThrottlingException', 'slow down')).toMatchObject({
      message: 'slow down',
      $fault: 'client',
      $metadata: { httpStatusCode: 400 },
    });
  });
});
