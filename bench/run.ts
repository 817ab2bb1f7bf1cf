/** fanin's benchmark: `npm run bench` (full, about 10 minutes) or `npm run bench -- --quick`. */
import { mkdir, writeFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { startEmulators } from '../local/emulators.ts';
import { createClients } from '../shared/aws/clients.ts';
import { readmeAtRestTotal } from './cost/fixed.ts';
import { loadPrices } from './cost/prices.ts';
import { Meter } from './measure/meter.ts';
import { reportNames, writeReport } from './report/files.ts';
import { prose } from './report/format.ts';
import type { Results } from './report/schema.ts';
import { ARRIVAL_PATTERNS } from './rig/responders.ts';
import { Rig } from './rig/rig.ts';
import { assemble } from './run/assemble.ts';
import { log } from './run/log.ts';
import { measureAll } from './run/measure-all.ts';
import { DEFINITIONS, parseArgs } from './run/plan.ts';
import { NaiveAggregateStore } from './workload/naive-baseline.ts';

async function main(): Promise<void> {
  const options = parseArgs(process.argv);
  const started = performance.now();
  const loadAtStart = loadavg();
  const prices = await loadPrices();
  log(`${options.quick ? 'quick' : 'full'} run`);
  const emulators = await startEmulators({ eventBridge: false });
  const names = emulators.started.map((e) => `${e.name} ${e.url}`).join(', ');
  log(`emulators: ${names || 'none (AWS_ENDPOINT_URL)'}`);
  const meter = new Meter();
  // Every client reaches the emulators through this connection: nothing is written to process.env.
  const rig = await Rig.start(meter, DEFINITIONS, emulators.connection);
  const naiveClient = createClients(emulators.connection).dynamoDb;
  meter.instrumentDynamo(naiveClient, 'naive');
  const naive = new NaiveAggregateStore({ client: naiveClient, tableName: `${rig.topology.prefix}-naive` });
  try {
    await naive.createTable();
    meter.registerTable(naive.shape);
    const measured = await measureAll({ rig, naive, prices, options, connection: emulators.connection });
    const results = assemble({
      ...measured,
      quick: options.quick,
      started,
      loadAtStart,
      emulators: emulators.started.map((e) => e.name),
      prices,
      readmeAtRest: await readmeAtRestTotal(),
    });
    await writeResults(results, options.quick, started);
  } finally {
    await rig.stop().catch((error: unknown) => log(`stopping: ${String(error)}`));
    await naive.deleteTable();
    await emulators.stop();
  }
}

/** `bench/results/latest.{json,md}` and `scale.svg` (quick: `quick.*`), and the summary line. */
async function writeResults(results: Results, quick: boolean, started: number): Promise<void> {
  const dir = new URL('./results/', import.meta.url);
  await mkdir(dir, { recursive: true });
  const json = reportNames(quick).json;
  await writeFile(new URL(json, dir), `${JSON.stringify(results, null, 2)}\n`);
  const written = await writeReport(results, dir);
  const seconds = Math.round((performance.now() - started) / 1000);
  log(`done in ${seconds} s: bench/results/${[json, ...written].join(', ')}`);
  process.stdout.write(`${summaryLine(results)}\n`);
}

/** The run's figures on one line (stdout), for CI's log. */
function summaryLine(results: Results): string {
  return [
    `replies/s ${results.replies_per_second}`,
    `aggregates/s ${results.aggregates_per_second}`,
    `latency p50/p99 ${results.completion_latency_ms.p50}/${results.completion_latency_ms.p99} ms`,
    `WCU/reply ${JSON.stringify(results.write_units_per_reply)}`,
    `baseline x ${JSON.stringify(results.baseline_ratio)}`,
    `SQS calls/reply ${results.sqs_calls_per_reply}`,
    `store fraction ${results.fraction_of_store_capacity ?? `n/a (capacity spread ${results.store_capacity.spread})`}`,
    ...ARRIVAL_PATTERNS.map((p) => {
      const a = results.arrival[p];
      return a
        ? prose`${p}: WCU/reply ${JSON.stringify(a.write_units_per_reply)}
          $${a.cost_per_million_aggregates_usd}/M p50/p99
          ${a.completion_latency_ms.p50}/${a.completion_latency_ms.p99} ms`
        : `${p}: not run`;
    }),
    prose`$/M aggregates ${results.cost_per_million_aggregates_usd} (Step Functions
      ${results.cost.step_functions_standard.total_per_million})`,
  ].join(' | ');
}

await main();
