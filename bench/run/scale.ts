import { diff, total } from '../measure/counters.ts';
import type { Meter } from '../measure/meter.ts';
import type { Rig } from '../rig/rig.ts';
import { type NaiveAggregateStore, runNaive, sampleNaive } from '../workload/naive-baseline.ts';
import { Bodies, type FaninPhaseResult, runFanin } from '../workload/phases.ts';
import { faninWho, round } from './figures.ts';
import { log } from './log.ts';
import { type Plan, SAMPLED_POSITIONS } from './plan.ts';

/** One fan-out of the scale curve: fanin and the naive baseline on the same replies. */
export type ScalePoint = ReturnType<typeof scalePoint>;

/** The scale curve: at each of the plan's fan-outs, small replies arriving together through fanin. */
export async function runScale(
  rig: Rig,
  naive: NaiveAggregateStore,
  options: { readonly plan: Plan; readonly replayUpTo: number; readonly concurrency: number },
) {
  const { plan, replayUpTo, concurrency } = options;
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
        await measureNaive(rig.meter, naive, {
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
      baseline = await sampledNaiveFigures(rig, naive, `n${fanOut}`, fanOut, SAMPLED_POSITIONS);
    }
    scale.push(scalePoint(fanOut, aggregates, fanin, baseline));
  }
  // The sampling is checked at the largest fan-out that was replayed.
  const replayed = scale.filter((p) => p.baseline.method === 'replayed').at(-1);
  const samplingCheck = replayed ? await checkSampling(rig, naive, replayed) : undefined;
  return { scale, samplingCheck };
}

/** The baseline at one fan-out both replayed and sampled: how far the sampling is from the replay. */
async function checkSampling(rig: Rig, naive: NaiveAggregateStore, replayed: ScalePoint) {
  const positions = Math.min(SAMPLED_POSITIONS, Math.max(10, replayed.fanOut / 10));
  log(`baseline sampling check: fan-out ${replayed.fanOut} sampled at ${positions} positions`);
  const sampled = await sampledNaiveFigures(rig, naive, 'ncheck', replayed.fanOut, positions);
  return {
    fan_out: replayed.fanOut,
    positions,
    replayed_write_units_per_reply: round(replayed.baseline.writeUnitsPerReply, 3),
    sampled_write_units_per_reply: round(sampled.writeUnitsPerReply, 3),
  };
}

/** One run of the naive baseline. */
export type NaiveResult = Awaited<ReturnType<typeof measureNaive>>;

/** Runs `aggregates` through the naive baseline, all replies of each, and counts what it did. */
export async function measureNaive(
  meter: Meter,
  store: NaiveAggregateStore,
  options: {
    idPrefix: string;
    aggregates: number;
    fanOut: number;
    body: (a: string, r: string) => string;
    concurrency: number;
  },
) {
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

/** The reply handler's writes that record replies: a transaction per batch. */
const RECORDING_OPERATIONS = new Set(['TransactWriteItems', 'PutItem']);

/** The baseline at one fan-out, per reply. */
export interface BaselineFigures {
  /** `replayed` reply by reply, or sampled at reply positions (large fan-outs, see `sampleNaive`). */
  readonly method: string;
  readonly writeUnitsPerReply: number;
  readonly recordingWriteUnitsPerReply: number;
  readonly readUnitsPerReply: number;
  /** Null when sampled. */
  readonly repliesPerSecond: number | null;
}

/** The baseline's own calls: its store's client is metered as `naive`. */
const naiveOnly = (who: string) => who === 'naive';

function naiveFigures(result: NaiveResult): BaselineFigures {
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
  rig: Rig,
  store: NaiveAggregateStore,
  aggregateId: string,
  fanOut: number,
  positions: number,
): Promise<BaselineFigures> {
  const { meter } = rig;
  const before = meter.snapshot();
  const sample = await sampleNaive(store, rig.fanin.setup.dynamo, {
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

export function scalePoint(
  fanOut: number,
  aggregates: number,
  fanin: FaninPhaseResult,
  baseline: BaselineFigures,
) {
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
    /** Baseline write units per reply over fanin's. */
    ratio: baseline.writeUnitsPerReply / faninUnits,
  };
}

/** Least-squares fit of an aggregate's write units against its fan-out over the scale curve. */
export function fitUnits(points: readonly ScalePoint[]): { perReply: number; perAggregate: number } {
  const xs = points.map((p) => p.fanOut);
  const ys = points.map((p) => p.fanin.writeUnitsPerReply * p.fanOut);
  const n = xs.length;
  const mx = xs.reduce((a, b) => a + b, 0) / n;
  const my = ys.reduce((a, b) => a + b, 0) / n;
  let sxy = 0;
  let sxx = 0;
  for (const [i, x] of xs.entries()) {
    sxy += (x - mx) * ((ys[i] ?? 0) - my);
    sxx += (x - mx) ** 2;
  }
  const perReply = sxx === 0 ? 0 : sxy / sxx;
  return { perReply, perAggregate: my - perReply * mx };
}
