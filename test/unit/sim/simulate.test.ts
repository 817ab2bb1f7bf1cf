import { describe, expect, it } from 'vitest';
import { simulateSeed } from '../../../sim/simulate.ts';

/**
 * The deterministic simulation (docs/simulation.md) as part of `npm test`: a fixed budget of
 * seeds, each a whole deployment of fanin's real handlers over the models under one seeded
 * scheduler, with faults, run to quiescence and checked against every invariant. `.ci/run` runs
 * a larger budget (`npm run simulate`).
 */

/** The seeds every test run checks (a fixed list: the suite must be deterministic). */
const SEEDS = Array.from({ length: 48 }, (_, i) => i + 1);

describe('the deterministic simulation', () => {
  it('is a pure function of its seed: the same seed twice gives the same trace, call for call', async () => {
    const first = await simulateSeed(7, { keepTrace: true });
    const second = await simulateSeed(7, { keepTrace: true });
    expect(first.calls).toBeGreaterThan(20);
    expect(second.trace).toEqual(first.trace);
    expect(second.traceHash).toBe(first.traceHash);
  });

  it('different seeds reach different schedules', async () => {
    const shapes = new Set<string>();
    for (const seed of [1, 2, 3]) shapes.add((await simulateSeed(seed)).shapeHash);
    expect(shapes.size).toBe(3);
  });

  it('keeps every invariant over its fixed seeds, retries, heartbeats, recipient deadlines, notices and failures asked again among them', {
    timeout: 120_000,
  }, async () => {
    const failures: string[] = [];
    const exercised = { retries: 0, heartbeats: 0, timedOut: 0, notices: 0, failedAgain: 0 };
    for (const seed of SEEDS) {
      const result = await simulateSeed(seed);
      for (const v of result.violations) {
        failures.push(`seed ${seed} [${v.invariant}] ${v.aggregateId ?? ''}: ${v.detail.slice(0, 300)}`);
      }
      for (const kind of Object.keys(exercised) as (keyof typeof exercised)[])
        exercised[kind] += result.responders[kind];
    }
    expect(failures).toEqual([]);
    for (const count of Object.values(exercised)) expect(count).toBeGreaterThan(0);
  });
});
