import { parseArgs } from 'node:util';
import { FAULT_KINDS } from './faults.ts';
import { describeSeed, reportSummary, seedPlanOf } from './run-plan.ts';
import { add, emptySummary, simulateSeed } from './simulate.ts';

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
    console.log(
      result.violations.length === 0 ? `seed ${seed}: every invariant held` : describeSeed(result, 50),
    );
    return result.violations.length === 0 ? 0 : 1;
  }
  const { start, budgetMs, count, skipped } = seedPlanOf(values, Math.random);
  console.log(
    `start seed ${start}${budgetMs !== undefined ? `, budget ${budgetMs / 1000} s` : ''}${Number.isFinite(count) ? `, ${count} seeds` : ''}`,
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
      if (!values.quiet || values.find) console.log(describeSeed(result));
      if (values.find) {
        console.log(
          `found after ${n + 1} seed(s): seed ${result.seed} (replay: npm run simulate -- --seed ${result.seed})`,
        );
        break;
      }
    }
  }
  summary.seconds = (performance.now() - began) / 1000;
  console.log(reportSummary(summary));
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
