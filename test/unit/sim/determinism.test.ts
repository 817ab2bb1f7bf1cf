import crypto from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { neutralise } from '../../../sim/determinism.ts';
import { Random } from '../../../sim/random.ts';
import { Scheduler } from '../../../sim/scheduler.ts';

/**
 * The clock, chance and timers fanin reads without being handed them: inside a scheduler task
 * they are virtual (time plus the task's skew, the seed, the scheduler's timers), outside the
 * real ones, and all restored afterwards. The seeds rely on it; this shows each swap and its undo.
 */

const START = Date.UTC(2026, 0, 1);
const RealDate = Date;
const realRandom = Math.random;
const realUuid = crypto.randomUUID;
const realSetTimeout = globalThis.setTimeout;
let restore: (() => void) | undefined;

afterEach(() => {
  restore?.();
  restore = undefined;
});

describe('neutralise', () => {
  it('gives a task virtual time with its skew, seeded chance and UUIDs, and the outside the real ones', async () => {
    const scheduler = new Scheduler({ start: START, random: new Random(1) });
    restore = neutralise(scheduler);
    const seen: Record<string, unknown> = {};
    scheduler.spawn('t', 300, async () => {
      seen.now = Date.now();
      seen.date = new Date().toISOString();
      seen.explicit = new Date(5).getTime();
      seen.random = Math.random();
      seen.uuid = crypto.randomUUID();
    });
    await scheduler.settle();
    expect(seen.now).toBe(START + 300);
    expect(seen.date).toBe(new RealDate(START + 300).toISOString());
    expect(seen.explicit).toBe(5);
    const replay = new Random(1);
    expect(seen.random).toBe(replay.next());
    expect(seen.uuid).toBe(replay.uuid());
    expect(Math.abs(Date.now() - RealDate.now())).toBeLessThan(60_000);
  });

  it('runs a task’s setTimeout on the scheduler’s virtual time, and clearTimeout cancels it', async () => {
    const scheduler = new Scheduler({ start: START, random: new Random(1) });
    restore = neutralise(scheduler);
    const fired: number[] = [];
    scheduler.spawn('t', 0, async () => {
      setTimeout(() => fired.push(scheduler.now - START), 10_000);
      const cancelled = setTimeout(() => fired.push(-1), 5_000);
      clearTimeout(cancelled);
    });
    await scheduler.settle();
    while (await scheduler.step(START + 60_000, () => undefined)) {
      // until the timers are spent
    }
    expect(fired).toEqual([10_000]);
  });

  it('restores every real source', () => {
    const scheduler = new Scheduler({ start: START, random: new Random(1) });
    neutralise(scheduler)();
    expect(globalThis.Date).toBe(RealDate);
    expect(Math.random).toBe(realRandom);
    expect(crypto.randomUUID).toBe(realUuid);
    expect(globalThis.setTimeout).toBe(realSetTimeout);
  });
});
