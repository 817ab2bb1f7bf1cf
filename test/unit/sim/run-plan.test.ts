import { describe, expect, it } from 'vitest';
import { describeSeed, reportSummary, seedPlanOf } from '../../../sim/run-plan.ts';
import { emptySummary, type SeedResult } from '../../../sim/simulate.ts';

/** `npm run simulate`'s choice of seeds and its report (sim/run.ts's usage). */
describe('the simulation run plan', () => {
  it('runs 100 seeds from a random start by default, printed so it can be replayed', () => {
    const plan = seedPlanOf({}, () => 0.5);
    expect(plan).toMatchObject({ start: 2 ** 31, count: 100, budgetMs: undefined });
    expect([...plan.skipped]).toEqual([]);
  });

  it('takes --seeds and --start as given; a start wraps to 32 bits as seeds are', () => {
    expect(seedPlanOf({ seeds: '400', start: '1' }, () => 0)).toMatchObject({ start: 1, count: 400 });
    expect(seedPlanOf({ start: String(2 ** 32 + 5) }, () => 0).start).toBe(5);
  });

  it('under a budget alone runs seeds until the time is spent; with --seeds as well, at most that many', () => {
    expect(seedPlanOf({ 'budget-seconds': '180' }, () => 0)).toMatchObject({
      budgetMs: 180_000,
      count: Number.POSITIVE_INFINITY,
    });
    expect(seedPlanOf({ 'budget-seconds': '180', seeds: '20' }, () => 0).count).toBe(20);
  });

  it('leaves out the seeds --skip lists (a comma list, empty entries ignored)', () => {
    expect([...seedPlanOf({ skip: '12,,40' }, () => 0).skipped]).toEqual([12, 40]);
  });

  it('describes a failing seed by its first violations, with the invariant and the aggregate', () => {
    // Arrange
    const violations = Array.from({ length: 7 }, (_, i) => ({
      invariant: 'one-terminal-output',
      aggregateId: `agg-${i}`,
      detail: `published twice (${i})`,
    }));
    const result = { seed: 9, violations } as unknown as SeedResult;

    // Act
    const lines = describeSeed(result).split('\n');

    // Assess
    expect(lines[0]).toBe('seed 9: 7 violation(s)');
    expect(lines).toHaveLength(6);
    expect(lines[1]).toBe('  [one-terminal-output] agg-0: published twice (0)');
  });

  it('reports the failing seeds, or none, in the summary', () => {
    // Arrange
    const clean = emptySummary();
    const failing = emptySummary();
    failing.seeds = 2;
    failing.failures.push({ seed: 17 } as SeedResult, { seed: 40 } as SeedResult);

    // Act / Assess
    expect(reportSummary(clean)).toMatch(/invariant failures {2}0$/m);
    expect(reportSummary(failing)).toMatch(/invariant failures {2}2: seeds 17, 40$/m);
    expect(reportSummary(clean)).toMatch(/faults injected {5}none/);
  });
});
