import { parseArgs } from 'node:util';
import { FAULT_KINDS } from './faults.ts';
import { add, emptySummary, type SeedResult, type Summary, simulateSeed } from './simulate.ts';

/**
 * `npm run simulate`: runs seeds of the deterministic simulation and reports what they found.
 *
 *   npm run simulate -- --seeds 200 [--start 17]    200 seeds from 17 (default: a random start, printed)
 *   npm run simulate -- --budget-seconds 180        seeds until three minutes are spent
 *   npm run simulate -- --seed 1234                 replays one seed and prints its schedule
 *   npm run simulate -- --seeds 5000 --find         stops at the first failing seed
 *   npm run simulate -- --seed 1234 --show order-7                       ... and every output that names order-7
 *   --skip 12,40                                    leaves those seeds out (known failures)
 *   --big                                           lets runs draw the rare huge aggregates more often
 *   --pending                                       also checks the pending invariants (invariants.ts)
 *
 * Exits 1 when any seed broke an invariant.
 */
const { values } = parseArgs({
  options: {
    seeds: { type: 'string' },
    start: { type: 'string' },
    seed: { type: 'string' },
    'budget-seconds': { type: 'string' },
    find: { type: 'boolean', default: false },
    big: { type: 'boolean', default: false },
    pending: { type: 'boolean', default: false },
    quiet: { type: 'boolean', default: false },
    json: { type: 'boolean', default: false },
    show: { type: 'string' },
    skip: { type: 'string' },
  },
});

function describe(result: SeedResult, limit = 5): string {
  const lines = [`seed ${result.seed}: ${result.violations.length} violation(s)`];
  for (const v of result.violations.slice(0, limit)) {
    lines.push(
      `  [${v.invariant}]${v.aggregateId !== undefined ? ` ${v.aggregateId.slice(0, 80)}` : ''}: ${v.detail}`,
    );
  }
  return lines.join('\n');
}

function report(summary: Summary): string {
  const perSecond = summary.seeds / Math.max(summary.seconds, 0.001);
  const faults = FAULT_KINDS.filter((k) => summary.faults[k] > 0).map((k) => `${k} ${summary.faults[k]}`);
  return [
    `seeds run           ${summary.seeds} in ${summary.seconds.toFixed(1)} s (${perSecond.toFixed(1)} seeds/s, ${(perSecond * 60).toFixed(0)} a minute)`,
    `aggregates          ${summary.aggregates}, AWS calls applied ${summary.calls}`,
    `interleavings       ${summary.traces.size} distinct traces, ${summary.shapes.size} distinct schedule shapes (handler kinds, calls, faults)`,
    `faults injected     ${faults.join(', ') || 'none'}`,
    `invariant failures  ${summary.failures.length}${summary.failures.length > 0 ? `: seeds ${summary.failures.map((f) => f.seed).join(', ')}` : ''}`,
  ].join('\n');
}

async function main(): Promise<number> {
  const big = values.big ?? false;
  const pending = values.pending ?? false;
  if (values.seed !== undefined) {
    const seed = Number(values.seed) >>> 0;
    const result = await simulateSeed(seed, { keepTrace: true, big, pending });
    for (const line of result.trace ?? []) console.log(line);
    const show = values.show;
    if (show !== undefined) {
      console.log(`\noutputs naming ${show}:`);
      for (const p of result.publications ?? [])
        if (p.text.includes(show)) console.log(`t=${p.at} ${p.channel}: ${p.text.slice(0, 2000)}`);
    }
    console.log(
      `\ntrace ${result.traceHash} (${result.steps} steps, ${result.calls} calls, ${result.tasks} invocations)`,
    );
    console.log(
      `faults: ${
        FAULT_KINDS.filter((k) => result.faults[k] > 0)
          .map((k) => `${k} ${result.faults[k]}`)
          .join(', ') || 'none'
      }`,
    );
    console.log(result.violations.length === 0 ? `seed ${seed}: every invariant held` : describe(result, 50));
    return result.violations.length === 0 ? 0 : 1;
  }
  const start =
    values.start !== undefined ? Number(values.start) >>> 0 : Math.floor(Math.random() * 2 ** 32) >>> 0;
  const budgetMs =
    values['budget-seconds'] !== undefined ? Number(values['budget-seconds']) * 1000 : undefined;
  const count =
    values.seeds !== undefined
      ? Number(values.seeds)
      : budgetMs !== undefined
        ? Number.POSITIVE_INFINITY
        : 100;
  console.log(
    `start seed ${start}${budgetMs !== undefined ? `, budget ${budgetMs / 1000} s` : ''}${Number.isFinite(count) ? `, ${count} seeds` : ''}`,
  );
  // Seeds already known to fail on the unmutated code (sim/find-mutants.ts passes its baseline's).
  const skipped = new Set(
    (values.skip ?? '')
      .split(',')
      .filter((s) => s !== '')
      .map((s) => Number(s) >>> 0),
  );
  const summary = emptySummary();
  const began = performance.now();
  for (let n = 0; n < count; n += 1) {
    if (budgetMs !== undefined && performance.now() - began > budgetMs) break;
    if (skipped.has((start + n) >>> 0)) continue;
    const result = await simulateSeed((start + n) >>> 0, { big, pending });
    add(summary, result);
    summary.seconds = (performance.now() - began) / 1000;
    if (result.violations.length > 0) {
      if (!values.quiet || values.find) console.log(describe(result));
      if (values.find) {
        console.log(
          `found after ${n + 1} seed(s): seed ${result.seed} (replay: npm run simulate -- --seed ${result.seed})`,
        );
        break;
      }
    }
  }
  summary.seconds = (performance.now() - began) / 1000;
  console.log(report(summary));
  if (values.json) {
    console.log(
      JSON.stringify({
        seeds: summary.seeds,
        seconds: summary.seconds,
        failures: summary.failures.map((f) => f.seed),
        found: summary.failures[0]?.seed ?? null,
      }),
    );
  }
  return summary.failures.length > 0 ? 1 : 0;
}

process.exitCode = await main();
