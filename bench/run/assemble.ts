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
import { addUsage, billPerMillion, usageOf } from '../cost/usage.ts';
import type { Calibration } from '../measure/calibrate.ts';
import { grouped, total } from '../measure/counters.ts';
import {
  type Results,
  type Sanity,
  type ScalePoint,
  snakeKeys,
  type TimerVariantFigures,
} from '../report/schema.ts';
import type { ReplyBatching } from '../rig/rig.ts';
import type { HotMeasurement } from '../workload/hot-aggregate.ts';
import {
  type ArrivalPhaseResult,
  type CapacitySample,
  packedWriteUnitsPerReply,
  percentile,
  storedPayloadBytes,
} from '../workload/phases.ts';
import { arrivalResults, independentSpanSeconds } from './arrival.ts';
import { faninWho, perReply, round, roundAll } from './figures.ts';
import type { HotModelRow } from './hot.ts';
import { OPEN_TIME_ASSUMPTIONS, type OpenTimeFigures, openTimeResults } from './open-time.ts';
import { AWS_LIMITS, HEADLINE_PATTERN, ROTATION, SPREAD } from './plan.ts';
import { fitUnits, type NaiveResult } from './scale.ts';
import {
  ARRIVAL_TIMER_VARIANT,
  armingPerAggregate,
  firingPerTimer,
  type TimerFiring,
  type TimerFirings,
} from './timers.ts';

/** Spread beyond which the raw-capacity windows disagree too much for a ratio to mean anything. */
const CAPACITY_SPREAD_LIMIT = 0.25;

/** Everything a run measured, as the results need it. */
export interface Measured {
  readonly quick: boolean;
  readonly started: number;
  readonly loadAtStart: number[];
  readonly emulators: string[];
  readonly prices: Prices;
  readonly calibration: Calibration;
  readonly capacity: {
    before: CapacitySample;
    after: CapacitySample;
    concurrency: number;
    durationMs: number;
  };
  readonly saturated: ArrivalPhaseResult;
  readonly arrival: readonly ArrivalPhaseResult[];
  /** The topology's reply batching window and batch size. */
  readonly defaultBatching: ReplyBatching;
  /** Aggregates per paced arrival phase at fan-out 10. */
  readonly arrivalAggregates: number;
  readonly pace: number;
  readonly timers: TimerFirings;
  /** The open-time dimension (`open-time.ts`): by deadline. */
  readonly openTime?: readonly OpenTimeFigures[];
  /** The other long timers (`open-time.ts`, `TIMER_KINDS`): by kind. */
  readonly timerKinds?: Readonly<Record<string, OpenTimeFigures>>;
  readonly topology: Parameters<typeof fixedMonthly>[1];
  readonly readmeAtRest: number | undefined;
  readonly naiveHeadline: NaiveResult;
  readonly scale: ScalePoint[];
  readonly samplingCheck: Results['baseline_sampling_check'];
  readonly hot: HotMeasurement;
  readonly hotSharded: HotMeasurement;
  readonly model: readonly HotModelRow[];
  readonly sanity: Sanity;
}

/**
 * The results (`bench/results/*.json`, see `schema.ts`) from what the phases measured: the
 * contract figures first (the headline pattern's), then the headline run per reply, the
 * saturated run against the store's capacity, the costs, the scale curve and the hot aggregate.
 */
export function assemble(input: Measured): Results {
  const { prices } = input;
  const arrival = arrivalResults(input.arrival, input.defaultBatching, input.timers, input.prices);
  const headline = input.arrival.find(
    (p) =>
      p.pattern === HEADLINE_PATTERN &&
      p.batchingWindowSeconds === input.defaultBatching.windowSeconds &&
      p.batchSize === input.defaultBatching.batchSize &&
      p.drainIntervalSeconds === (input.defaultBatching.drainIntervalSeconds ?? 0) &&
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

  // Cost of one aggregate: its own work plus its deadline timer firing later (measured apart), in
  // the variant that arrives as the headline's requests do; the paced variant's beside it.
  const timers = input.timers[ARRIVAL_TIMER_VARIANT];
  const timerUsage = usageOf(timers.counters, 'fanin', Math.max(1, timers.fired), prices);
  const pacedTimerUsage = usageOf(
    input.timers.paced.counters,
    'fanin',
    Math.max(1, input.timers.paced.fired),
    prices,
  );
  const ownUsage = usageOf(c, 'fanin', aggregates, prices);
  const faninUsage = addUsage(ownUsage, timerUsage);
  const clientUsage = usageOf(c, 'clients', aggregates, prices);
  const faninBill = billPerMillion(faninUsage, prices);
  const clientBill = billPerMillion(clientUsage, prices);
  const pacedFaninBill = billPerMillion(addUsage(ownUsage, pacedTimerUsage), prices);
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
  const packedUnits = packedWriteUnitsPerReply();
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
        timer_firing_sqs_calls_by_operation: timerSqsCalls(timers, 10),
        timer_firing_sqs_calls_by_operation_paced: timerSqsCalls(input.timers.paced, 10),
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
      scenario: `fan-out 10, 1 KB replies arriving ${HEADLINE_PATTERN}ly, requests sent in batches of ten, deadline timer armed and fired once, result to a FIFO queue`,
      timer_firing: ARRIVAL_TIMER_VARIANT,
      fanin: {
        usage_per_aggregate: snakeKeys(roundAll(faninUsage)),
        per_million_aggregates: snakeKeys(roundAll(faninBill)),
        timer_firing_usage: snakeKeys(roundAll(timerUsage)),
        timer_firing_usage_paced: snakeKeys(roundAll(pacedTimerUsage)),
      },
      fanin_clients: {
        usage_per_aggregate: snakeKeys(roundAll(clientUsage)),
        per_million_aggregates: snakeKeys(roundAll(clientBill)),
      },
      fanin_total_per_million: faninTotal,
      fanin_total_per_million_timers_paced: round(pacedFaninBill.total + clientBill.total, 2),
      step_functions_standard: {
        transitions_per_aggregate: sfn.transitions,
        orchestration_per_million: snakeKeys(roundAll(sfnBill)),
        clients_per_million: snakeKeys(roundAll(sfnClientBill)),
        total_per_million: round(sfnBill.total + sfnClientBill.total, 2),
      },
      step_functions_express: {
        per_million_by_answer_seconds: expressAt,
        cheaper_than_fanin_below_seconds: expressBreakEvenSeconds(faninTotal, prices),
      },
      reply_floor_per_million: {
        one_reply_per_batch: round(replyFloorPerMillion(10, { repliesPerBatch: 1 }, prices), 2),
        ten_replies_per_batch: round(replyFloorPerMillion(10, { repliesPerBatch: 10 }, prices), 2),
        packed_one_message_per_receive: round(
          replyFloorPerMillion(
            10,
            { repliesPerBatch: 10, messagesPerReceive: 1, writeUnitsPerReply: packedUnits },
            prices,
          ),
          2,
        ),
        packed_full_receives: round(
          replyFloorPerMillion(10, { repliesPerBatch: 10, writeUnitsPerReply: packedUnits }, prices),
          2,
        ),
        packed_write_units_per_reply: round(packedUnits, 3),
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
    scale: input.scale.map(snakeKeys),
    baseline_sampling_check: input.samplingCheck,
    hot_aggregate: {
      measured: { ...snakeKeys(roundAll(input.hot)), counters: undefined },
      sharded: { ...snakeKeys(roundAll(input.hotSharded)), counters: undefined },
      aws_limits: snakeKeys(AWS_LIMITS),
      model: input.model.map(({ design, bounds, simulation }) => ({
        design: snakeKeys(design),
        bounds: snakeKeys(roundAll(bounds)),
        simulation: snakeKeys(roundAll(simulation)),
      })),
    },
    calibration: snakeKeys(input.calibration),
    timers: {
      fired: timers.fired,
      completed_first: timers.outcomes,
      used: ARRIVAL_TIMER_VARIANT,
      batched: timerVariantFigures(input.timers.batched, prices),
      paced: timerVariantFigures(input.timers.paced, prices),
      ...(input.openTime
        ? {
            by_open_seconds: openTimeResults(input.openTime, {
              headlineUsd: faninTotal,
              stepFunctionsStandardUsd: round(sfnBill.total + sfnClientBill.total, 2),
              stepFunctionsClientsUsd: sfnClientBill.total,
              prices,
            }),
            open_time_assumptions: OPEN_TIME_ASSUMPTIONS,
          }
        : {}),
      ...(input.timerKinds ? { by_kind: input.timerKinds } : {}),
    },
    sanity: snakeKeys(input.sanity),
  };
}

/** A timer firing's SQS calls (fanin's and its event source's, empty receives left out) per aggregate over `per`. */
function timerSqsCalls(firing: TimerFiring, per: number): Record<string, number> {
  return perReply(firing.counters, 'sqs.calls', Math.max(1, firing.fired) * per, (who, d) =>
    !d.includes('(empty)') && (faninWho(who) || who === 'esm') ? `${who} ${d}` : undefined,
  );
}

/** One timer variant as the results give it: how its requests were sent and what its firing cost. */
function timerVariantFigures(firing: TimerFiring, prices: Prices): TimerVariantFigures {
  const perTimer = firingPerTimer(firing);
  const arming = armingPerAggregate(firing);
  return {
    requests:
      firing.requestsPerSecond === undefined
        ? 'all at once, in SendMessageBatches of ten (as the arrival phases send them)'
        : `one SendMessage at a time, ${firing.requestsPerSecond} per second`,
    requests_per_second: firing.requestsPerSecond ?? null,
    definition: firing.definition,
    aggregates: firing.aggregates,
    fired: firing.fired,
    fired_early: firing.firedEarly,
    completed_first: firing.outcomes,
    arming_per_aggregate: {
      fan_out_invocations: round(arming.fanOutInvocations, 3),
      timer_sends: round(arming.timerSends, 3),
    },
    firing_per_aggregate: {
      receives: round(perTimer.receives, 3),
      deletes: round(perTimer.deletes, 3),
      invocations: round(perTimer.invocations, 3),
      records_per_invocation: round(perTimer.recordsPerInvocation, 2),
    },
    usage_per_aggregate: snakeKeys(
      roundAll(usageOf(firing.counters, 'fanin', Math.max(1, firing.fired), prices)),
    ),
    sqs_calls_by_operation: timerSqsCalls(firing, 1),
  };
}

function capacityFigures(sample: CapacitySample): Results['store_capacity']['before'] {
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
