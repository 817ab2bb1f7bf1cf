import { z } from 'zod';
import type { DefinitionInput } from '../engine/definition.ts';

/**
 * The topology options, declared once: their types and meaning ({@link TopologyOptions}, whose
 * TSDoc the construct's props inherit), their defaults ({@link TOPOLOGY_DEFAULTS}), the shape a
 * configuration file is checked against ({@link TOPOLOGY_OPTION_SHAPE}) and the one copy of them
 * from props or a configuration ({@link topologyOptionsOf}). The construct's props
 * (infra/fanin-props.ts) and the local configuration (local/config.ts) extend these;
 * describeTopology (topology.ts) validates the values and applies the defaults; the table of
 * docs/configuration.md ("Topology options") is checked against them by this module's unit test.
 */

/** How the reply partitions are kept available and fed from the backlog (docs/partitions.md). */
export interface PartitioningOptions {
  /** A partition at or above this depth takes no new messages. @default 10000 */
  readonly highThreshold?: number;
  /** The distributor fills a partition from the backlog up to this depth. @default 100 */
  readonly highWatermark?: number;
  /** ...once it has drained to this depth. @default 20 */
  readonly lowWatermark?: number;
  /** A partition whose consumer made no progress for this long is stalled; its excess is moved. @default 60 */
  readonly stallSeconds?: number;
  /**
   * How often the distributor runs, in seconds. The construct makes it an EventBridge rate
   * schedule, so there it must be a whole number of minutes. @default 60
   */
  readonly distributorIntervalSeconds?: number;
}

/**
 * What a user may choose of fanin's resources; everything but the definitions has a default. The
 * CDK construct (`FaninProps`) and the local configuration file (`fanin.config.ts`) take these
 * alike, except that the construct takes the handlers' timeout as `functionTimeout`, a `Duration`.
 */
export interface TopologyOptions {
  /** The aggregation definitions (validated with the engine's schema; at synth for the construct). */
  readonly definitions: readonly DefinitionInput[];
  /**
   * Prefix of every resource name (queues, table, alarms, dashboard, bus): lowercase letters,
   * digits and `-`, starting with a letter, at most 31. Two fanin instances in one account and
   * region need two prefixes.
   * @default 'fanin'
   */
  readonly prefix?: string;
  /**
   * Number of reply partitions (SQS queues, each with its own consumer), 1 to 64. The construct
   * allows at most what fits the handlers' 4 KB environment less a 256-byte margin (their URLs are
   * in it, counted in LocalStack's longer form): 26 with the default prefix; checked at synth, the
   * error names the count that fits.
   * @default 2
   */
  readonly replyPartitions?: number;
  /**
   * Reply partitions (and the backlog) as FIFO queues (no batching window: Lambda has none for FIFO
   * sources).
   * @default false
   */
  readonly fifoReplies?: boolean;
  /** Receives of a message before it moves to its queue's dead-letter queue, 1 to 1000. @default 5 */
  readonly maxReceiveCount?: number;
  /**
   * How long one handler invocation (one batch) may run, in whole seconds, 1 to 900 (the construct
   * takes it as `functionTimeout`). The completion lease is this + 90 s, and the visibility
   * timeout of every queue a handler consumes is max(6 x this, this + the lease) + the batching
   * window: 6 x as AWS advises for Lambda SQS event sources, so a batch is not redelivered while it
   * is still running, and past the lease, so the redelivery of a message whose invocation crashed
   * mid-completion finds the lease run out and resumes the completion (docs/data-plane.md).
   * @default 30
   */
  readonly functionTimeoutSeconds?: number;
  /**
   * How long each reply partition's consumer waits to fill a batch, in seconds (Lambda's
   * `MaximumBatchingWindowInSeconds`, 0 to 300): one value for every partition, or one per
   * partition. A window delays completion by up to its length when replies arrive apart; without
   * one, batches are smaller and invocations more frequent (the benchmark reports both,
   * docs/hot-aggregates.md). Must be 0 with `fifoReplies`.
   * @default 0
   */
  readonly replyBatchingWindowSeconds?: number | readonly number[];
  /**
   * How many replies one invocation of each reply partition's consumer takes at most (the event
   * source's `BatchSize`, 1 to 10,000): one value for every partition, or one per partition. Above
   * 10 it needs a `replyBatchingWindowSeconds` of at least 1 (Lambda's rule) or a
   * `replyDrainIntervalSeconds`, and standard queues (FIFO sources take at most 10). With a window
   * as long as an aggregate's replies take to arrive, they share a batch and are recorded as one
   * pack: fewer write units, reads, receives and invocations per reply, at the cost of up to the
   * window's latency (docs/costs.md).
   * @default 10 (1000 on a drained partition)
   */
  readonly replyBatchSize?: number | readonly number[];
  /**
   * How many invocations each reply partition's consumer may run at once (the event source's
   * `MaximumConcurrency`, 2 to 1000): one value for every partition, or one per partition. One
   * aggregate's replies all go to its reply partition, so this bounds how fast one aggregate can
   * take replies (about 230 replies/s per invocation slot at batches of 10): raise it with the
   * definition's `writeShards` for hot aggregates (docs/hot-aggregates.md). The sum over every
   * handler must stay within the account's Lambda concurrency.
   * @default 5
   */
  readonly replyConcurrency?: number | readonly number[];
  /**
   * Drains a reply partition on a schedule instead of consuming it with an event source: 0 (an
   * event source, the default) or whole minutes in seconds, 60 to 3,600; one value for every
   * partition, or one per partition. Every interval one invocation of the reply function (an
   * EventBridge rule in AWS, a timer locally) receives what the partition holds ten messages a
   * receive, records it in batches of `replyBatchSize` (1,000 unless given), deletes it, and stops
   * once it has taken the backlog it found (a receive finds nothing, or comes back short with only
   * replies sent after the drain began) or once half its timeout is spent. Replies wait up to the
   * interval before they are recorded; in exchange they take about a tenth of the receives and
   * deletes and far fewer invocations, and an aggregate's replies that arrived within one interval
   * are one pack: the cheapest setting for independent responders (docs/costs.md). Keep the
   * construct's `replyDepthAlarmThreshold` above what a partition gathers in one interval. Not
   * with `fifoReplies`, nor with a `replyBatchingWindowSeconds` on the same partition.
   * @default 0
   */
  readonly replyDrainIntervalSeconds?: number | readonly number[];
  /**
   * How the reply partitions are kept available and fed from the backlog by the watermark
   * distributor (docs/partitions.md). Integers, `lowWatermark` below `highWatermark`,
   * `highWatermark` at most `highThreshold`. Given to every handler as `FANIN_PARTITIONING`.
   * @default - highThreshold 10,000, highWatermark 100, lowWatermark 20, stallSeconds 60, distributorIntervalSeconds 60
   */
  readonly partitioning?: PartitioningOptions;
}

/** The topology options that have a default: every one but the definitions. */
export type TopologyChoice = Exclude<keyof TopologyOptions, 'definitions'>;

/**
 * Every topology option's default, as describeTopology applies it. The reply partitions' batch
 * size is {@link DEFAULT_DRAIN_BATCH_SIZE} on a drained partition unless given.
 */
export const TOPOLOGY_DEFAULTS = {
  prefix: 'fanin',
  replyPartitions: 2,
  fifoReplies: false,
  maxReceiveCount: 5,
  functionTimeoutSeconds: 30,
  replyBatchingWindowSeconds: 0,
  replyBatchSize: 10,
  replyConcurrency: 5,
  replyDrainIntervalSeconds: 0,
  partitioning: {
    highThreshold: 10_000,
    highWatermark: 100,
    lowWatermark: 20,
    stallSeconds: 60,
    distributorIntervalSeconds: 60,
  },
} as const satisfies { readonly [K in TopologyChoice]-?: NonNullable<TopologyOptions[K]> } & {
  readonly partitioning: Required<PartitioningOptions>;
};

/** Replies per batch of a drained partition unless `replyBatchSize` says otherwise. */
export const DEFAULT_DRAIN_BATCH_SIZE = 1000;

/**
 * The options whose default depends on no other option (the per-partition ones depend on the
 * number of partitions, the batch size also on the drain interval): the local configuration
 * resolves these and leaves the others to describeTopology.
 */
export const INDEPENDENT_CHOICES = [
  'prefix',
  'replyPartitions',
  'fifoReplies',
  'maxReceiveCount',
  'functionTimeoutSeconds',
] as const satisfies readonly TopologyChoice[];

const positiveInt = z.int().min(1);
const oneOrPerPartition = (value: z.ZodInt) => z.union([value, z.array(value)]);

/**
 * The type of each topology option, as a configuration file is checked before describeTopology
 * validates the values (ranges, and how the options combine, with messages naming the value).
 * A partitioning key the topology does not know is let through (and ignored), as a number.
 */
export const TOPOLOGY_OPTION_SHAPE = {
  prefix: z.string(),
  replyPartitions: positiveInt,
  fifoReplies: z.boolean(),
  maxReceiveCount: positiveInt,
  functionTimeoutSeconds: positiveInt,
  replyBatchingWindowSeconds: oneOrPerPartition(z.int().min(0)),
  replyBatchSize: oneOrPerPartition(z.int().min(1)),
  replyConcurrency: oneOrPerPartition(z.int().min(1)),
  replyDrainIntervalSeconds: oneOrPerPartition(z.int().min(0)),
  partitioning: z
    .object({
      highThreshold: z.number().optional(),
      highWatermark: z.number().optional(),
      lowWatermark: z.number().optional(),
      stallSeconds: z.number().optional(),
      distributorIntervalSeconds: z.number().optional(),
    })
    .catchall(z.number()),
} as const satisfies { readonly [K in TopologyChoice]-?: z.ZodType<NonNullable<TopologyOptions[K]>> };

/** Every topology option but the definitions, in the order of {@link TopologyOptions}. */
export const TOPOLOGY_CHOICES = Object.keys(TOPOLOGY_OPTION_SHAPE) as TopologyChoice[];

/**
 * The topology options `source` gives (the construct's props, a configuration file), without the
 * ones it leaves undefined, so that the topology's defaults apply to them. The one copy of the
 * options from props or a configuration into describeTopology's input.
 */
export function topologyOptionsOf(
  source: Partial<Record<TopologyChoice, unknown>>,
): Partial<Omit<TopologyOptions, 'definitions'>> {
  const given = TOPOLOGY_CHOICES.flatMap((key) => (source[key] === undefined ? [] : [[key, source[key]]]));
  return Object.fromEntries(given) as Partial<Omit<TopologyOptions, 'definitions'>>;
}
