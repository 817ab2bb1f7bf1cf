import type { AwsLimits } from '../model/hot-aggregate.ts';
import type { ArrivalPattern, ReleasePlan } from '../rig/responders.ts';
import { RESPONDERS, type ReplyBatching } from '../rig/rig.ts';

/** What a run does: the two plans (`--quick` and full), the constants every phase shares. */

/** How much a run measures: each phase's size and time limits. */
export interface Plan {
  /** Writes to DynamoDB Local before anything is measured (its JVM warms up). */
  readonly warmupMs: number;
  readonly warmupAggregates: number;
  /** Each raw-capacity window, before and after the saturated run (sized to last about as long). */
  readonly capacityMs: number;
  /** Aggregates per arrival phase at fan-out 10 (paced), at most. */
  readonly arrivalAggregates: number;
  readonly arrivalSeconds: number;
  /** Replies per second the responders offer in the paced phases, at most. */
  readonly maxOfferedRepliesPerSecond: number;
  /** Reply batching settings compared with the topology's (which is measured with every pattern). */
  readonly comparedBatching: readonly ComparedBatching[];
  /** Each pattern at a large fan-out too (unpaced, condensed results). */
  readonly largeFanOut?: { readonly fanOut: number; readonly aggregates: number };
  /** Aggregates of each deadline-timer variant. */
  readonly timerAggregates: number;
  readonly baselineHeadlineAggregates: number;
  readonly scale: readonly { readonly fanOut: number; readonly aggregates: number }[];
  readonly hotReplies: number;
  /** Longest wait for the hot aggregate's result, per layout. */
  readonly hotTimeoutMs: number;
}

/** A reply batching setting compared with the topology's, and the arrival patterns measured with it. */
export interface ComparedBatching extends ReplyBatching {
  readonly patterns: readonly ArrivalPattern[];
  /** With a drain: patterns measured once more, after `patterns`. */
  readonly straddled?: readonly ArrivalPattern[];
}

/** The reply batching settings compared. */
export const COMPARED_BATCHING = {
  today: { windowSeconds: 1, batchSize: 10 },
  coversSpread: { windowSeconds: 2, batchSize: 100 },
  between: { windowSeconds: 5, batchSize: 1_000 },
  coversIndependent: { windowSeconds: 10, batchSize: 1_000 },
  drained: { windowSeconds: 0, batchSize: 1_000, drainIntervalSeconds: 60 },
} as const satisfies Record<string, ReplyBatching>;

export const QUICK: Plan = {
  warmupMs: 3_000,
  warmupAggregates: 10,
  capacityMs: 4_000,
  arrivalAggregates: 30,
  arrivalSeconds: 12,
  maxOfferedRepliesPerSecond: 60,
  // About a minute more than the topology's setting alone: a long window costs its length per phase.
  // No drain: a drained phase takes a minute (COMPARED_BATCHING.drained), which the budget cannot hold.
  comparedBatching: [
    { ...COMPARED_BATCHING.today, patterns: ['independent', 'spread'] },
    { ...COMPARED_BATCHING.coversSpread, patterns: ['independent', 'spread'] },
    { ...COMPARED_BATCHING.coversIndependent, patterns: ['independent'] },
  ],
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

export const FULL: Plan = {
  warmupMs: 5_000,
  warmupAggregates: 20,
  capacityMs: 10_000,
  arrivalAggregates: 80,
  arrivalSeconds: 30,
  maxOfferedRepliesPerSecond: 60,
  comparedBatching: [
    { ...COMPARED_BATCHING.today, patterns: ['together', 'independent', 'spread'] },
    { ...COMPARED_BATCHING.coversSpread, patterns: ['together', 'independent', 'spread'] },
    { ...COMPARED_BATCHING.between, patterns: ['independent', 'spread'] },
    { ...COMPARED_BATCHING.coversIndependent, patterns: ['independent'] },
    // About three minutes: each aligned phase waits for the schedule's next minute; the straddled
    // one holds its replies until half their sending before the next drain (most of a minute, the
    // previous phase having ended just after a drain), then as long as that drain takes them (a
    // minute more if it leaves some to the drain after it).
    { ...COMPARED_BATCHING.drained, patterns: ['independent', 'spread'], straddled: ['independent'] },
  ],
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

/** Aggregates answered in turn by `independent` responders. */
export const ROTATION = 30;

/** The arrival pattern of the headline figures: real responders answer on their own. */
export const HEADLINE_PATTERN: ArrivalPattern = 'independent';

/** Independent responders' answer times in the `spread` pattern: lognormal, median 400 ms, p99 ≈ 2.6 s. */
export const SPREAD = { medianMs: 400, sigma: 0.8, maxMs: 10_000 } as const;

/** Replies released as fast as the responders' senders go. */
export const SATURATED_RELEASE: Omit<ReleasePlan, 'ids' | 'pattern'> = {
  repliesPerSecond: Number.POSITIVE_INFINITY,
  rotation: ROTATION,
  spread: SPREAD,
  senders: 4,
};

/** The AWS figures the emulator cannot give: per-key limits and typical latencies (stated in the report). */
export const AWS_LIMITS: AwsLimits = {
  keyWriteUnitsPerSecond: 1_000,
  keyReadUnitsPerSecond: 3_000,
  // As the cost model's Lambda durations (prices.json): 8 ms per DynamoDB call.
  callMs: 8,
  overheadMs: 10,
  // THROTTLE_RETRIES in shared/adapters/state-aggregates.ts: a throttled put is retried in place this often.
  throttleRetries: 10,
  visibilityTimeoutSeconds: 181,
};

/** The write shards of the second hot layout (`bench-hot-sharded`). */
export const HOT_SHARDS = 8;

const splitter = { type: 'splitter' as const, itemsPath: '$.items', target: RESPONDERS };
const collect = { algorithm: 'collect' as const };
const condense = { algorithm: 'condense' as const, field: '$.v' };

/** A definition of the benchmark: strategy `all`, its replies collected or condensed. */
function definition(
  name: string,
  fanOut: typeof splitter | { readonly type: 'none' },
  aggregation: typeof collect | typeof condense,
  timeoutSeconds = 600,
) {
  return { name, fanOut, completion: { strategy: 'all' as const }, aggregation, timeoutSeconds };
}

/** The benchmark's definitions; `RESPONDERS` is replaced by the rig's responders queue. */
export const DEFINITIONS = [
  definition('bench-collect', splitter, collect),
  // Large fan-outs condense: collecting 10,000 replies would make a result bigger than a message.
  definition('bench-condense', splitter, condense),
  // The paced timer variant: one request at a time, each aggregate complete well within 3 s.
  definition('bench-timer', splitter, collect, 3),
  // The batched timer variant: every request at once, so the last replies are in later (300
  // replies take about 3 s on a small machine); the deadline must not fire before completion.
  definition('bench-timer-batched', splitter, collect, 10),
  definition('bench-hot', { type: 'none' }, condense),
  // The same hot aggregate with its replies spread over HOT_SHARDS partition keys by the adapter.
  { ...definition('bench-hot-sharded', { type: 'none' }, condense), writeShards: HOT_SHARDS },
];

/** Largest fan-out the baseline replays reply by reply; above it, it is sampled (see `sampleNaive`). */
export const REPLAY_UP_TO = 1_000;
/** Reply positions a sampled baseline measures. */
export const SAMPLED_POSITIONS = 200;

/** How a run was asked for on the command line. */
export interface RunOptions {
  readonly quick: boolean;
  readonly plan: Plan;
  /** Largest fan-out the naive baseline replays reply by reply; above it, it is sampled. */
  readonly replayUpTo: number;
}

/** `--quick`: the CI smoke run; `--replay-baseline`: replay the baseline at every fan-out. */
export function parseArgs(argv: readonly string[]): RunOptions {
  const quick = argv.includes('--quick');
  // Replaying the baseline at fan-out 10,000 takes DynamoDB Local 5–15 minutes: on request only.
  const replayUpTo = argv.includes('--replay-baseline') ? Number.POSITIVE_INFINITY : REPLAY_UP_TO;
  return { quick, plan: quick ? QUICK : FULL, replayUpTo };
}
