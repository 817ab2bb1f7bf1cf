import type { Bill as CamelBill, Usage as CamelUsage } from '../cost/usage.ts';
import type { Calibration } from '../measure/calibrate.ts';
import type { AwsLimits, HotBounds, HotDesign, HotSimulation } from '../model/hot-aggregate.ts';
import type { OpenTimeFigures, OpenTimeResult, ResponderCosts } from '../run/open-time.ts';
import type { HotMeasurement } from '../workload/hot-aggregate.ts';
import type { DrainPhase as DrainPhaseName } from '../workload/phases.ts';

/** The shape of `bench/results/*.json` (schema 2). */

/** `writeUnits` → `write_units`, as a type. */
type SnakeCase<S extends string> = S extends `${infer C}${infer R}`
  ? `${C extends Lowercase<C> ? C : `_${Lowercase<C>}`}${SnakeCase<R>}`
  : S;

/** `T` with every field named in snake_case, as the results JSON names them. */
export type Snake<T> = T extends readonly (infer U)[]
  ? readonly Snake<U>[]
  : T extends object
    ? { readonly [K in keyof T as K extends string ? SnakeCase<K> : K]: Snake<T[K]> }
    : T;

/** A copy of `value` with every camelCase field name in snake_case, at any depth. */
export function snakeKeys<T>(value: T): Snake<T> {
  if (Array.isArray(value)) return value.map(snakeKeys) as Snake<T>;
  if (value === null || typeof value !== 'object') return value as Snake<T>;
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) {
    const name = /^[a-z][a-z0-9]*(?:[A-Z][a-z0-9]*)+$/.test(key)
      ? key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)
      : key;
    out[name] = snakeKeys(v);
  }
  return out as Snake<T>;
}

type Usage = Snake<CamelUsage>;
type ByKey = Readonly<Record<string, number>>;
type Latency = { readonly p50: number; readonly p99: number; readonly samples: number };
type Span = { readonly p50: number; readonly p90: number; readonly samples: number };
type Bill = Snake<CamelBill>;

/** One fan-out of the scale curve: fanin and the naive baseline on the same replies. */
export interface ScalePoint {
  readonly fanOut: number;
  readonly aggregates: number;
  readonly replies: number;
  readonly fanin: {
    readonly writeUnitsPerReply: number;
    readonly recordingWriteUnitsPerReply: number;
    readonly indexWriteUnitsPerReply: number;
    readonly readUnitsPerReply: number;
    readonly repliesPerSecond: number;
    readonly outcomes: ByKey;
  };
  readonly baseline: {
    /** `replayed` reply by reply, or sampled at reply positions (large fan-outs, see `sampleNaive`). */
    readonly method: string;
    readonly writeUnitsPerReply: number;
    readonly recordingWriteUnitsPerReply: number;
    readonly readUnitsPerReply: number;
    /** Null when sampled. */
    readonly repliesPerSecond: number | null;
  };
  /** Baseline write units per reply over fanin's. */
  readonly ratio: number;
}

/** One arrival phase's figures, per reply unless named otherwise; all-in. */
export interface ArrivalFigures {
  readonly fan_out: number;
  readonly batching_window_seconds: number;
  /** The reply consumers' batch size. */
  readonly batch_size: number;
  /** The reply partitions drained every this many seconds. */
  readonly drain_interval_seconds: number;
  /** Drained rows only: how the phase's sending lay against the drains (see {@link DrainPhaseName}). */
  readonly drain_phase?: DrainPhaseName;
  /** Drained rows only: aggregates whose replies were taken by more than one drain. */
  readonly aggregates_split_across_drains?: number;
  /** Drained rows only: the sending's length and the drains that started during it. */
  readonly drain_timing?: {
    /** From the first reply released to the last sent. */
    readonly sending_ms: number;
    /** Drains (one per partition and interval) that started while the replies were being sent. */
    readonly partition_drains_during_sending: number;
    /** From the first reply released to the first of those drains; null when none started. */
    readonly first_drain_after_release_ms: number | null;
  };
  /** Null: as fast as the responders could send. */
  readonly offered_replies_per_second: number | null;
  readonly aggregates: number;
  readonly replies: number;
  readonly write_units: number;
  readonly index_write_units: number;
  /** Write units per reply spent by conditional writes that failed (a duplicate, a lost race to seal). */
  readonly failed_condition_write_units?: number;
  /** Failed conditional writes per aggregate, by operation (`UpdateItem`, `PutItem`). */
  readonly failed_conditions_per_aggregate?: ByKey;
  readonly read_units: number;
  /** fanin's handlers and its event source mappings, empty receives left out. */
  readonly sqs_calls: number;
  /** Producer, responders and result consumer. */
  readonly client_sqs_calls: number;
  /** Reply function invocations per reply. */
  readonly reply_invocations: number;
  /** Receives from the reply partitions that returned messages, per reply. */
  readonly reply_receives: number;
  /** Mean replies per batch: an event source's invocation, or one of a drain's batches. */
  readonly replies_per_batch: number;
  /** Mean replies of one aggregate in one reply batch: what a state protocol can share a write across. */
  readonly replies_per_aggregate_per_batch: number;
  readonly cost_per_million_aggregates_usd: number;
  readonly fanin_only_per_million_usd: number;
  /** The timer variant whose firing is added (`timers.<variant>`): how the phase's requests arrived. */
  readonly timer_firing?: TimerVariantName;
  /** End to end per million aggregates with the `paced` variant's firing added instead. */
  readonly cost_per_million_aggregates_usd_timers_paced?: number;
  readonly completion_latency_ms: Latency;
  /** Per aggregate, its first reply's send to its last's. */
  readonly reply_span_ms: Span;
  readonly outcomes: ByKey;
}

/**
 * `arrival.<pattern>.by_batching`: one reply batching setting (window and batch size, or a drain) at fan-out
 * 10, each of its fields the {@link ArrivalFigures} field named on the right, in this order.
 */
export const BY_BATCHING = {
  batching_window_seconds: 'batching_window_seconds',
  batch_size: 'batch_size',
  /** 0: an event source. */
  drain_interval_seconds: 'drain_interval_seconds',
  drain_phase: 'drain_phase',
  aggregates_split_across_drains: 'aggregates_split_across_drains',
  write_units_per_reply: 'write_units',
  /** End to end (fanin plus its clients' SQS calls). */
  cost_per_million_aggregates_usd: 'cost_per_million_aggregates_usd',
  completion_latency_ms: 'completion_latency_ms',
  replies_per_batch: 'replies_per_batch',
  replies_per_aggregate_per_batch: 'replies_per_aggregate_per_batch',
  reply_invocations_per_reply: 'reply_invocations',
  reply_receives_per_reply: 'reply_receives',
  sqs_calls_per_reply: 'sqs_calls',
  read_units_per_reply: 'read_units',
  reply_span_ms: 'reply_span_ms',
} as const satisfies Record<string, keyof ArrivalFigures>;

type ByBatching = typeof BY_BATCHING;
type DrainedOnly = 'drain_phase' | 'aggregates_split_across_drains';
/** One row of `by_batching` (the drained rows' fields optional, as in {@link ArrivalFigures}). */
export type BatchingComparison = {
  readonly [K in Exclude<keyof ByBatching, DrainedOnly>]: ArrivalFigures[ByBatching[K]];
} & { readonly [K in DrainedOnly]?: ArrivalFigures[ByBatching[K]] };

/** How a drained phase's sending lay against the drains (as measured). */
export type { DrainPhaseName };

/** How the requests of a deadline-timer variant were sent, and so how their deadline timers were armed. */
export type TimerVariantName = 'batched' | 'paced';

/** One deadline-timer variant: how its requests were sent, and what its timers' firing cost. */
export interface TimerVariantFigures {
  /** How the requests were sent. */
  readonly requests: string;
  /** Null: all at once, in batches of ten. */
  readonly requests_per_second: number | null;
  /** The definition run (its deadline). */
  readonly definition: string;
  readonly aggregates: number;
  /** Timer records the timer handler took in the measured window. */
  readonly fired: number;
  /** Timer records taken before the aggregates' run was over, so outside the window (0 normally). */
  readonly fired_early: number;
  /** How the aggregates ended before their timers fired. */
  readonly completed_first: ByKey;
  /** How the timers were armed, from the aggregates' own run: fan-out invocations and timer sends. */
  readonly arming_per_aggregate: { readonly fan_out_invocations: number; readonly timer_sends: number };
  /** The firing per fired timer (one per aggregate). */
  readonly firing_per_aggregate: {
    readonly receives: number;
    readonly deletes: number;
    readonly invocations: number;
    readonly records_per_invocation: number;
  };
  /** The firing's usage per aggregate (what the all-in figures add). */
  readonly usage_per_aggregate: Usage;
  /** The firing's SQS calls per aggregate, by who, operation and queue. */
  readonly sqs_calls_by_operation: ByKey;
}

/** One arrival pattern: the contract fields first, then every phase measured. */
export interface ArrivalPatternResult {
  /** By fan-out. */
  readonly write_units_per_reply: ByKey;
  readonly read_units_per_reply: ByKey;
  readonly sqs_calls_per_reply: ByKey;
  /** Fan-out 10, end to end (fanin plus its clients' SQS calls). */
  readonly cost_per_million_aggregates_usd: number;
  /** The same with the `paced` timer variant's firing instead of `timer_firing`'s. */
  readonly cost_per_million_aggregates_usd_timers_paced?: number;
  /** Fan-out 10: what the floor of any design leaves. */
  readonly own_work_per_million_aggregates_usd?: number;
  /**
   * The same by service (end to end less the floor's part of that service; may be below 0 where fanin batches
   * more than the floor assumes).
   */
  readonly own_work_by_service_usd?: {
    readonly dynamodb: number;
    readonly sqs: number;
    readonly lambda: number;
  };
  /** The floor the own work is measured against. */
  readonly reply_floor_per_million_aggregates_usd?: number;
  /** That floor's batching: replies per batch and per receive as measured. */
  readonly reply_floor_batching?: {
    readonly replies_per_batch: number;
    readonly messages_per_receive: number;
    readonly write_units_per_reply: number;
  };
  /** The timer variant whose firing the all-in figures include. */
  readonly timer_firing?: TimerVariantName;
  /** Fan-out 10, from the last reply's send to the result read off the output queue. */
  readonly completion_latency_ms: Latency;
  readonly batching_window_seconds: number;
  /** The topology's reply batch size, with `batching_window_seconds` the setting of `measured`. */
  readonly batch_size: number;
  /** At the topology's batching setting, every fan-out. */
  readonly measured: readonly ArrivalFigures[];
  /** Fan-out 10 at the other batching settings. */
  readonly other_batching_windows: readonly ArrivalFigures[];
  /** Every reply batching setting measured with this pattern at fan-out 10, the topology's first. */
  readonly by_batching: readonly BatchingComparison[];
}

/** The arrival patterns, as `bench/rig/responders.ts` names them. */
export type ArrivalPatternName = 'together' | 'independent' | 'spread';

/** The raw store capacity over one window. */
export interface CapacityFigures {
  readonly puts_per_second: number;
  readonly per_second: readonly number[];
  readonly duration_ms: number;
}

/** `bench/results/*.json`. The first block is the contract (the headline figures); the rest explains it. */
export interface Results {
  readonly schema: 2;
  readonly date: string;
  readonly commit: string;
  readonly quick: boolean;
  /** How this run was started. */
  readonly command: string;
  readonly duration_seconds: number;
  readonly machine: {
    readonly cpus: number;
    readonly memory_gib: number;
    readonly node: string;
    readonly load_average_start: readonly number[];
    readonly load_average_end: readonly number[];
    readonly emulators: readonly string[];
  };
  /** The pattern of the headline figures (replies arriving independently). */
  readonly headline_pattern: ArrivalPatternName;
  readonly arrival: Readonly<Record<ArrivalPatternName, ArrivalPatternResult>>;
  readonly arrival_setup: {
    readonly offered_replies_per_second: number;
    readonly rotation: number;
    readonly spread: { readonly median_ms: number; readonly sigma: number; readonly max_ms: number };
    readonly default_batching_window_seconds: number;
    /** The topology's reply batch size. */
    readonly default_batch_size: number;
    /** First to last reply of an aggregate in `independent` at this pace. */
    readonly independent_reply_span_seconds: number;
  };
  /** Saturated, replies independent: from the first reply released to the last result. */
  readonly replies_per_second: number;
  readonly aggregates_per_second: number;
  readonly completion_latency_ms: Latency & {
    readonly pattern: ArrivalPatternName;
    readonly offered_replies_per_second: number;
    readonly saturated: { readonly p50: number; readonly p99: number };
  };
  /** fanin's write units per reply (all-in) by fan-out. */
  readonly write_units_per_reply: ByKey;
  /** Baseline write units per reply over fanin's, by fan-out. */
  readonly baseline_ratio: ByKey;
  /** The scale curve as a line: write units per reply plus write units per aggregate. */
  readonly write_units_fit: { readonly per_reply: number; readonly per_aggregate: number };
  readonly sqs_calls_per_reply: number;
  /** Null when the capacity windows before and after the run disagree by more than the limit. */
  readonly fraction_of_store_capacity: number | null;
  readonly cost_per_million_aggregates_usd: number;
  readonly headline: {
    readonly pattern: ArrivalPatternName;
    readonly aggregates: number;
    readonly replies: number;
    readonly fan_out: number;
    readonly reply_bytes: number;
    /** Mean bytes a headline body takes in its reply item (fanin stores it compressed when smaller). */
    readonly stored_payload_bytes?: number;
    readonly elapsed_ms: number;
    readonly outcomes: ByKey;
    readonly per_reply: {
      readonly write_units: number;
      readonly index_write_units: number;
      readonly read_units: number;
      readonly write_units_by_operation: ByKey;
      readonly read_units_by_operation: ByKey;
      readonly dynamodb_calls_by_operation: ByKey;
      readonly sqs_calls_by_operation: ByKey;
      readonly sqs_billed_requests: ByKey;
      /** The firing of the variant the headline includes (`cost.timer_firing`). */
      readonly timer_firing_sqs_calls_by_operation: ByKey;
      /** The `paced` variant's firing (requests one at a time), for comparison; not in the all-in figures. */
      readonly timer_firing_sqs_calls_by_operation_paced?: ByKey;
      readonly handler_invocations: ByKey;
      readonly records_per_invocation: ByKey;
      readonly emulator_reported_transaction_write_units: number;
      readonly empty_receives_excluded: number;
    };
  };
  readonly saturated: {
    readonly pattern: ArrivalPatternName;
    readonly aggregates: number;
    readonly replies: number;
    readonly release_to_last_result_ms: number;
    readonly write_units_per_reply: number;
  };
  readonly store_capacity: {
    readonly item: string;
    readonly concurrency: number;
    readonly window_ms: number;
    readonly before: CapacityFigures;
    readonly after: CapacityFigures;
    readonly mean_puts_per_second: number;
    /** |after − before| / mean. */
    readonly spread: number;
    readonly spread_limit: number;
    /** Slowest and fastest whole second over both windows. */
    readonly per_second_range: readonly number[];
    /** The fraction against the faster and the slower window. */
    readonly fraction_range: readonly number[];
    readonly meaningful: boolean;
  };
  readonly cost: {
    readonly prices_taken: string;
    readonly region: string;
    readonly scenario: string;
    /** The timer variant whose firing `fanin` includes. */
    readonly timer_firing?: TimerVariantName;
    readonly fanin: {
      readonly usage_per_aggregate: Usage;
      readonly per_million_aggregates: Bill;
      /** The firing of the variant `timer_firing` names. */
      readonly timer_firing_usage: Usage;
      /** The `paced` variant's firing (requests one at a time). */
      readonly timer_firing_usage_paced?: Usage;
    };
    readonly fanin_clients: { readonly usage_per_aggregate: Usage; readonly per_million_aggregates: Bill };
    readonly fanin_total_per_million: number;
    /** `fanin_total_per_million` with the `paced` variant's firing instead. */
    readonly fanin_total_per_million_timers_paced?: number;
    readonly step_functions_standard: {
      readonly transitions_per_aggregate: number;
      readonly orchestration_per_million: Bill;
      readonly clients_per_million: Bill;
      readonly total_per_million: number;
    };
    readonly step_functions_express: {
      readonly per_million_by_answer_seconds: readonly {
        readonly seconds: number;
        readonly per_million_usd: number;
      }[];
      /** Express costs less than fanin end to end while the slowest responder answers within this. */
      readonly cheaper_than_fanin_below_seconds: number;
    };
    /** The least fan-out 10's replies can cost per million aggregates: {@link replyFloorPerMillion}. */
    readonly reply_floor_per_million: {
      readonly one_reply_per_batch: number;
      /** Batches of ten, each reply in its own item (1 KB: one write unit). */
      readonly ten_replies_per_batch: number;
      /** An aggregate's ten replies in one batch and one pack (`packed_write_units_per_reply`). */
      readonly packed_one_message_per_receive?: number;
      /** The same with every receive returning ten messages (a load high enough to fill them). */
      readonly packed_full_receives?: number;
      /** Write units per reply of ten kilobyte replies of one aggregate in one pack, as fanin stores them. */
      readonly packed_write_units_per_reply?: number;
    };
    readonly naive_baseline_dynamodb: {
      readonly usage_per_aggregate: { readonly write_units: number; readonly read_units: number };
      readonly per_million_aggregates: number;
    };
    readonly fixed_monthly: {
      readonly items: readonly { readonly item: string; readonly how: string; readonly usd: number }[];
      readonly total_usd: number;
      /** The total README's "What it costs at rest" states; null if not found. */
      readonly readme_total_usd: number | null;
      readonly reply_partitions: number;
    };
  };
  readonly scale: readonly Snake<ScalePoint>[];
  /** The baseline at one fan-out both replayed and sampled: how far the sampling is from the replay. */
  readonly baseline_sampling_check?: {
    readonly fan_out: number;
    readonly positions: number;
    readonly replayed_write_units_per_reply: number;
    readonly sampled_write_units_per_reply: number;
  };
  readonly hot_aggregate: {
    /** The definition's default layout, `writeShards: 1`. */
    readonly measured: Snake<Omit<HotMeasurement, 'counters'>> & { readonly counters: undefined };
    /** The same aggregate with `writeShards` > 1, spread by the state store itself. */
    readonly sharded: Snake<Omit<HotMeasurement, 'counters'>> & { readonly counters: undefined };
    readonly aws_limits: Snake<AwsLimits>;
    readonly model: readonly {
      readonly design: Snake<HotDesign>;
      readonly bounds: Snake<HotBounds>;
      readonly simulation: Snake<HotSimulation>;
    }[];
  };
  readonly calibration: Snake<Calibration>;
  /** The deadline timers' firing, measured apart in two variants. */
  readonly timers: {
    readonly fired: number;
    readonly completed_first: ByKey;
    readonly used?: TimerVariantName;
    readonly batched?: TimerVariantFigures;
    readonly paced?: TimerVariantFigures;
    /** By deadline (seconds): what an aggregate that stays open until its deadline costs. */
    readonly by_open_seconds?: Readonly<Record<string, OpenTimeResult>>;
    /** How `by_open_seconds` was measured, and the anchors' assumptions. */
    readonly open_time_assumptions?: string;
    /** The other long timers, measured as `by_open_seconds` is (`run/open-time.ts`, `TIMER_KINDS`). */
    readonly by_kind?: Readonly<Record<string, OpenTimeFigures>>;
    /** Looking after the responders: what a retry and a cancellation add per recipient (`run/open-time.ts`). */
    readonly responders?: ResponderCosts;
    /** How `responders` was measured. */
    readonly responders_assumptions?: string;
  };
  readonly sanity: Snake<Sanity>;
}

/** What went wrong during the run: failures, errors and items the meter could not cost. */
export interface Sanity {
  readonly failedRecords: number;
  readonly pollerErrors: number;
  readonly responderErrors: number;
  readonly collectorErrors: number;
  readonly outputsSeen: ByKey;
  /** Transactional updates of items the meter had not seen, by who (costed as 1 KB). */
  readonly transactionSizesUnknown: ByKey;
  readonly unregisteredTables: number;
}
