/**
 * fanin's benchmark: `npm run bench` (full, about 10 minutes) or `npm run bench -- --quick` (CI
 * smoke, under 2 minutes). Starts the emulators (or uses AWS_ENDPOINT_URL), provisions a fresh
 * topology, drives the real handlers, and writes `bench/results/latest.{json,md}` and
 * `scale.svg` (quick: `quick.*`). Not part of `npm test`: it reports figures, it asserts nothing.
 */
import { execFileSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { cpus, loadavg, totalmem } from 'node:os';
import { createDynamoClient } from '../shared/aws/clients.ts';
import { startEmulators } from '../local/emulators.ts';
import { NaiveAggregateStore, runNaive, sampleNaive } from './baseline.ts';
import { calibrateCapacityModel } from './calibrate.ts';
import {
  addUsage,
  billPerMillion,
  expressBreakEvenSeconds,
  fixedMonthly,
  loadPrices,
  readmeAtRestTotal,
  replyFloorPerMillion,
  stepFunctionsExpressPerMillion,
  stepFunctionsUsage,
  usageOf,
} from './cost.ts';
import {
  type AwsLimits,
  type HotDesign,
  type HotMeasurement,
  hotBounds,
  runHotAggregate,
  simulateHot,
} from './hot-aggregate.ts';
import { type Counters, diff, grouped, Meter, total } from './meter.ts';
import {
  type ArrivalPhaseResult,
  Bodies,
  type CapacitySample,
  type FaninPhaseResult,
  percentile,
  runArrival,
  runFanin,
  storeCapacity,
  storedPayloadBytes,
} from './phases.ts';
import {
  type ArrivalFigures,
  type ArrivalPatternResult,
  fitUnits,
  type Results,
  renderMarkdown,
  renderScaleSvg,
  type ScalePoint,
} from './report.ts';
import { ARRIVAL_PATTERNS, type ArrivalPattern, RESPONDERS, Rig, sleep } from './rig.ts';

interface Plan {
  /** Writes to DynamoDB Local before anything is measured (its JVM warms up). */
  readonly warmupMs: number;
  readonly warmupAggregates: number;
  /** Each raw-capacity window, before and after the saturated run (sized to last about as long). */
  readonly capacityMs: number;
  /** Aggregates per arrival phase at fan-out 10 (paced), at most; fewer when the pace would make a phase outlast `arrivalSeconds`. */
  readonly arrivalAggregates: number;
  readonly arrivalSeconds: number;
  /** Replies per second the responders offer in the paced phases, at most (half the saturated rate if lower). */
  readonly maxOfferedRepliesPerSecond: number;
  /** Reply batching windows compared (the topology's default is measured with every pattern, the others with `otherWindowPatterns`). */
  readonly comparedWindows: readonly number[];
  readonly otherWindowPatterns: readonly ArrivalPattern[];
  /** Each pattern at a large fan-out too (unpaced, condensed results). */
  readonly largeFanOut?: { readonly fanOut: number; readonly aggregates: number };
  readonly timerAggregates: number;
  readonly baselineHeadlineAggregates: number;
  readonly scale: readonly { readonly fanOut: number; readonly aggregates: number }[];
  readonly hotReplies: number;
  /** Longest wait for the hot aggregate's result, per layout. */
  readonly hotTimeoutMs: number;
}

const QUICK: Plan = {
  warmupMs: 3_000,
  warmupAggregates: 10,
  capacityMs: 4_000,
  arrivalAggregates: 30,
  arrivalSeconds: 12,
  maxOfferedRepliesPerSecond: 60,
  comparedWindows: [0, 1],
  otherWindowPatterns: ['independent'],
  timerAggregates: 10,
  baselineHeadlineAggregates: 50,
  scale: [
    { fanOut: 10, aggregates: 20 },
    { fanOut: 100, aggregates: 4 },
    { fanOut: 1_000, aggregates: 1 },
  ],
  hotReplies: 1_000,
  hotTimeoutMs: 300_000,
};

const FULL: Plan = {
  warmupMs: 5_000,
  warmupAggregates: 20,
  capacityMs: 10_000,
  arrivalAggregates: 80,
  arrivalSeconds: 30,
  maxOfferedRepliesPerSecond: 60,
  comparedWindows: [0, 1],
  otherWindowPatterns: ['together', 'independent', 'spread'],
  largeFanOut: { fanOut: 100, aggregates: 12 },
  timerAggregates: 30,
  baselineHeadlineAggregates: 100,
  scale: [
    { fanOut: 10, aggregates: 100 },
    { fanOut: 100, aggregates: 20 },
    { fanOut: 1_000, aggregates: 4 },
    { fanOut: 10_000, aggregates: 1 },
  ],
  hotReplies: 10_000,
  hotTimeoutMs: 900_000,
};

/** Aggregates answered in turn by `independent` responders: enough that a batch of 10 from either reply partition holds replies of 10 aggregates. */
const ROTATION = 30;

/** The arrival pattern of the headline figures: real responders answer on their own. */
const HEADLINE_PATTERN: ArrivalPattern = 'independent';

/** Independent responders' answer times in the `spread` pattern: lognormal, median 400 ms, p99 ≈ 2.6 s. */
const SPREAD = { medianMs: 400, sigma: 0.8, maxMs: 10_000 } as const;

/** The AWS figures the emulator cannot give: per-key limits and typical latencies (stated in the report). */
const AWS_LIMITS: AwsLimits = {
  keyWriteUnitsPerSecond: 1_000,
  keyReadUnitsPerSecond: 3_000,
  // As the cost model's Lambda durations (prices.json): 8 ms per DynamoDB call.
  callMs: 8,
  overheadMs: 10,
  // DynamoStateStore.THROTTLE_RETRIES: a throttled put is retried in place this many times.
  throttleRetries: 10,
  visibilityTimeoutSeconds: 181,
};

/** The write shards of the second hot layout (`bench-hot-sharded`). */
const HOT_SHARDS = 8;

const DEFINITIONS = [
  {
    name: 'bench-collect',
    fanOut: { type: 'splitter' as const, itemsPath: '$.items', target: RESPONDERS },
    completion: { strategy: 'all' as const },
    aggregation: { algorithm: 'collect' as const },
    timeoutSeconds: 600,
  },
  {
    // Large fan-outs condense: collecting 10,000 replies would make a result bigger than a message.
    name: 'bench-condense',
    fanOut: { type: 'splitter' as const, itemsPath: '$.items', target: RESPONDERS },
    completion: { strategy: 'all' as const },
    aggregation: { algorithm: 'condense' as const, field: '$.v' },
    timeoutSeconds: 600,
  },
  {
    name: 'bench-timer',
    fanOut: { type: 'splitter' as const, itemsPath: '$.items', target: RESPONDERS },
    completion: { strategy: 'all' as const },
    aggregation: { algorithm: 'collect' as const },
    timeoutSeconds: 3,
  },
  {
    name: 'bench-hot',
    fanOut: { type: 'none' as const },
    completion: { strategy: 'all' as const },
    aggregation: { algorithm: 'condense' as const, field: '$.v' },
    timeoutSeconds: 600,
  },
  {
    // The same hot aggregate with its replies spread over HOT_SHARDS partition keys by the adapter.
    name: 'bench-hot-sharded',
    fanOut: { type: 'none' as const },
    completion: { strategy: 'all' as const },
    aggregation: { algorithm: 'condense' as const, field: '$.v' },
    timeoutSeconds: 600,
    writeShards: HOT_SHARDS,
  },
];

function log(message: string): void {
  process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${message}\n`);
}

async function main(): Promise<void> {
  const quick = process.argv.includes('--quick');
  // Replaying the baseline at fan-out 10,000 takes DynamoDB Local 5–15 minutes: on request only.
  const replayUpTo = process.argv.includes('--replay-baseline') ? Number.POSITIVE_INFINITY : REPLAY_UP_TO;
  const plan = quick ? QUICK : FULL;
  const started = performance.now();
  const loadAtStart = loadavg();
  const prices = await loadPrices();
  log(`${quick ? 'quick' : 'full'} run`);

  const emulators = await startEmulators({ eventBridge: false });
  Object.assign(process.env, emulators.env);
  log(
    `emulators: ${emulators.started.map((e) => `${e.name} ${e.url}`).join(', ') || 'none (AWS_ENDPOINT_URL)'}`,
  );
  const meter = new Meter();
  const rig = await Rig.start(meter, DEFINITIONS);
  const naiveClient = createDynamoClient();
  meter.instrumentDynamo(naiveClient, 'naive');
  const naive = new NaiveAggregateStore({ client: naiveClient, tableName: `${rig.topology.prefix}-naive` });
  try {
    await naive.createTable();
    meter.registerTable(naive.shape);

    log('calibrating the capacity model against the emulator');
    const calibration = await calibrateCapacityModel(rig.setupClients.dynamo, rig.tableShape);

    const concurrency = rig.topology.replyPartitions.length * rig.topology.consumers.reply.maxConcurrency;
    const capacityBody = Bodies.kilobyte('capacity', '0');
    // DynamoDB Local's JVM is slow until warm: the first seconds of writes are not its capacity.
    log(`warming the store: PutItem x ${concurrency} writers for ${plan.warmupMs} ms (not counted)`);
    await storeCapacity(rig, { concurrency, durationMs: plan.warmupMs, body: capacityBody, label: 'warm' });

    rig.start();
    rig.startTimers();
    const defaultWindow = rig.replyBatchingWindowSeconds;

    const saturatedRelease = {
      repliesPerSecond: Number.POSITIVE_INFINITY,
      rotation: ROTATION,
      spread: SPREAD,
      senders: 4,
    };
    log(
      `warm-up: ${plan.warmupAggregates} aggregates, replies independent, as fast as they go (not counted)`,
    );
    const warm = await runArrival(rig, {
      pattern: 'independent',
      definition: 'bench-collect',
      idPrefix: 'warm',
      aggregates: plan.warmupAggregates,
      fanOut: 10,
      body: Bodies.kilobyte,
      release: saturatedRelease,
      timeoutMs: 600_000,
    });
    // Sized to last about as long as each capacity window around it.
    const estimate = (warm.replies * 1000) / warm.releaseToLastResultMs;
    const saturatedAggregates = Math.max(30, Math.round((estimate * plan.capacityMs) / 1000 / 10));
    log(`raw store capacity before: PutItem x ${concurrency} writers for ${plan.capacityMs} ms`);
    const capacityBefore = await storeCapacity(rig, {
      concurrency,
      durationMs: plan.capacityMs,
      body: capacityBody,
      label: 'before',
    });
    log(`saturated: ${saturatedAggregates} aggregates x 10 replies of 1 KB, independent, as fast as they go`);
    const saturated = await runArrival(rig, {
      pattern: 'independent',
      definition: 'bench-collect',
      idPrefix: 'sat',
      aggregates: saturatedAggregates,
      fanOut: 10,
      body: Bodies.kilobyte,
      release: saturatedRelease,
      timeoutMs: 600_000,
    });
    // As long as the run was (the estimate that sized it may be off), within reason.
    const afterMs = Math.round(
      Math.min(2 * plan.capacityMs, Math.max(plan.capacityMs / 2, saturated.releaseToLastResultMs)),
    );
    log(`raw store capacity after: PutItem x ${concurrency} writers for ${afterMs} ms`);
    const capacityAfter = await storeCapacity(rig, {
      concurrency,
      durationMs: afterMs,
      body: capacityBody,
      label: 'after',
    });
    const saturatedRate = (saturated.replies * 1000) / saturated.releaseToLastResultMs;
    const pace = Math.max(10, Math.min(plan.maxOfferedRepliesPerSecond, saturatedRate / 2));
    // On a slow or busy machine the pace drops: fewer aggregates keep each phase within its time.
    const arrivalAggregates = Math.min(
      plan.arrivalAggregates,
      Math.max(20, Math.round((pace * plan.arrivalSeconds) / 10)),
    );

    const arrival: ArrivalPhaseResult[] = [];
    for (const window of [defaultWindow, ...plan.comparedWindows.filter((w) => w !== defaultWindow)]) {
      await rig.setReplyBatchingWindow(window);
      const patterns = window === defaultWindow ? ARRIVAL_PATTERNS : plan.otherWindowPatterns;
      for (const pattern of patterns) {
        log(
          `arrival ${pattern}, reply batching window ${window} s: ${arrivalAggregates} aggregates x 10 replies of 1 KB at ${pace.toFixed(0)} replies/s`,
        );
        arrival.push(
          await runArrival(rig, {
            pattern,
            definition: 'bench-collect',
            idPrefix: `${pattern.slice(0, 3)}w${window}`,
            aggregates: arrivalAggregates,
            fanOut: 10,
            body: Bodies.kilobyte,
            release: { repliesPerSecond: pace, rotation: ROTATION, spread: SPREAD, senders: 4 },
            timeoutMs: 600_000,
          }),
        );
      }
      if (window !== defaultWindow || plan.largeFanOut === undefined) continue;
      const large = plan.largeFanOut;
      for (const pattern of ARRIVAL_PATTERNS) {
        log(
          `arrival ${pattern} at fan-out ${large.fanOut}: ${large.aggregates} aggregates, replies of 1 KB as fast as they go (condensed)`,
        );
        arrival.push(
          await runArrival(rig, {
            pattern,
            definition: 'bench-condense',
            idPrefix: `${pattern.slice(0, 3)}f${large.fanOut}`,
            aggregates: large.aggregates,
            fanOut: large.fanOut,
            body: Bodies.kilobyte,
            release: { ...saturatedRelease, rotation: large.aggregates },
            timeoutMs: 900_000,
          }),
        );
      }
    }
    await rig.setReplyBatchingWindow(defaultWindow);

    log(`deadline timers: ${plan.timerAggregates} aggregates with a 3 s deadline, then their timers firing`);
    const timers = await runTimers(rig, plan.timerAggregates);

    log(`baseline at the headline: ${plan.baselineHeadlineAggregates} aggregates x 10 replies of 1 KB`);
    const naiveHeadline = await measureNaive(meter, naive, {
      idPrefix: 'nhead',
      aggregates: plan.baselineHeadlineAggregates,
      fanOut: 10,
      body: Bodies.kilobyte,
      concurrency,
    });

    const scale: ScalePoint[] = [];
    for (const { fanOut, aggregates } of plan.scale) {
      log(`scale: fan-out ${fanOut} x ${aggregates} aggregates through fanin`);
      const fanin = await runFanin(rig, {
        definition: 'bench-condense',
        idPrefix: `s${fanOut}`,
        aggregates,
        fanOut,
        body: Bodies.small,
        timeoutMs: 900_000,
      });
      let baseline: BaselineFigures;
      if (fanOut <= replayUpTo) {
        log(`scale: fan-out ${fanOut} x ${aggregates} aggregates through the naive baseline`);
        baseline = naiveFigures(
          await measureNaive(meter, naive, {
            idPrefix: `n${fanOut}`,
            aggregates,
            fanOut,
            body: Bodies.small,
            concurrency,
          }),
        );
      } else {
        log(
          `scale: fan-out ${fanOut} through the naive baseline, sampled at ${SAMPLED_POSITIONS} reply positions`,
        );
        baseline = await sampledNaiveFigures(meter, naive, rig, `n${fanOut}`, fanOut, SAMPLED_POSITIONS);
      }
      scale.push(scalePoint(fanOut, aggregates, fanin, baseline));
    }
    // The sampling is checked at the largest fan-out that was replayed.
    const replayed = scale.filter((p) => p.baseline.method === 'replayed').at(-1);
    let samplingCheck: Results['baseline_sampling_check'];
    if (replayed) {
      const positions = Math.min(SAMPLED_POSITIONS, Math.max(10, replayed.fanOut / 10));
      log(`baseline sampling check: fan-out ${replayed.fanOut} sampled at ${positions} positions`);
      const sampled = await sampledNaiveFigures(meter, naive, rig, 'ncheck', replayed.fanOut, positions);
      samplingCheck = {
        fan_out: replayed.fanOut,
        positions,
        replayed_write_units_per_reply: round(replayed.baseline.writeUnitsPerReply, 3),
        sampled_write_units_per_reply: round(sampled.writeUnitsPerReply, 3),
      };
    }

    log(`hot aggregate: one aggregate, ${plan.hotReplies} replies as fast as they come, writeShards 1`);
    const hot = await runHotAggregate(rig, {
      definition: 'bench-hot',
      replies: plan.hotReplies,
      senders: 4,
      timeoutMs: plan.hotTimeoutMs,
    });
    log(`hot aggregate: the same, writeShards ${HOT_SHARDS}`);
    const hotSharded = await runHotAggregate(rig, {
      definition: 'bench-hot-sharded',
      replies: plan.hotReplies,
      senders: 4,
      timeoutMs: plan.hotTimeoutMs,
    });

    log('AWS model: bounds and simulation of one hot aggregate');
    const designOf = (
      m: HotMeasurement,
      name: string,
      consumers: number,
      shards = m.writeShards,
    ): HotDesign => ({
      name,
      shards,
      replyUnits: m.recordingWriteUnitsPerReply,
      // What the busiest key takes besides its share of the reply puts, and what it is read, both
      // as measured per key (with more shards than measured, the per-batch writes spread alike).
      headerKeyWriteUnitsPerReply:
        (Math.max(0, m.busiestKeyWriteUnitsPerReply - m.recordingWriteUnitsPerReply / m.writeShards) *
          m.writeShards) /
        shards,
      headerKeyReadUnitsPerReply: m.busiestKeyReadUnitsPerReply,
      batch: Math.max(1, Math.round(m.repliesPerInvocation)),
      consumers,
      // Measured: parallel calls (a batch's puts, the other shards' counters) are one round trip.
      roundTrips: m.roundTripsPerInvocation,
    });
    const consumers = rig.topology.consumers.reply.maxConcurrency;
    const designs: HotDesign[] = [
      designOf(hot, `writeShards 1, replyConcurrency ${consumers} (the default)`, consumers),
      designOf(hot, 'writeShards 1, replyConcurrency 40', 40),
      designOf(
        hotSharded,
        `writeShards ${HOT_SHARDS}, replyConcurrency ${consumers} (the default)`,
        consumers,
      ),
      designOf(hotSharded, `writeShards ${HOT_SHARDS}, replyConcurrency 40`, 40),
      designOf(hotSharded, `writeShards ${HOT_SHARDS}, replyConcurrency 80`, 80),
      // Not measured: the writeShards 8 run's figures with the replies spread over 16 keys.
      designOf(hotSharded, 'writeShards 16, replyConcurrency 160 (from the writeShards 8 run)', 160, 16),
      // The reply puts alone on the keys (no other write on the busiest key), to show what the
      // completion trigger's counter costs the bound.
      {
        ...designOf(hot, 'writeShards 1, replyConcurrency 40, reply puts only (no per-batch counter)', 40),
        headerKeyWriteUnitsPerReply: 0,
      },
    ];
    const model = designs.map((design) => ({
      design,
      bounds: hotBounds(design, AWS_LIMITS),
      simulation: simulateHot(design, AWS_LIMITS, 100_000),
    }));

    const failures = rig.failures();
    const results = assemble({
      quick,
      started,
      loadAtStart,
      emulators: emulators.started.map((e) => e.name),
      prices,
      calibration,
      capacity: { before: capacityBefore, after: capacityAfter, concurrency, durationMs: plan.capacityMs },
      saturated,
      arrival,
      defaultWindow,
      pace,
      timers,
      topology: {
        replyPartitions: rig.topology.replyPartitions.length,
        sweepIntervalSeconds: rig.topology.sweepIntervalSeconds,
        distributorIntervalSeconds: rig.topology.partitioning.distributorIntervalSeconds,
      },
      readmeAtRest: await readmeAtRestTotal(),
      naiveHeadline,
      scale,
      samplingCheck,
      hot,
      hotSharded,
      model,
      sanity: {
        ...failures,
        responderErrors: rig.responders.errors,
        collectorErrors: rig.collector.errors,
        outputsSeen: Object.fromEntries(rig.collector.types),
        transactionSizesUnknown: grouped(meter.snapshot(), 'ddb.size_unknown', (who) => who),
        unregisteredTables: total(meter.snapshot(), 'ddb.unregistered_table'),
      },
    });
    const name = quick ? 'quick' : 'latest';
    const dir = new URL('./results/', import.meta.url);
    await mkdir(dir, { recursive: true });
    const svgName = quick ? 'quick-scale.svg' : 'scale.svg';
    await writeFile(new URL(`${name}.json`, dir), `${JSON.stringify(results, null, 2)}\n`);
    await writeFile(new URL(svgName, dir), renderScaleSvg(results));
    await writeFile(new URL(`${name}.md`, dir), renderMarkdown(results, svgName));
    log(
      `done in ${Math.round((performance.now() - started) / 1000)} s: bench/results/${name}.json, ${name}.md, ${svgName}`,
    );
    process.stdout.write(`${summaryLine(results)}\n`);
  } finally {
    await rig.stop().catch((error: unknown) => log(`stopping: ${String(error)}`));
    await naive.deleteTable();
    await emulators.stop();
  }
}

/** Aggregates with a 3 s deadline complete first; then the counters cover only their timers firing. */
async function runTimers(
  rig: Rig,
  aggregates: number,
): Promise<{ fired: number; outcomes: Record<string, number>; counters: Counters }> {
  const completed = await runFanin(rig, {
    definition: 'bench-timer',
    idPrefix: 'tmr',
    aggregates,
    fanOut: 10,
    body: Bodies.kilobyte,
    requestsPerSecond: 20,
    timeoutMs: 120_000,
  });
  const before = rig.meter.snapshot();
  const firedBefore = total(before, 'lambda.records', (who) => who === 'timer');
  const deadline = Date.now() + 60_000;
  while (total(rig.meter.snapshot(), 'lambda.records', (who) => who === 'timer') - firedBefore < aggregates) {
    if (Date.now() > deadline) break;
    await sleep(100);
  }
  await rig.idle();
  const counters = diff(rig.meter.snapshot(), before);
  return {
    fired: total(counters, 'lambda.records', (who) => who === 'timer'),
    outcomes: { ...completed.outcomes },
    counters,
  };
}

interface NaiveResult {
  readonly aggregates: number;
  readonly replies: number;
  readonly elapsedMs: number;
  readonly counters: Counters;
}

async function measureNaive(
  meter: Meter,
  store: NaiveAggregateStore,
  options: {
    idPrefix: string;
    aggregates: number;
    fanOut: number;
    body: (a: string, r: string) => string;
    concurrency: number;
  },
): Promise<NaiveResult> {
  const before = meter.snapshot();
  const run = await runNaive(store, {
    aggregates: Array.from({ length: options.aggregates }, (_, i) => ({
      id: `${options.idPrefix}-${i}`,
      fanOut: options.fanOut,
    })),
    body: options.body,
    concurrency: options.concurrency,
  });
  if (run.completed !== options.aggregates) {
    throw new Error(`baseline completed ${run.completed} of ${options.aggregates} aggregates`);
  }
  return {
    aggregates: options.aggregates,
    replies: run.replies,
    elapsedMs: run.elapsedMs,
    counters: diff(meter.snapshot(), before),
  };
}

const faninWho = (who: string): boolean => who.startsWith('fanin');
/**
 * The reply handler's writes that record replies: a transaction per batch (the first protocol) or
 * a conditional put per reply. Its updates (claims, closes) are completion, not recording.
 */
const RECORDING_OPERATIONS = new Set(['TransactWriteItems', 'PutItem']);
/** Largest fan-out the baseline replays reply by reply; above it, it is sampled (see `sampleNaive`). */
const REPLAY_UP_TO = 1_000;
const SAMPLED_POSITIONS = 200;

type BaselineFigures = ScalePoint['baseline'];

function naiveFigures(result: NaiveResult): BaselineFigures {
  const naiveOnly = (who: string) => who === 'naive';
  return {
    method: 'replayed',
    writeUnitsPerReply: total(result.counters, 'ddb.wcu', naiveOnly) / result.replies,
    recordingWriteUnitsPerReply:
      total(result.counters, 'ddb.wcu', (who, op) => naiveOnly(who) && op === 'UpdateItem') / result.replies,
    readUnitsPerReply: total(result.counters, 'ddb.rcu', naiveOnly) / result.replies,
    repliesPerSecond: (result.replies * 1000) / result.elapsedMs,
  };
}

async function sampledNaiveFigures(
  meter: Meter,
  store: NaiveAggregateStore,
  rig: Rig,
  aggregateId: string,
  fanOut: number,
  positions: number,
): Promise<BaselineFigures> {
  const naiveOnly = (who: string) => who === 'naive';
  const before = meter.snapshot();
  const sample = await sampleNaive(store, rig.setupClients.dynamo, {
    aggregateId,
    fanOut,
    positions,
    body: Bodies.small,
    unitsSoFar: () => total(meter.snapshot(), 'ddb.wcu', naiveOnly),
  });
  const counters = diff(meter.snapshot(), before);
  return {
    method: `sampled at ${sample.positions} reply positions`,
    writeUnitsPerReply: (sample.openUnits + sample.recordUnits + sample.completeUnits) / fanOut,
    recordingWriteUnitsPerReply: sample.recordUnits / fanOut,
    readUnitsPerReply: total(counters, 'ddb.rcu', naiveOnly) / fanOut,
    repliesPerSecond: null,
  };
}

function scalePoint(
  fanOut: number,
  aggregates: number,
  fanin: FaninPhaseResult,
  baseline: BaselineFigures,
): ScalePoint {
  const replies = fanin.replies;
  const faninUnits = total(fanin.counters, 'ddb.wcu', faninWho) / replies;
  const recording =
    total(fanin.counters, 'ddb.wcu', (who, op) => who === 'fanin:reply' && RECORDING_OPERATIONS.has(op)) /
    replies;
  return {
    fanOut,
    aggregates,
    replies,
    fanin: {
      writeUnitsPerReply: faninUnits,
      recordingWriteUnitsPerReply: recording,
      indexWriteUnitsPerReply: total(fanin.counters, 'ddb.wcu_index', faninWho) / replies,
      readUnitsPerReply: total(fanin.counters, 'ddb.rcu', faninWho) / replies,
      repliesPerSecond: (replies * 1000) / fanin.elapsedMs,
      outcomes: fanin.outcomes,
    },
    baseline,
    ratio: baseline.writeUnitsPerReply / faninUnits,
  };
}

function perReply(
  counters: Counters,
  metric: string,
  replies: number,
  groupOf: (who: string, detail: string) => string | undefined,
) {
  return Object.fromEntries(
    Object.entries(grouped(counters, metric, groupOf))
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([key, value]) => [key, round(value / replies, 4)]),
  );
}

function round(value: number, digits = 2): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

/** Spread beyond which the raw-capacity windows disagree too much for a ratio to mean anything. */
const CAPACITY_SPREAD_LIMIT = 0.25;

function arrivalFigures(
  phase: ArrivalPhaseResult,
  timers: Awaited<ReturnType<typeof runTimers>>,
  prices: Awaited<ReturnType<typeof loadPrices>>,
): ArrivalFigures {
  const c = phase.counters;
  const { aggregates, replies } = phase;
  const fired = Math.max(1, timers.fired);
  const notEmpty = (detail: string) => !detail.includes('(empty)');
  const faninSide = (who: string) => faninWho(who) || who === 'esm';
  // Every aggregate's deadline timer fires once, later (measured apart): its share is added.
  const timerShare = (metric: string, keep: (who: string, detail: string) => boolean) =>
    (total(timers.counters, metric, keep) / fired) * aggregates;
  const allIn = (metric: string, keep: (who: string, detail: string) => boolean) =>
    (total(c, metric, keep) + timerShare(metric, keep)) / replies;
  const timerUsage = usageOf(timers.counters, 'fanin', fired, prices);
  const faninBill = billPerMillion(addUsage(usageOf(c, 'fanin', aggregates, prices), timerUsage), prices);
  const clientBill = billPerMillion(usageOf(c, 'clients', aggregates, prices), prices);
  const invocations = total(c, 'lambda.invocations', (who) => who === 'reply');
  const records = total(c, 'lambda.records', (who) => who === 'reply');
  const groups = total(c, 'lambda.aggregates', (who) => who === 'reply');
  return {
    fan_out: replies / aggregates,
    batching_window_seconds: phase.batchingWindowSeconds,
    offered_replies_per_second: Number.isFinite(phase.offeredRepliesPerSecond)
      ? round(phase.offeredRepliesPerSecond, 1)
      : null,
    aggregates,
    replies,
    write_units: round(allIn('ddb.wcu', faninWho), 3),
    index_write_units: round(allIn('ddb.wcu_index', faninWho), 3),
    read_units: round(allIn('ddb.rcu', faninWho), 3),
    sqs_calls: round(
      allIn('sqs.calls', (who, d) => faninSide(who) && notEmpty(d)),
      3,
    ),
    client_sqs_calls: round(total(c, 'sqs.calls', (who, d) => who === 'clients' && notEmpty(d)) / replies, 3),
    reply_invocations: round(invocations / replies, 3),
    replies_per_batch: round(records / Math.max(1, invocations), 2),
    replies_per_aggregate_per_batch: round(records / Math.max(1, groups), 2),
    cost_per_million_aggregates_usd: round(faninBill.total + clientBill.total, 2),
    fanin_only_per_million_usd: round(faninBill.total, 2),
    completion_latency_ms: {
      p50: round(percentile(phase.latenciesMs, 50), 0),
      p99: round(percentile(phase.latenciesMs, 99), 0),
      samples: phase.latenciesMs.length,
    },
    outcomes: phase.outcomes,
  };
}

function arrivalSection(
  phases: readonly ArrivalPhaseResult[],
  defaultWindow: number,
  timers: Awaited<ReturnType<typeof runTimers>>,
  prices: Awaited<ReturnType<typeof loadPrices>>,
): Results['arrival'] {
  const out: Partial<Record<ArrivalPattern, ArrivalPatternResult>> = {};
  for (const pattern of ARRIVAL_PATTERNS) {
    const mine = phases.filter((p) => p.pattern === pattern);
    const atDefault = mine.filter((p) => p.batchingWindowSeconds === defaultWindow);
    const paced = atDefault.find((p) => p.replies / p.aggregates === 10);
    if (!paced) continue;
    const figures = atDefault.map((p) => arrivalFigures(p, timers, prices));
    const headline = arrivalFigures(paced, timers, prices);
    const byFanOut = (pick: (f: ArrivalFigures) => number) =>
      Object.fromEntries(figures.map((f) => [String(f.fan_out), pick(f)]));
    const others = mine
      .filter((p) => p.batchingWindowSeconds !== defaultWindow)
      .map((p) => arrivalFigures(p, timers, prices));
    out[pattern] = {
      write_units_per_reply: byFanOut((f) => f.write_units),
      read_units_per_reply: byFanOut((f) => f.read_units),
      sqs_calls_per_reply: byFanOut((f) => f.sqs_calls),
      cost_per_million_aggregates_usd: headline.cost_per_million_aggregates_usd,
      completion_latency_ms: headline.completion_latency_ms,
      batching_window_seconds: defaultWindow,
      measured: figures,
      other_batching_windows: others,
    };
  }
  return out as Results['arrival'];
}

function assemble(input: {
  quick: boolean;
  started: number;
  loadAtStart: number[];
  emulators: string[];
  prices: Awaited<ReturnType<typeof loadPrices>>;
  calibration: Awaited<ReturnType<typeof calibrateCapacityModel>>;
  capacity: { before: CapacitySample; after: CapacitySample; concurrency: number; durationMs: number };
  saturated: ArrivalPhaseResult;
  arrival: readonly ArrivalPhaseResult[];
  defaultWindow: number;
  pace: number;
  timers: Awaited<ReturnType<typeof runTimers>>;
  topology: Parameters<typeof fixedMonthly>[1];
  readmeAtRest: number | undefined;
  naiveHeadline: NaiveResult;
  scale: ScalePoint[];
  samplingCheck: Results['baseline_sampling_check'];
  hot: HotMeasurement;
  hotSharded: HotMeasurement;
  model: {
    design: HotDesign;
    bounds: ReturnType<typeof hotBounds>;
    simulation: ReturnType<typeof simulateHot>;
  }[];
  sanity: Results['sanity'];
}): Results {
  const { prices } = input;
  const arrival = arrivalSection(input.arrival, input.defaultWindow, input.timers, input.prices);
  const headline = input.arrival.find(
    (p) =>
      p.pattern === HEADLINE_PATTERN &&
      p.batchingWindowSeconds === input.defaultWindow &&
      p.replies / p.aggregates === 10,
  );
  if (!headline) throw new Error('no headline arrival phase');
  const head = arrival[HEADLINE_PATTERN];
  const replies = headline.replies;
  const aggregates = headline.aggregates;
  const c = headline.counters;
  const saturated = input.saturated;
  const repliesPerSecond = (saturated.replies * 1000) / saturated.releaseToLastResultMs;
  const notEmpty = (detail: string) => !detail.includes('(empty)');

  // Cost of one aggregate: its own work plus its deadline timer firing later (measured apart).
  const timerUsage = usageOf(input.timers.counters, 'fanin', Math.max(1, input.timers.fired), prices);
  const faninUsage = addUsage(usageOf(c, 'fanin', aggregates, prices), timerUsage);
  const clientUsage = usageOf(c, 'clients', aggregates, prices);
  const faninBill = billPerMillion(faninUsage, prices);
  const clientBill = billPerMillion(clientUsage, prices);
  const sfn = stepFunctionsUsage(10, c, aggregates, prices);
  const sfnBill = billPerMillion(sfn.orchestration, prices, sfn.transitions);
  const sfnClientBill = billPerMillion(sfn.clients, prices);
  const naiveAgg = input.naiveHeadline.aggregates;
  const naiveUsage = {
    writeUnits: total(input.naiveHeadline.counters, 'ddb.wcu', (who) => who === 'naive') / naiveAgg,
    readUnits: total(input.naiveHeadline.counters, 'ddb.rcu', (who) => who === 'naive') / naiveAgg,
    sqsStandard: 0,
    sqsFifo: 0,
    invocations: 0,
    lambdaMs: 0,
  };
  const fixed = fixedMonthly(prices, input.topology);

  const { before, after } = input.capacity;
  const meanCapacity = (before.writesPerSecond + after.writesPerSecond) / 2;
  const capacitySpread = Math.abs(after.writesPerSecond - before.writesPerSecond) / meanCapacity;
  const slices = [...before.perSecond, ...after.perSecond];
  const capacityMeaningful = capacitySpread <= CAPACITY_SPREAD_LIMIT;

  const writeUnitsPerReply: Record<string, number> = {};
  const baselineRatio: Record<string, number> = {};
  for (const point of input.scale) {
    writeUnitsPerReply[String(point.fanOut)] = round(point.fanin.writeUnitsPerReply, 3);
    baselineRatio[String(point.fanOut)] = round(point.ratio, 2);
  }
  const fit = fitUnits(input.scale);
  const loadAtEnd = loadavg();
  const faninTotal = round(faninBill.total + clientBill.total, 2);
  const expressAt = [0.5, 1, 5, 30, 60, 300].map((seconds) => ({
    seconds,
    per_million_usd: round(stepFunctionsExpressPerMillion(seconds, prices), 2),
  }));
  return {
    schema: 2,
    date: new Date().toISOString(),
    commit: commitOf(),
    quick: input.quick,
    command: ['npm run bench', ...(process.argv.length > 2 ? ['--', ...process.argv.slice(2)] : [])].join(
      ' ',
    ),
    duration_seconds: Math.round((performance.now() - input.started) / 1000),
    machine: {
      cpus: cpus().length,
      memory_gib: round(totalmem() / 2 ** 30, 1),
      node: process.version,
      load_average_start: input.loadAtStart.map((n) => round(n)),
      load_average_end: loadAtEnd.map((n) => round(n)),
      emulators: input.emulators,
    },
    headline_pattern: HEADLINE_PATTERN,
    arrival,
    arrival_setup: {
      offered_replies_per_second: round(input.pace, 1),
      rotation: ROTATION,
      spread: SPREAD,
      default_batching_window_seconds: input.defaultWindow,
    },
    replies_per_second: round(repliesPerSecond, 1),
    aggregates_per_second: round((saturated.aggregates * 1000) / saturated.releaseToLastResultMs, 2),
    completion_latency_ms: {
      ...head.completion_latency_ms,
      pattern: HEADLINE_PATTERN,
      offered_replies_per_second: round(input.pace, 1),
      saturated: {
        p50: round(percentile(saturated.latenciesMs, 50), 0),
        p99: round(percentile(saturated.latenciesMs, 99), 0),
      },
    },
    write_units_per_reply: writeUnitsPerReply,
    baseline_ratio: baselineRatio,
    write_units_fit: { per_reply: round(fit.perReply, 3), per_aggregate: round(fit.perAggregate, 1) },
    sqs_calls_per_reply: head.sqs_calls_per_reply['10'] ?? Number.NaN,
    fraction_of_store_capacity: capacityMeaningful ? round(repliesPerSecond / meanCapacity, 3) : null,
    cost_per_million_aggregates_usd: head.cost_per_million_aggregates_usd,
    headline: {
      pattern: HEADLINE_PATTERN,
      aggregates,
      replies,
      fan_out: 10,
      reply_bytes: 1024,
      stored_payload_bytes: storedPayloadBytes(),
      elapsed_ms: round(headline.elapsedMs, 0),
      outcomes: headline.outcomes,
      per_reply: {
        write_units: round(total(c, 'ddb.wcu', faninWho) / replies, 3),
        index_write_units: round(total(c, 'ddb.wcu_index', faninWho) / replies, 3),
        read_units: round(total(c, 'ddb.rcu', faninWho) / replies, 3),
        write_units_by_operation: perReply(c, 'ddb.wcu', replies, (who, op) =>
          faninWho(who) ? `${who} ${op}` : undefined,
        ),
        read_units_by_operation: perReply(c, 'ddb.rcu', replies, (who, op) =>
          faninWho(who) ? `${who} ${op}` : undefined,
        ),
        dynamodb_calls_by_operation: perReply(c, 'ddb.calls', replies, (who, op) =>
          faninWho(who) ? `${who} ${op}` : undefined,
        ),
        sqs_calls_by_operation: perReply(c, 'sqs.calls', replies, (who, d) =>
          notEmpty(d) ? `${who} ${d}` : undefined,
        ),
        sqs_billed_requests: perReply(c, 'sqs.billed', replies, (who, d) =>
          notEmpty(d) ? `${who} ${d.split('|')[0]}` : undefined,
        ),
        timer_firing_sqs_calls_by_operation: perReply(
          input.timers.counters,
          'sqs.calls',
          Math.max(1, input.timers.fired) * 10,
          (who, d) => (notEmpty(d) && (faninWho(who) || who === 'esm') ? `${who} ${d}` : undefined),
        ),
        handler_invocations: perReply(c, 'lambda.invocations', replies, (who) => who),
        records_per_invocation: Object.fromEntries(
          Object.entries(grouped(c, 'lambda.invocations', (who) => who)).map(([handler, n]) => [
            handler,
            round(total(c, 'lambda.records', (who) => who === handler) / n, 2),
          ]),
        ),
        emulator_reported_transaction_write_units: round(
          total(c, 'ddb.wcu_reported', (who, op) => faninWho(who) && op === 'TransactWriteItems') / replies,
          3,
        ),
        empty_receives_excluded: total(c, 'sqs.calls', (_, d) => !notEmpty(d)),
      },
    },
    saturated: {
      pattern: 'independent',
      aggregates: saturated.aggregates,
      replies: saturated.replies,
      release_to_last_result_ms: round(saturated.releaseToLastResultMs, 0),
      write_units_per_reply: round(total(saturated.counters, 'ddb.wcu', faninWho) / saturated.replies, 3),
    },
    store_capacity: {
      item: 'a reply item with a 1 KB body',
      concurrency: input.capacity.concurrency,
      window_ms: input.capacity.durationMs,
      before: capacityFigures(before),
      after: capacityFigures(after),
      mean_puts_per_second: round(meanCapacity, 1),
      spread: round(capacitySpread, 3),
      spread_limit: CAPACITY_SPREAD_LIMIT,
      per_second_range: [Math.min(...slices), Math.max(...slices)],
      fraction_range: [
        round(repliesPerSecond / Math.max(before.writesPerSecond, after.writesPerSecond), 3),
        round(repliesPerSecond / Math.min(before.writesPerSecond, after.writesPerSecond), 3),
      ],
      meaningful: capacityMeaningful,
    },
    cost: {
      prices_taken: prices.taken,
      region: prices.region,
      scenario: `fan-out 10, 1 KB replies arriving ${HEADLINE_PATTERN}ly, deadline timer armed and fired once, result to a FIFO queue`,
      fanin: {
        usage_per_aggregate: roundAll(faninUsage),
        per_million_aggregates: roundAll(faninBill),
        timer_firing_usage: roundAll(timerUsage),
      },
      fanin_clients: {
        usage_per_aggregate: roundAll(clientUsage),
        per_million_aggregates: roundAll(clientBill),
      },
      fanin_total_per_million: faninTotal,
      step_functions_standard: {
        transitions_per_aggregate: sfn.transitions,
        orchestration_per_million: roundAll(sfnBill),
        clients_per_million: roundAll(sfnClientBill),
        total_per_million: round(sfnBill.total + sfnClientBill.total, 2),
      },
      step_functions_express: {
        per_million_by_answer_seconds: expressAt,
        cheaper_than_fanin_below_seconds: expressBreakEvenSeconds(faninTotal, prices),
      },
      reply_floor_per_million: {
        one_reply_per_batch: round(replyFloorPerMillion(10, 1, prices), 2),
        ten_replies_per_batch: round(replyFloorPerMillion(10, 10, prices), 2),
      },
      naive_baseline_dynamodb: {
        usage_per_aggregate: {
          write_units: round(naiveUsage.writeUnits, 2),
          read_units: round(naiveUsage.readUnits, 2),
        },
        per_million_aggregates: round(billPerMillion(naiveUsage, prices).dynamodb, 2),
      },
      fixed_monthly: {
        items: fixed.items.map((i) => ({ ...i, usd: round(i.usd, 3) })),
        total_usd: round(fixed.total, 2),
        readme_total_usd: input.readmeAtRest ?? null,
        reply_partitions: input.topology.replyPartitions,
      },
    },
    scale: input.scale,
    baseline_sampling_check: input.samplingCheck,
    hot_aggregate: {
      measured: { ...roundAll(input.hot), counters: undefined },
      sharded: { ...roundAll(input.hotSharded), counters: undefined },
      aws_limits: AWS_LIMITS,
      model: input.model.map(({ design, bounds, simulation }) => ({
        design,
        bounds: roundAll(bounds),
        simulation: roundAll(simulation),
      })),
    },
    calibration: input.calibration,
    timers: { fired: input.timers.fired, completed_first: input.timers.outcomes },
    sanity: input.sanity,
  };
}

function capacityFigures(sample: CapacitySample): Results['store_capacity']['before'] {
  return {
    puts_per_second: round(sample.writesPerSecond, 1),
    per_second: sample.perSecond,
    duration_ms: round(sample.elapsedMs, 0),
  };
}

function roundAll<T extends object>(value: T): T {
  return Object.fromEntries(
    Object.entries(value).map(([k, v]) => [k, typeof v === 'number' && Number.isFinite(v) ? round(v, 4) : v]),
  ) as T;
}

function commitOf(): string {
  try {
    return execFileSync('git', ['rev-parse', 'HEAD'], { encoding: 'utf8' }).trim();
  } catch {
    return 'unknown';
  }
}

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
        ? `${p}: WCU/reply ${JSON.stringify(a.write_units_per_reply)} $${a.cost_per_million_aggregates_usd}/M p50/p99 ${a.completion_latency_ms.p50}/${a.completion_latency_ms.p99} ms`
        : `${p}: not run`;
    }),
    `$/M aggregates ${results.cost_per_million_aggregates_usd} (Step Functions ${results.cost.step_functions_standard.total_per_million})`,
  ].join(' | ');
}

await main();
