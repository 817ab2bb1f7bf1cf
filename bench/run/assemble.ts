import { execFileSync } from 'node:child_process';
import { cpus, loadavg, totalmem } from 'node:os';
import {
  expressBreakEvenSeconds,
  stepFunctionsExpressPerMillion,
  stepFunctionsUsage,
} from '../cost/anchors.ts';
import { fixedMonthly } from '../cost/fixed.ts';
import { replyFloorPerMillion } from '../cost/floor.ts';
import type { Prices } from '../cost/prices.ts';
import { addUsage, type Bill, billPerMillion, type Usage, usageOf } from '../cost/usage.ts';
import { grouped, total } from '../measure/counters.ts';
import { prose } from '../report/format.ts';
import {
  type ArrivalPhaseResult,
  type CapacitySample,
  packedWriteUnitsPerReply,
  percentile,
  storedPayloadBytes,
} from '../workload/phases.ts';
import { arrivalResults, independentSpanSeconds, pacedPhase } from './arrival.ts';
import { faninWho, perReply, round, roundAll, snakeKeys } from './figures.ts';
import type { measureAll } from './measure-all.ts';
import { OPEN_TIME_ASSUMPTIONS, openTimeResults, RESPONDER_ASSUMPTIONS } from './open-time.ts';
import { AWS_LIMITS, HEADLINE_PATTERN, ROTATION, SPREAD } from './plan.ts';
import { fitUnits, type NaiveResult, type ScalePoint } from './scale.ts';
import {
  ARRIVAL_TIMER_VARIANT,
  firingUsage,
  type TimerFirings,
  timerSqsCalls,
  timerVariantFigures,
} from './timers.ts';

/** Spread beyond which the raw-capacity windows disagree too much for a ratio to mean anything. */
const CAPACITY_SPREAD_LIMIT = 0.25;

/** Everything a run measured, as the results need it. */
export type Measured = Awaited<ReturnType<typeof measureAll>> & {
  readonly quick: boolean;
  readonly started: number;
  readonly loadAtStart: number[];
  readonly emulators: string[];
  readonly prices: Prices;
  readonly readmeAtRest: number | undefined;
};

/** The results (`bench/results/*.json`, see `report/schema.ts`) from what the phases measured. */
export function assemble(input: Measured) {
  const arrival = arrivalResults(input.arrival, input.defaultBatching, input.timers, input.prices);
  const head = arrival[HEADLINE_PATTERN];
  const { saturated } = input;
  const repliesPerSecond = (saturated.replies * 1000) / saturated.releaseToLastResultMs;
  const headline = headlinePhase(input);
  const cost = costFigures(input, headline);
  const scale = scaleFigures(input.scale);
  const capacity = storeCapacity(input.capacity, repliesPerSecond);
  return {
    ...runFigures(input),
    headline_pattern: HEADLINE_PATTERN,
    arrival,
    arrival_setup: {
      offered_replies_per_second: round(input.pace, 1),
      rotation: ROTATION,
      spread: snakeKeys(SPREAD),
      default_batching_window_seconds: input.defaultBatching.windowSeconds,
      default_batch_size: input.defaultBatching.batchSize,
      independent_reply_span_seconds: round(independentSpanSeconds(input.arrivalAggregates, input.pace), 1),
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
    ...scale,
    sqs_calls_per_reply: head.sqs_calls_per_reply['10'] ?? Number.NaN,
    fraction_of_store_capacity: capacity.meaningful ? round(repliesPerSecond / capacity.mean, 3) : null,
    cost_per_million_aggregates_usd: head.cost_per_million_aggregates_usd,
    headline: headlineFigures(headline, input.timers),
    saturated: {
      pattern: 'independent',
      aggregates: saturated.aggregates,
      replies: saturated.replies,
      release_to_last_result_ms: round(saturated.releaseToLastResultMs, 0),
      write_units_per_reply: round(total(saturated.counters, 'ddb.wcu', faninWho) / saturated.replies, 3),
    },
    store_capacity: capacity.figures,
    cost,
    scale: input.scale.map(snakeKeys),
    baseline_sampling_check: input.samplingCheck,
    hot_aggregate: hotAggregate(input),
    calibration: snakeKeys(input.calibration),
    timers: timersFigures(input, cost),
    sanity: snakeKeys(input.sanity),
  };
}

/** The arrival phase of the headline figures: its pattern at the topology's batching, fan-out 10. */
export function headlinePhase(input: Pick<Measured, 'arrival' | 'defaultBatching'>): ArrivalPhaseResult {
  const headline = pacedPhase(input.arrival, HEADLINE_PATTERN, input.defaultBatching);
  if (!headline) throw new Error('no headline arrival phase');
  return headline;
}

/** When, where and how the run was made. */
function runFigures(input: Measured) {
  const args = process.argv.length > 2 ? ['--', ...process.argv.slice(2)] : [];
  return {
    schema: 2 as const,
    date: new Date().toISOString(),
    commit: commitOf(),
    quick: input.quick,
    command: ['npm run bench', ...args].join(' '),
    duration_seconds: Math.round((performance.now() - input.started) / 1000),
    machine: {
      cpus: cpus().length,
      memory_gib: round(totalmem() / 2 ** 30, 1),
      node: process.version,
      load_average_start: input.loadAtStart.map((n) => round(n)),
      load_average_end: loadavg().map((n) => round(n)),
      emulators: input.emulators,
    },
  };
}

/** The scale curve's contract figures: write units per reply and the baseline's ratio by fan-out. */
export function scaleFigures(points: readonly ScalePoint[]) {
  const byFanOut = (value: (p: ScalePoint) => number) =>
    Object.fromEntries(points.map((p) => [String(p.fanOut), value(p)]));
  const fit = fitUnits(points);
  return {
    write_units_per_reply: byFanOut((p) => round(p.fanin.writeUnitsPerReply, 3)),
    baseline_ratio: byFanOut((p) => round(p.ratio, 2)),
    write_units_fit: { per_reply: round(fit.perReply, 3), per_aggregate: round(fit.perAggregate, 1) },
  };
}

/** The headline run per reply: units, calls and invocations by who and operation. */
function headlineFigures(headline: ArrivalPhaseResult, timers: TimerFirings) {
  const { replies, counters: c } = headline;
  const notEmpty = (detail: string) => !detail.includes('(empty)');
  const byFaninOp = (metric: string) =>
    perReply(c, metric, replies, (who, op) => (faninWho(who) ? `${who} ${op}` : undefined));
  const invocations = grouped(c, 'lambda.invocations', (who) => who);
  return {
    pattern: HEADLINE_PATTERN,
    aggregates: headline.aggregates,
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
      write_units_by_operation: byFaninOp('ddb.wcu'),
      read_units_by_operation: byFaninOp('ddb.rcu'),
      dynamodb_calls_by_operation: byFaninOp('ddb.calls'),
      sqs_calls_by_operation: perReply(c, 'sqs.calls', replies, (who, d) =>
        notEmpty(d) ? `${who} ${d}` : undefined,
      ),
      sqs_billed_requests: perReply(c, 'sqs.billed', replies, (who, d) =>
        notEmpty(d) ? `${who} ${d.split('|')[0]}` : undefined,
      ),
      timer_firing_sqs_calls_by_operation: timerSqsCalls(timers[ARRIVAL_TIMER_VARIANT], 10),
      timer_firing_sqs_calls_by_operation_paced: timerSqsCalls(timers.paced, 10),
      handler_invocations: perReply(c, 'lambda.invocations', replies, (who) => who),
      records_per_invocation: Object.fromEntries(
        Object.entries(invocations).map(([handler, n]) => [
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
  };
}

/** The raw store capacity before and after the saturated run, and whether a fraction of it means anything. */
export function storeCapacity(capacity: Measured['capacity'], repliesPerSecond: number) {
  const { before, after } = capacity;
  const mean = (before.writesPerSecond + after.writesPerSecond) / 2;
  const spread = Math.abs(after.writesPerSecond - before.writesPerSecond) / mean;
  const slices = [...before.perSecond, ...after.perSecond];
  const meaningful = spread <= CAPACITY_SPREAD_LIMIT;
  const fractionOf = (puts: number) => round(repliesPerSecond / puts, 3);
  return {
    mean,
    meaningful,
    figures: {
      item: 'a reply item with a 1 KB body',
      concurrency: capacity.concurrency,
      window_ms: capacity.durationMs,
      before: capacityFigures(before),
      after: capacityFigures(after),
      mean_puts_per_second: round(mean, 1),
      spread: round(spread, 3),
      spread_limit: CAPACITY_SPREAD_LIMIT,
      per_second_range: [Math.min(...slices), Math.max(...slices)],
      fraction_range: [
        fractionOf(Math.max(before.writesPerSecond, after.writesPerSecond)),
        fractionOf(Math.min(before.writesPerSecond, after.writesPerSecond)),
      ],
      meaningful,
    },
  };
}

/** `cost`: the headline's bills beside Step Functions', the floor, the naive baseline and the fixed costs. */
function costFigures(input: Measured, headline: ArrivalPhaseResult) {
  const { prices, timers } = input;
  const { counters: c, aggregates } = headline;
  // One aggregate's cost: its own work plus its deadline timer firing later (measured apart).
  const ownUsage = usageOf(c, 'fanin', aggregates, prices);
  const timerUsage = firingUsage(timers[ARRIVAL_TIMER_VARIANT], prices);
  const pacedTimerUsage = firingUsage(timers.paced, prices);
  const faninUsage = addUsage(ownUsage, timerUsage);
  const clientUsage = usageOf(c, 'clients', aggregates, prices);
  const faninBill = billPerMillion(faninUsage, prices);
  const clientBill = billPerMillion(clientUsage, prices);
  const pacedFaninBill = billPerMillion(addUsage(ownUsage, pacedTimerUsage), prices);
  const sfn = stepFunctionsUsage(10, c, aggregates, prices);
  const sfnBill = billPerMillion(sfn.orchestration, prices, sfn.transitions);
  const sfnClientBill = billPerMillion(sfn.clients, prices);
  const faninTotal = round(faninBill.total + clientBill.total, 2);
  const bill = (x: Bill) => snakeKeys(roundAll(x));
  const usage = (x: Usage) => snakeKeys(roundAll(x));
  return {
    prices_taken: prices.taken,
    region: prices.region,
    scenario: prose`fan-out 10, 1 KB replies arriving ${HEADLINE_PATTERN}ly, requests sent in batches of ten,
      deadline timer armed and fired once, result to a FIFO queue`,
    timer_firing: ARRIVAL_TIMER_VARIANT,
    fanin: {
      usage_per_aggregate: usage(faninUsage),
      per_million_aggregates: bill(faninBill),
      timer_firing_usage: usage(timerUsage),
      timer_firing_usage_paced: usage(pacedTimerUsage),
    },
    fanin_clients: { usage_per_aggregate: usage(clientUsage), per_million_aggregates: bill(clientBill) },
    fanin_total_per_million: faninTotal,
    fanin_total_per_million_timers_paced: round(pacedFaninBill.total + clientBill.total, 2),
    step_functions_standard: {
      transitions_per_aggregate: sfn.transitions,
      orchestration_per_million: bill(sfnBill),
      clients_per_million: bill(sfnClientBill),
      total_per_million: round(sfnBill.total + sfnClientBill.total, 2),
    },
    step_functions_express: {
      per_million_by_answer_seconds: [0.5, 1, 5, 30, 60, 300].map((seconds) => ({
        seconds,
        per_million_usd: round(stepFunctionsExpressPerMillion(seconds, prices), 2),
      })),
      cheaper_than_fanin_below_seconds: expressBreakEvenSeconds(faninTotal, prices),
    },
    reply_floor_per_million: replyFloors(prices),
    naive_baseline_dynamodb: naiveBaseline(input.naiveHeadline, prices),
    fixed_monthly: fixedFigures(input),
  };
}

/** The floor of any design at fan-out 10, one reply per batch to whole packs. */
function replyFloors(prices: Prices) {
  const packed = packedWriteUnitsPerReply();
  const floor = (batching: Parameters<typeof replyFloorPerMillion>[1]) =>
    round(replyFloorPerMillion(10, batching, prices), 2);
  return {
    one_reply_per_batch: floor({ repliesPerBatch: 1 }),
    ten_replies_per_batch: floor({ repliesPerBatch: 10 }),
    packed_one_message_per_receive: floor({
      repliesPerBatch: 10,
      messagesPerReceive: 1,
      writeUnitsPerReply: packed,
    }),
    packed_full_receives: floor({ repliesPerBatch: 10, writeUnitsPerReply: packed }),
    packed_write_units_per_reply: round(packed, 3),
  };
}

/** The naive baseline's DynamoDB usage and bill at the headline. */
export function naiveBaseline(naive: NaiveResult, prices: Prices) {
  const units = (metric: string) =>
    total(naive.counters, metric, (who) => who === 'naive') / naive.aggregates;
  const usage = { writeUnits: units('ddb.wcu'), readUnits: units('ddb.rcu'), sqsStandard: 0, sqsFifo: 0 };
  return {
    usage_per_aggregate: { write_units: round(usage.writeUnits, 2), read_units: round(usage.readUnits, 2) },
    per_million_aggregates: round(
      billPerMillion({ ...usage, invocations: 0, lambdaMs: 0 }, prices).dynamodb,
      2,
    ),
  };
}

/** What an idle deployment costs a month, beside README's figure. */
function fixedFigures(input: Measured) {
  const fixed = fixedMonthly(input.prices, input.topology);
  return {
    items: fixed.items.map((i) => ({ ...i, usd: round(i.usd, 3) })),
    total_usd: round(fixed.total, 2),
    readme_total_usd: input.readmeAtRest ?? null,
    reply_partitions: input.topology.replyPartitions,
  };
}

/** The hot aggregate's two layouts as measured and the AWS model's rows. */
function hotAggregate(input: Measured) {
  return {
    measured: { ...snakeKeys(roundAll(input.hot)), counters: undefined },
    sharded: { ...snakeKeys(roundAll(input.hotSharded)), counters: undefined },
    aws_limits: snakeKeys(AWS_LIMITS),
    model: input.model.map(({ design, bounds, simulation }) => ({
      design: snakeKeys(design),
      bounds: snakeKeys(roundAll(bounds)),
      simulation: snakeKeys(roundAll(simulation)),
    })),
  };
}

/** `timers`: both deadline-timer variants, and the open-time dimension against the headline. */
function timersFigures(input: Measured, cost: ReturnType<typeof costFigures>) {
  const { prices } = input;
  const used = input.timers[ARRIVAL_TIMER_VARIANT];
  return {
    fired: used.fired,
    completed_first: used.outcomes,
    used: ARRIVAL_TIMER_VARIANT,
    batched: timerVariantFigures(input.timers.batched, prices),
    paced: timerVariantFigures(input.timers.paced, prices),
    ...(input.openTime
      ? {
          by_open_seconds: openTimeResults(input.openTime, {
            headlineUsd: cost.fanin_total_per_million,
            stepFunctionsStandardUsd: cost.step_functions_standard.total_per_million,
            stepFunctionsClientsUsd: cost.step_functions_standard.clients_per_million.total,
            prices,
          }),
          open_time_assumptions: OPEN_TIME_ASSUMPTIONS,
        }
      : {}),
    ...(input.timerKinds ? { by_kind: input.timerKinds } : {}),
    ...(input.responders
      ? { responders: input.responders, responders_assumptions: RESPONDER_ASSUMPTIONS }
      : {}),
  };
}

function capacityFigures(sample: CapacitySample) {
  return {
    puts_per_second: round(sample.writesPerSecond, 1),
    per_second: sample.perSecond,
    duration_ms: round(sample.elapsedMs, 0),
  };
}

function commitOf(): string {
  try {
    return execFileSync('git', ['rev-parse', 'HEAD'], { encoding: 'utf8' }).trim();
  } catch {
    return 'unknown';
  }
}
