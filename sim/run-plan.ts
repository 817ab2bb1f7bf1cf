import { FAULT_KINDS } from './faults.ts';
import type { SeedResult, Summary } from './simulate.ts';

/** The options of `npm run simulate` that choose the seeds (sim/run.ts documents them all). */
export interface SeedOptions {
  readonly seeds?: string | undefined;
  readonly start?: string | undefined;
  readonly 'budget-seconds'?: string | undefined;
  readonly skip?: string | undefined;
}

/** Which seeds a run goes through: from `start`, `count` of them or until the budget is spent, less the skipped. */
export interface SeedPlan {
  readonly start: number;
  readonly budgetMs: number | undefined;
  readonly count: number;
  readonly skipped: ReadonlySet<number>;
}

/**
 * The seeds of a run: `--start` (else a random 32-bit start, printed so it can be replayed),
 * `--seeds` (else unbounded under `--budget-seconds`, else 100) and `--skip` (seeds already known
 * to fail on the unmutated code: sim/find-mutants.ts passes its baseline's). Seeds are 32-bit.
 */
export function seedPlanOf(options: SeedOptions, random: () => number): SeedPlan {
  const start =
    options.start !== undefined ? Number(options.start) >>> 0 : Math.floor(random() * 2 ** 32) >>> 0;
  const budgetMs =
    options['budget-seconds'] !== undefined ? Number(options['budget-seconds']) * 1000 : undefined;
  const count =
    options.seeds !== undefined
      ? Number(options.seeds)
      : budgetMs !== undefined
        ? Number.POSITIVE_INFINITY
        : 100;
  const skipped = new Set(
    (options.skip ?? '')
      .split(',')
      .filter((s) => s !== '')
      .map((s) => Number(s) >>> 0),
  );
  return { start, budgetMs, count, skipped };
}

/** A failing seed's line and its first violations. */
export function describeSeed(result: SeedResult, limit = 5): string {
  const lines = [`seed ${result.seed}: ${result.violations.length} violation(s)`];
  for (const v of result.violations.slice(0, limit)) {
    lines.push(
      `  [${v.invariant}]${v.aggregateId !== undefined ? ` ${v.aggregateId.slice(0, 80)}` : ''}: ${v.detail}`,
    );
  }
  return lines.join('\n');
}

/** The run's summary, as `npm run simulate` prints it. */
export function reportSummary(summary: Summary): string {
  const perSecond = summary.seeds / Math.max(summary.seconds, 0.001);
  const faults = FAULT_KINDS.filter((k) => summary.faults[k] > 0).map((k) => `${k} ${summary.faults[k]}`);
  return [
    `seeds run           ${summary.seeds} in ${summary.seconds.toFixed(1)} s (${perSecond.toFixed(1)} seeds/s, ${(perSecond * 60).toFixed(0)} a minute)`,
    `aggregates          ${summary.aggregates}, AWS calls applied ${summary.calls}`,
    `interleavings       ${summary.traces.size} distinct traces, ${summary.shapes.size} distinct schedule shapes (handler kinds, calls, faults)`,
    `faults injected     ${faults.join(', ') || 'none'}`,
    `responders          ${summary.responders.retries} retries, ${summary.responders.heartbeats} heartbeats, ${summary.responders.timedOut} recipients timed out, ${summary.responders.notices} cancellation notices, ${summary.responders.failedAgain} failed recipients asked again`,
    `invariant failures  ${summary.failures.length}${summary.failures.length > 0 ? `: seeds ${summary.failures.map((f) => f.seed).join(', ')}` : ''}`,
  ].join('\n');
}
