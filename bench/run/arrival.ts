import { measuredFloorBatching, replyFloorBill } from '../cost/floor.ts';
import type { Prices } from '../cost/prices.ts';
import { addUsage, type Bill, billPerMillion, usageOf } from '../cost/usage.ts';
import { grouped, total } from '../measure/counters.ts';
import { prose } from '../report/format.ts';
import { ARRIVAL_PATTERNS, type ArrivalPattern } from '../rig/responders.ts';
import type { ReplyBatching, Rig } from '../rig/rig.ts';
import {
  type ArrivalPhaseResult,
  type ArrivalWorkload,
  Bodies,
  type DrainPhase,
  packedWriteUnitsPerReply,
  percentile,
  runArrival,
} from '../workload/phases.ts';
import { faninWho, round } from './figures.ts';
import { log } from './log.ts';
import { type ComparedBatching, type Plan, ROTATION, SATURATED_RELEASE, SPREAD } from './plan.ts';
import { ARRIVAL_TIMER_VARIANT, firingUsage, type TimerFiring, type TimerFirings } from './timers.ts';

/** The arrival patterns and the reply batching trade-off. */
export async function runArrivals(
  rig: Rig,
  plan: Plan,
  paced: {
    readonly defaultBatching: ReplyBatching;
    readonly pace: number;
    readonly arrivalAggregates: number;
  },
): Promise<ArrivalPhaseResult[]> {
  const { defaultBatching, pace, arrivalAggregates } = paced;
  const arrival: ArrivalPhaseResult[] = [];
  const span = independentSpanSeconds(arrivalAggregates, pace);
  log(
    prose`independent: ${Math.min(ROTATION, arrivalAggregates)} aggregates in turn, so an aggregate's
      consecutive replies are as many replies apart and its 10 replies span about ${span.toFixed(1)} s
      first to last at ${pace.toFixed(0)} replies/s`,
  );
  const run = async (what: string, workload: Omit<ArrivalWorkload, 'body'>) => {
    const { pattern, aggregates, fanOut } = workload;
    log(`arrival ${pattern}, ${what}: ${aggregates} aggregates x ${fanOut} replies of 1 KB`);
    const phase = await runArrival(rig, { ...workload, body: Bodies.kilobyte });
    logPhase(phase);
    arrival.push(phase);
  };
  const settings: ComparedBatching[] = [
    { ...defaultBatching, patterns: ARRIVAL_PATTERNS },
    ...plan.comparedBatching.filter((s) => !sameBatching(s, defaultBatching)),
  ];
  for (const setting of settings) {
    await rig.setReplyBatching(setting);
    const { windowSeconds: window, batchSize, drainIntervalSeconds: drain = 0 } = setting;
    const atDefault = sameBatching(setting, defaultBatching);
    const phases = [
      ...setting.patterns.map((pattern) => ({ pattern, straddled: false })),
      ...(drain > 0 ? (setting.straddled ?? []).map((pattern) => ({ pattern, straddled: true })) : []),
    ];
    for (const { pattern, straddled } of phases) {
      const kind = drain > 0 ? `d${drain}${straddled ? 's' : ''}` : `w${window}`;
      const consumer =
        drain > 0 ? `drained every ${drain} s${straddled ? ', straddled' : ''}` : `window ${window} s`;
      await run(`${consumer}, batch size ${batchSize}, ${pace.toFixed(0)} replies/s`, {
        pattern,
        definition: 'bench-collect',
        idPrefix: `${pattern.slice(0, 3)}${kind}${atDefault ? '' : `b${batchSize}`}`,
        aggregates: arrivalAggregates,
        fanOut: 10,
        release: { repliesPerSecond: pace, rotation: ROTATION, spread: SPREAD, senders: 4 },
        timeoutMs: 600_000,
        straddleDrain: straddled,
      });
    }
    const large = plan.largeFanOut;
    if (!atDefault || !large) continue;
    // Each pattern at the plan's large fan-out, replies as fast as they go (condensed results).
    for (const pattern of ARRIVAL_PATTERNS) {
      await run('as fast as they go (condensed)', {
        pattern,
        definition: 'bench-condense',
        idPrefix: `${pattern.slice(0, 3)}f${large.fanOut}`,
        aggregates: large.aggregates,
        fanOut: large.fanOut,
        release: { ...SATURATED_RELEASE, rotation: large.aggregates },
        timeoutMs: 900_000,
      });
    }
  }
  await rig.setReplyBatching(defaultBatching);
  return arrival;
}

/** What an arrival phase found, for the log. */
function logPhase(phase: ArrivalPhaseResult): void {
  const at = (values: readonly number[], p: number) => fmtMs(percentile(values, p));
  log(
    prose`  an aggregate's replies arrived over p50 ${at(phase.replySpansMs, 50)}, p90
      ${at(phase.replySpansMs, 90)}; completion latency p50 ${at(phase.latenciesMs, 50)}, p99
      ${at(phase.latenciesMs, 99)}`,
  );
  if (phase.drainPhase === undefined) return;
  const first = phase.firstDrainAfterReleaseMs;
  log(
    prose`  sent over ${fmtMs(phase.sendingMs)}; ${phase.drainsDuringSending} partition drains started
      meanwhile${first === undefined ? '' : `, the first ${fmtMs(first)} after the first reply`};
      ${phase.aggregatesSplitAcrossDrains ?? 0} of ${phase.aggregates} aggregates had replies taken by two
      drains or more`,
  );
}

/** First to last reply of an aggregate in `independent` (`Responders.release`). */
export function independentSpanSeconds(aggregates: number, repliesPerSecond: number): number {
  return (9 * Math.min(ROTATION, aggregates)) / repliesPerSecond;
}

function sameBatching(a: ReplyBatching, b: ReplyBatching): boolean {
  return (
    a.windowSeconds === b.windowSeconds &&
    a.batchSize === b.batchSize &&
    (a.drainIntervalSeconds ?? 0) === (b.drainIntervalSeconds ?? 0)
  );
}

/** `pattern`'s phase at fan-out 10 and the reply batching `batching`, if it was measured. */
export function pacedPhase(
  phases: readonly ArrivalPhaseResult[],
  pattern: ArrivalPattern,
  batching: ReplyBatching,
): ArrivalPhaseResult | undefined {
  return phases.find(
    (p) => p.pattern === pattern && atBatching(p, batching) && p.replies / p.aggregates === 10,
  );
}

function atBatching(phase: ArrivalPhaseResult, batching: ReplyBatching): boolean {
  const { batchingWindowSeconds: windowSeconds, batchSize, drainIntervalSeconds } = phase;
  return sameBatching({ windowSeconds, batchSize, drainIntervalSeconds }, batching);
}

const fmtMs = (ms: number) => (Number.isFinite(ms) ? `${Math.round(ms)} ms` : 'n/a');

/** One arrival phase's bills per million aggregates, with one timer variant's firing added to fanin's. */
function bills(
  phase: ArrivalPhaseResult,
  timers: TimerFiring,
  prices: Prices,
): { fanin: Bill; clients: Bill } {
  const c = phase.counters;
  const timerUsage = firingUsage(timers, prices);
  return {
    fanin: billPerMillion(addUsage(usageOf(c, 'fanin', phase.aggregates, prices), timerUsage), prices),
    clients: billPerMillion(usageOf(c, 'clients', phase.aggregates, prices), prices),
  };
}

/**
 * End to end (fanin and its clients) per million aggregates of one arrival phase with one timer variant's
 * firing.
 */
function endToEnd(phase: ArrivalPhaseResult, timers: TimerFiring, prices: Prices): number {
  const bill = bills(phase, timers, prices);
  return round(bill.fanin.total + bill.clients.total, 2);
}

type ArrivalFigures = ReturnType<typeof arrivalFigures>;

/**
 * One arrival phase's figures, per reply unless named otherwise, all-in: its share of the deadline timers'
 * firing added.
 */
function arrivalFigures(phase: ArrivalPhaseResult, firings: TimerFirings, prices: Prices) {
  const timers = firings[ARRIVAL_TIMER_VARIANT];
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
  const { fanin: faninBill, clients: clientBill } = bills(phase, timers, prices);
  // A poller's invocation is one batch; a drain's may be several (`lambda.batches`). A drain that
  // found its queue empty is not an invocation here (`lambda.idle_invocations`: the schedule idling).
  const invocations = total(c, 'lambda.invocations', (who) => who === 'reply');
  const batches = total(c, 'lambda.batches', (who) => who === 'reply');
  const records = total(c, 'lambda.records', (who) => who === 'reply');
  const groups = total(c, 'lambda.aggregates', (who) => who === 'reply');
  // Receives from the reply partitions that returned messages, by an event source or a drain.
  const replyReceives = total(c, 'sqs.calls', (who, d) => faninSide(who) && d === 'ReceiveMessage|reply');
  return {
    fan_out: replies / aggregates,
    batching_window_seconds: phase.batchingWindowSeconds,
    batch_size: phase.batchSize,
    drain_interval_seconds: phase.drainIntervalSeconds,
    ...drainFigures(phase),
    offered_replies_per_second: Number.isFinite(phase.offeredRepliesPerSecond)
      ? round(phase.offeredRepliesPerSecond, 1)
      : null,
    aggregates,
    replies,
    write_units: round(allIn('ddb.wcu', faninWho), 3),
    index_write_units: round(allIn('ddb.wcu_index', faninWho), 3),
    failed_condition_write_units: round(allIn('ddb.wcu_cond_failed', faninWho), 4),
    failed_conditions_per_aggregate: Object.fromEntries(
      Object.entries(grouped(c, 'ddb.cond_failed', (who, op) => (faninWho(who) ? op : undefined)))
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([op, n]) => [op, round(n / aggregates, 4)]),
    ),
    read_units: round(allIn('ddb.rcu', faninWho), 3),
    sqs_calls: round(
      allIn('sqs.calls', (who, d) => faninSide(who) && notEmpty(d)),
      3,
    ),
    client_sqs_calls: round(total(c, 'sqs.calls', (who, d) => who === 'clients' && notEmpty(d)) / replies, 3),
    reply_invocations: round(invocations / replies, 3),
    reply_receives: round(replyReceives / replies, 3),
    replies_per_batch: round(records / Math.max(1, batches), 2),
    replies_per_aggregate_per_batch: round(records / Math.max(1, groups), 2),
    cost_per_million_aggregates_usd: round(faninBill.total + clientBill.total, 2),
    fanin_only_per_million_usd: round(faninBill.total, 2),
    timer_firing: ARRIVAL_TIMER_VARIANT,
    cost_per_million_aggregates_usd_timers_paced: endToEnd(phase, firings.paced, prices),
    completion_latency_ms: percentiles(phase.latenciesMs, 50, 99),
    reply_span_ms: percentiles(phase.replySpansMs, 50, 90),
    outcomes: phase.outcomes,
  };
}

/** Drained rows only: how the phase's sending lay against the drains. */
function drainFigures(phase: ArrivalPhaseResult): {
  readonly drain_phase?: DrainPhase;
  /** Aggregates whose replies were taken by more than one drain. */
  readonly aggregates_split_across_drains?: number;
  readonly drain_timing?: {
    /** From the first reply released to the last sent. */
    readonly sending_ms: number;
    /** Drains (one per partition and interval) that started while the replies were being sent. */
    readonly partition_drains_during_sending: number;
    /** From the first reply released to the first of those drains; null when none started. */
    readonly first_drain_after_release_ms: number | null;
  };
} {
  if (phase.drainPhase === undefined) return {};
  const first = phase.firstDrainAfterReleaseMs;
  return {
    drain_phase: phase.drainPhase,
    aggregates_split_across_drains: phase.aggregatesSplitAcrossDrains ?? 0,
    drain_timing: {
      sending_ms: round(phase.sendingMs, 0),
      partition_drains_during_sending: phase.drainsDuringSending,
      first_drain_after_release_ms: first === undefined ? null : round(first, 0),
    },
  };
}

/** Two percentiles of `values` (ms, rounded), named `p<n>`, and how many samples they are of. */
function percentiles<L extends number, H extends number>(
  values: readonly number[],
  low: L,
  high: H,
): Readonly<Record<`p${L}` | `p${H}` | 'samples', number>> {
  return {
    [`p${low}`]: round(percentile(values, low), 0),
    [`p${high}`]: round(percentile(values, high), 0),
    samples: values.length,
  } as Record<`p${L}` | `p${H}` | 'samples', number>;
}

/** `arrival.<pattern>.by_batching`: one reply batching setting (window and batch size, or a drain) at fan-out 10. */
function batchingComparison(f: ArrivalFigures) {
  return {
    batching_window_seconds: f.batching_window_seconds,
    batch_size: f.batch_size,
    /** 0: an event source. */
    drain_interval_seconds: f.drain_interval_seconds,
    ...(f.drain_phase === undefined
      ? {}
      : { drain_phase: f.drain_phase, aggregates_split_across_drains: f.aggregates_split_across_drains }),
    write_units_per_reply: f.write_units,
    /** End to end (fanin plus its clients' SQS calls). */
    cost_per_million_aggregates_usd: f.cost_per_million_aggregates_usd,
    completion_latency_ms: f.completion_latency_ms,
    replies_per_batch: f.replies_per_batch,
    replies_per_aggregate_per_batch: f.replies_per_aggregate_per_batch,
    reply_invocations_per_reply: f.reply_invocations,
    reply_receives_per_reply: f.reply_receives,
    sqs_calls_per_reply: f.sqs_calls,
    read_units_per_reply: f.read_units,
    reply_span_ms: f.reply_span_ms,
  };
}

/** The results' `arrival`: per pattern, the contract figures. */
export function arrivalResults(
  phases: readonly ArrivalPhaseResult[],
  defaultBatching: ReplyBatching,
  timers: TimerFirings,
  prices: Prices,
): Record<ArrivalPattern, ArrivalPatternResult> {
  const out: Partial<Record<ArrivalPattern, ArrivalPatternResult>> = {};
  for (const pattern of ARRIVAL_PATTERNS) {
    const mine = phases.filter((p) => p.pattern === pattern);
    const atDefault = mine.filter((p) => atBatching(p, defaultBatching));
    const paced = pacedPhase(mine, pattern, defaultBatching);
    if (!paced) continue;
    const others = mine.filter((p) => !atBatching(p, defaultBatching));
    out[pattern] = patternResult({ paced, atDefault, others, defaultBatching, timers, prices });
  }
  return out as Record<ArrivalPattern, ArrivalPatternResult>;
}

type ArrivalPatternResult = ReturnType<typeof patternResult>;

/** One arrival pattern (`arrival.<pattern>`): the contract fields first, then every phase measured. */
function patternResult(run: {
  /** The pattern's fan-out 10 phase at the topology's batching. */
  readonly paced: ArrivalPhaseResult;
  readonly atDefault: readonly ArrivalPhaseResult[];
  readonly others: readonly ArrivalPhaseResult[];
  readonly defaultBatching: ReplyBatching;
  readonly timers: TimerFirings;
  readonly prices: Prices;
}) {
  const { timers, prices } = run;
  const figures = run.atDefault.map((p) => arrivalFigures(p, timers, prices));
  const headline = arrivalFigures(run.paced, timers, prices);
  const byFanOut = (pick: (f: ArrivalFigures) => number) =>
    Object.fromEntries(figures.map((f) => [String(f.fan_out), pick(f)]));
  const others = run.others.map((p) => arrivalFigures(p, timers, prices));
  return {
    write_units_per_reply: byFanOut((f) => f.write_units),
    read_units_per_reply: byFanOut((f) => f.read_units),
    sqs_calls_per_reply: byFanOut((f) => f.sqs_calls),
    /** Fan-out 10, end to end (fanin plus its clients' SQS calls). */
    cost_per_million_aggregates_usd: headline.cost_per_million_aggregates_usd,
    cost_per_million_aggregates_usd_timers_paced: headline.cost_per_million_aggregates_usd_timers_paced,
    ...ownWork(run.paced, headline, timers, prices),
    timer_firing: ARRIVAL_TIMER_VARIANT,
    completion_latency_ms: headline.completion_latency_ms,
    batching_window_seconds: run.defaultBatching.windowSeconds,
    batch_size: run.defaultBatching.batchSize,
    /** At the topology's batching setting, every fan-out. */
    measured: figures,
    /** Fan-out 10 at the other batching settings. */
    other_batching_windows: others,
    /** Every reply batching setting measured with this pattern at fan-out 10, the topology's first. */
    by_batching: [headline, ...others.filter((f) => f.fan_out === 10)].map(batchingComparison),
  };
}

/** The aggregate's own work of one fan-out 10 phase. */
function ownWork(phase: ArrivalPhaseResult, figures: ArrivalFigures, timers: TimerFirings, prices: Prices) {
  const fanOut = phase.replies / phase.aggregates;
  const batching = measuredFloorBatching(figures, fanOut, packedWriteUnitsPerReply());
  const floor = replyFloorBill(fanOut, batching, prices);
  const { fanin, clients } = bills(phase, timers[ARRIVAL_TIMER_VARIANT], prices);
  const of = (service: 'dynamodb' | 'sqs' | 'lambda') =>
    round(fanin[service] + clients[service] - floor[service], 2);
  return {
    own_work_per_million_aggregates_usd: round(figures.cost_per_million_aggregates_usd - floor.total, 2),
    own_work_by_service_usd: { dynamodb: of('dynamodb'), sqs: of('sqs'), lambda: of('lambda') },
    reply_floor_per_million_aggregates_usd: round(floor.total, 2),
    reply_floor_batching: {
      replies_per_batch: round(batching.repliesPerBatch, 2),
      messages_per_receive: round(batching.messagesPerReceive ?? batching.repliesPerBatch, 2),
      write_units_per_reply: round(batching.writeUnitsPerReply ?? 1, 3),
    },
  };
}
