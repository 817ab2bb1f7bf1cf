/** fanin's benchmark: `npm run bench` (full, about 10 minutes) or `npm run bench -- --quick`. */
import { mkdir, writeFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { startEmulators } from '../local/emulators.ts';
import { type Connection, createClients } from '../shared/aws/clients.ts';
import { readmeAtRestTotal } from './cost/fixed.ts';
import { loadPrices, type Prices } from './cost/prices.ts';
import { calibrateCapacityModel } from './measure/calibrate.ts';
import { grouped, total } from './measure/counters.ts';
import { Meter } from './measure/meter.ts';
import { prose } from './report/format.ts';
import { renderMarkdown, renderScaleSvg } from './report/markdown.ts';
import type { Results } from './report/schema.ts';
import { ARRIVAL_PATTERNS } from './rig/responders.ts';
import { Rig } from './rig/rig.ts';
import { runArrivals } from './run/arrival.ts';
import { assemble, type Measured, type Sanity } from './run/assemble.ts';
import { runHot } from './run/hot.ts';
import { log } from './run/log.ts';
import {
  OPEN_SECONDS_FULL,
  OPEN_SECONDS_QUICK,
  runOpenTime,
  runResponderCosts,
  runTimerKinds,
} from './run/open-time.ts';
import { DEFINITIONS, parseArgs, type RunOptions } from './run/plan.ts';
import { runSaturation, warmStore } from './run/saturation.ts';
import { measureNaive, runScale } from './run/scale.ts';
import { runTimers } from './run/timers.ts';
import { NaiveAggregateStore } from './workload/naive-baseline.ts';
import { Bodies } from './workload/phases.ts';

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
      sanity: sanityOf(rig),
    });
    await writeResults(results, options.quick, started);
  } finally {
    await rig.stop().catch((error: unknown) => log(`stopping: ${String(error)}`));
    await naive.deleteTable();
    await emulators.stop();
  }
}

/** Every phase in order, on the rig (the open-time dimension on topologies of its own). */
async function measureAll(run: {
  readonly rig: Rig;
  readonly naive: NaiveAggregateStore;
  readonly prices: Prices;
  readonly options: RunOptions;
  readonly connection: Connection;
}): Promise<
  Omit<Measured, 'quick' | 'started' | 'loadAtStart' | 'emulators' | 'prices' | 'readmeAtRest' | 'sanity'>
> {
  const { rig, naive, prices, connection } = run;
  const { quick, plan, replayUpTo } = run.options;
  log('calibrating the capacity model against the emulator');
  const calibration = await calibrateCapacityModel(rig.fanin.setup.dynamo, rig.fanin.tableShape);
  const concurrency = rig.topology.replyPartitions.length * rig.topology.consumers.reply.maxConcurrency;
  await warmStore(rig, plan, concurrency);
  rig.start();
  rig.startTimers();
  const defaultBatching = rig.replyBatching;
  const saturation = await runSaturation(rig, plan, concurrency);
  const { pace, arrivalAggregates } = saturation;
  const arrival = await runArrivals(rig, plan, { defaultBatching, pace, arrivalAggregates });
  log(
    prose`deadline timers: ${plan.timerAggregates} aggregates per variant (batched: 10 s deadline; paced: 3 s),
      then their timers firing`,
  );
  const timers = await runTimers(rig, plan.timerAggregates);
  const openSeconds = quick ? OPEN_SECONDS_QUICK : OPEN_SECONDS_FULL;
  log(`open time: aggregates open until deadlines of ${openSeconds.join(', ')} s, on a virtual clock`);
  const openTime = await runOpenTime(connection, prices, openSeconds);
  log('timer kinds: a daily snapshot over 7 days, an allowed life of 7 days, on a virtual clock');
  const timerKinds = await runTimerKinds(connection, prices);
  log('responders: a round of retries and cancellation notices to ten silent recipients, on a virtual clock');
  const responders = await runResponderCosts(connection, prices);
  log(`baseline at the headline: ${plan.baselineHeadlineAggregates} aggregates x 10 replies of 1 KB`);
  const naiveHeadline = await measureNaive(rig.meter, naive, {
    idPrefix: 'nhead',
    aggregates: plan.baselineHeadlineAggregates,
    fanOut: 10,
    body: Bodies.kilobyte,
    concurrency,
  });
  const { scale, samplingCheck } = await runScale(rig, naive, { plan, replayUpTo, concurrency });
  const { hot, hotSharded, model } = await runHot(rig, plan);
  const { capacityBefore: before, capacityAfter: after, saturated } = saturation;
  return {
    calibration,
    capacity: { before, after, concurrency, durationMs: plan.capacityMs },
    saturated,
    arrival,
    defaultBatching,
    arrivalAggregates,
    pace,
    timers,
    openTime,
    timerKinds,
    responders,
    topology: {
      replyPartitions: rig.topology.replyPartitions.length,
      sweepIntervalSeconds: rig.topology.sweepIntervalSeconds,
      distributorIntervalSeconds: rig.topology.partitioning.distributorIntervalSeconds,
    },
    naiveHeadline,
    scale,
    samplingCheck,
    hot,
    hotSharded,
    model,
  };
}

/** Failures, errors and what the meter could not cost, over the whole run. */
function sanityOf(rig: Rig): Sanity {
  const counters = rig.meter.snapshot();
  return {
    ...rig.failures(),
    responderErrors: rig.responders.errors,
    collectorErrors: rig.collector.errors,
    outputsSeen: Object.fromEntries(rig.collector.types),
    transactionSizesUnknown: grouped(counters, 'ddb.size_unknown', (who) => who),
    unregisteredTables: total(counters, 'ddb.unregistered_table'),
  };
}

/** `bench/results/latest.{json,md}` and `scale.svg` (quick: `quick.*`), and the summary line. */
async function writeResults(results: Results, quick: boolean, started: number): Promise<void> {
  const name = quick ? 'quick' : 'latest';
  const dir = new URL('./results/', import.meta.url);
  await mkdir(dir, { recursive: true });
  const svgName = quick ? 'quick-scale.svg' : 'scale.svg';
  await writeFile(new URL(`${name}.json`, dir), `${JSON.stringify(results, null, 2)}\n`);
  await writeFile(new URL(svgName, dir), renderScaleSvg(results));
  await writeFile(new URL(`${name}.md`, dir), renderMarkdown(results, svgName));
  const seconds = Math.round((performance.now() - started) / 1000);
  log(`done in ${seconds} s: bench/results/${name}.json, ${name}.md, ${svgName}`);
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
