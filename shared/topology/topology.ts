import { type Definition, parseDefinitions, stateLifeSeconds } from '../engine/definition.ts';
import {
  DEFAULT_DRAIN_BATCH_SIZE,
  type PartitioningOptions,
  TOPOLOGY_DEFAULTS,
  type TopologyOptions,
} from './options.ts';

export type { PartitioningOptions, TopologyOptions } from './options.ts';
export { DEFAULT_DRAIN_BATCH_SIZE } from './options.ts';

/**
 * The one description of fanin's resources. The CDK stack and the local runtime both build from
 * it, so names, partitions, batch settings and redrive limits cannot drift between them. What a
 * user may choose, and each choice's default, is declared in options.ts.
 */

/** The roles of fanin's queues. */
export const QueueRole = {
  INGRESS: 'ingress',
  CONTROL: 'control',
  TIMER: 'timer',
  /** The reply destination's backlog, fed to the partitions by the watermark distributor. */
  BACKLOG: 'backlog',
  COMPLETED: 'completed',
  TIMED_OUT: 'timed-out',
  UNKNOWN: 'unknown',
  LATE: 'late',
  ERROR: 'error',
  STATUS: 'status',
} as const;
export type QueueRole = (typeof QueueRole)[keyof typeof QueueRole];

/** The output queues: FIFO, so a retried emission with the same id is deduplicated by SQS itself. */
export const OUTPUT_ROLES = [
  QueueRole.COMPLETED,
  QueueRole.TIMED_OUT,
  QueueRole.UNKNOWN,
  QueueRole.LATE,
  QueueRole.ERROR,
  QueueRole.STATUS,
] as const;
export type OutputRole = (typeof OUTPUT_ROLES)[number];

/** One SQS queue and its dead-letter queue. */
export interface QueueSpec {
  /** Queue name (a `.fifo` suffix when FIFO). */
  readonly name: string;
  readonly fifo: boolean;
  readonly visibilityTimeoutSeconds: number;
  /** Receives before a message moves to the DLQ. */
  readonly maxReceiveCount: number;
  readonly dlqName: string;
  /**
   * How long SQS keeps an unconsumed message: the maximum, 14 days, so a long outage of a consumer
   * (or of the distributor feeding from the backlog) loses nothing. @default 1,209,600 (14 days)
   */
  readonly retentionSeconds?: number;
}

/** How a handler consumes its queue (Lambda event source settings; the local poller copies them). */
export interface ConsumerSpec {
  readonly batchSize: number;
  readonly maxBatchingWindowSeconds: number;
  /** Concurrent invocations per queue (per partition for replies). */
  readonly maxConcurrency: number;
  /**
   * Reply partitions only: when above 0, no event source consumes the queue; a schedule drains it
   * every this many seconds instead, in batches of `batchSize` (see
   * {@link TopologyOptions.replyDrainIntervalSeconds}). @default 0
   */
  readonly drainIntervalSeconds?: number;
}

/** A DynamoDB key attribute. */
export interface KeyAttribute {
  readonly name: string;
  readonly type: 'S' | 'N';
}

/** A global secondary index of the state table. */
export interface IndexSpec {
  readonly name: string;
  readonly partitionKey: KeyAttribute;
  readonly sortKey: KeyAttribute;
  /** `KEYS_ONLY` when the readers of the index need nothing but keys (cheaper writes and storage). */
  readonly projection: 'ALL' | 'KEYS_ONLY';
}

/** The state table: keys, TTL attribute and indexes (the stack and the local runtime create it from this). */
export interface TableSpec {
  readonly name: string;
  readonly partitionKey: KeyAttribute;
  readonly sortKey: KeyAttribute;
  /** Epoch seconds after which DynamoDB may delete an item (every aggregate item: tombstone, request, replies, marks, counters). */
  readonly ttlAttribute: string;
  readonly indexes: readonly IndexSpec[];
}

/**
 * Resolved partitioning settings, with the reply partitions that are drained on a schedule
 * (`replyDrainIntervalSeconds`): the distributor never judges those stalled, since between two
 * drains their depth only grows whatever their consumer does.
 */
export type Partitioning = Required<PartitioningOptions> & { readonly drained: readonly number[] };

/** The resolved topology. */
export interface Topology {
  readonly prefix: string;
  /** Same as `table.name`. */
  readonly tableName: string;
  readonly table: TableSpec;
  readonly bucketName: string;
  readonly queues: Readonly<Record<QueueRole, QueueSpec>>;
  readonly replyPartitions: readonly QueueSpec[];
  readonly consumers: {
    readonly fanOut: ConsumerSpec;
    /** The reply consumers' common settings (partition 0's window); see {@link Topology.replyConsumers}. */
    readonly reply: ConsumerSpec;
    readonly timer: ConsumerSpec;
    readonly control: ConsumerSpec;
  };
  /** Each reply partition's consumer, in partition order (batching windows may differ per partition). */
  readonly replyConsumers: readonly ConsumerSpec[];
  /** How often the sweeper runs, in seconds. */
  readonly sweepIntervalSeconds: number;
  readonly partitioning: Partitioning;
  /** The handlers' invocation timeout, in seconds (see {@link TopologyOptions.functionTimeoutSeconds}). */
  readonly functionTimeoutSeconds: number;
  /** How long a completing invocation owns an aggregate: {@link completionLeaseSeconds} of the function timeout. */
  readonly completionLeaseSeconds: number;
  /**
   * The longest any state item can be needed, over all definitions (`stateLifeSeconds`): reply
   * items expire this long after they are written, and stored bodies in the claim-check bucket
   * must live at least this long.
   */
  readonly stateLifeSeconds: number;
  readonly definitions: ReadonlyMap<string, Definition>;
}

const PREFIX = /^[a-z][a-z0-9-]{0,30}$/;
/** Lambda's maximum timeout. */
const MAX_FUNCTION_TIMEOUT_SECONDS = 900;

/**
 * Resolves the topology from options, validating them and the definitions.
 *
 * @example
 * const topology = describeTopology({ prefix: 'shop', replyPartitions: 4, definitions: [orderDefinition] });
 */
export function describeTopology(options: TopologyOptions): Topology {
  const prefix = options.prefix ?? TOPOLOGY_DEFAULTS.prefix;
  if (!PREFIX.test(prefix)) {
    throw new Error(
      `prefix must be lowercase letters, digits and -, starting with a letter, at most 31 (given "${prefix}")`,
    );
  }
  const partitions = options.replyPartitions ?? TOPOLOGY_DEFAULTS.replyPartitions;
  if (!Number.isInteger(partitions) || partitions < 1 || partitions > 64) {
    throw new Error(`replyPartitions must be an integer between 1 and 64 inclusive (given ${partitions})`);
  }
  const maxReceiveCount = options.maxReceiveCount ?? TOPOLOGY_DEFAULTS.maxReceiveCount;
  if (!Number.isInteger(maxReceiveCount) || maxReceiveCount < 1 || maxReceiveCount > 1000) {
    throw new Error(
      `maxReceiveCount must be an integer between 1 and 1000 inclusive (given ${maxReceiveCount})`,
    );
  }
  const functionTimeoutSeconds = options.functionTimeoutSeconds ?? TOPOLOGY_DEFAULTS.functionTimeoutSeconds;
  if (
    !Number.isInteger(functionTimeoutSeconds) ||
    functionTimeoutSeconds < 1 ||
    functionTimeoutSeconds > MAX_FUNCTION_TIMEOUT_SECONDS
  ) {
    throw new Error(
      `functionTimeoutSeconds must be an integer between 1 and ${MAX_FUNCTION_TIMEOUT_SECONDS} inclusive (given ${functionTimeoutSeconds})`,
    );
  }
  const leaseSeconds = completionLeaseSeconds(functionTimeoutSeconds);
  const definitions = parseDefinitions(options.definitions);
  const fifoReplies = options.fifoReplies ?? TOPOLOGY_DEFAULTS.fifoReplies;
  const windows = replyWindows(options.replyBatchingWindowSeconds, partitions, fifoReplies);
  const concurrency = replyConcurrency(options.replyConcurrency, partitions);
  const drains = replyDrains(options.replyDrainIntervalSeconds, windows, fifoReplies);
  const batchSizes = replyBatchSizes(options.replyBatchSize, windows, drains, fifoReplies);
  const consumers = {
    fanOut: { batchSize: 10, maxBatchingWindowSeconds: 0, maxConcurrency: 5 },
    reply: {
      batchSize: batchSizes[0] ?? DEFAULT_REPLY_BATCH_SIZE,
      maxBatchingWindowSeconds: windows[0] ?? 0,
      maxConcurrency: concurrency[0] ?? DEFAULT_REPLY_CONCURRENCY,
    },
    timer: { batchSize: 10, maxBatchingWindowSeconds: 0, maxConcurrency: 2 },
    control: { batchSize: 1, maxBatchingWindowSeconds: 0, maxConcurrency: 2 },
  } as const satisfies Topology['consumers'];
  const replyConsumers = windows.map((maxBatchingWindowSeconds, i) => ({
    ...consumers.reply,
    batchSize: batchSizes[i] ?? DEFAULT_REPLY_BATCH_SIZE,
    maxBatchingWindowSeconds,
    maxConcurrency: concurrency[i] ?? DEFAULT_REPLY_CONCURRENCY,
    drainIntervalSeconds: drains[i] ?? 0,
  }));
  // A queue a handler consumes: long enough that a batch still running (with Lambda's own retries
  // of a throttled invocation) is not handed to a second invocation, and that a message comes back
  // only after the completion lease its invocation may have taken has run out (the batching
  // window, the invocation, then the lease): the redelivery of the message that made an aggregate
  // complete is what finishes a completer that crashed (docs/data-plane.md).
  const consumed = (consumer: ConsumerSpec): number =>
    Math.max(6 * functionTimeoutSeconds, functionTimeoutSeconds + leaseSeconds) +
    consumer.maxBatchingWindowSeconds;
  const queue = (base: string, fifo: boolean, visibilityTimeoutSeconds = 60): QueueSpec => {
    const suffix = fifo ? '.fifo' : '';
    return {
      name: `${prefix}-${base}${suffix}`,
      fifo,
      visibilityTimeoutSeconds,
      maxReceiveCount,
      dlqName: `${prefix}-${base}-dlq${suffix}`,
      retentionSeconds: 14 * 24 * 3600,
    };
  };
  const queues = {
    [QueueRole.INGRESS]: queue('ingress', false, consumed(consumers.fanOut)),
    [QueueRole.CONTROL]: queue('control', false, consumed(consumers.control)),
    [QueueRole.TIMER]: queue('timer', false, consumed(consumers.timer)),
    // The distributor holds a backlog message only while it moves it (receive, send, delete).
    [QueueRole.BACKLOG]: queue('backlog', fifoReplies, consumed(consumers.timer)),
    ...Object.fromEntries(OUTPUT_ROLES.map((role) => [role, queue(`out-${role}`, true)])),
  } as Record<QueueRole, QueueSpec>;
  const tableName = `${prefix}-state`;
  return {
    prefix,
    tableName,
    table: {
      name: tableName,
      partitionKey: { name: 'pk', type: 'S' },
      sortKey: { name: 'sk', type: 'S' },
      ttlAttribute: 'expiresAt',
      indexes: [
        // The sweeper reads only keys and the deadline from `due`, then loads what it needs; every
        // open aggregate is in it (its deadline or allowed life), so "list active" and "complete
        // all" read it too.
        {
          name: 'due',
          partitionKey: { name: 'dueShard', type: 'S' },
          sortKey: { name: 'dueAt', type: 'N' },
          projection: 'KEYS_ONLY',
        },
      ],
    },
    bucketName: `${prefix}-payloads`,
    queues,
    replyPartitions: replyConsumers.map((consumer, i) =>
      queue(`reply-${i}`, fifoReplies, consumed(consumer)),
    ),
    consumers,
    replyConsumers,
    sweepIntervalSeconds: 60,
    partitioning: resolvePartitioning({
      ...(options.partitioning ?? {}),
      drained: drains.flatMap((interval, i) => (interval > 0 ? [i] : [])),
    }),
    functionTimeoutSeconds,
    completionLeaseSeconds: leaseSeconds,
    stateLifeSeconds: Math.max(
      0,
      ...[...definitions.values()].map((definition) => stateLifeSeconds(definition, leaseSeconds)),
    ),
    definitions,
  };
}

/**
 * The completion lease for a function timeout: a completer can never still be running when its
 * lease runs out (the function is stopped at its timeout), plus a margin for clocks that differ.
 */
export function completionLeaseSeconds(functionTimeoutSeconds: number): number {
  return functionTimeoutSeconds + LEASE_MARGIN_SECONDS;
}

/** The margin a lease keeps beyond the function timeout, for clocks that differ by seconds. */
export const LEASE_MARGIN_SECONDS = 90;

/** Lambda's longest batching window. */
const MAX_BATCHING_WINDOW_SECONDS = 300;

/** The batching window of each reply partition, validated; messages name the value received. */
function replyWindows(
  option: number | readonly number[] | undefined,
  partitions: number,
  fifo: boolean,
): number[] {
  const windows = Array.isArray(option)
    ? [...option]
    : Array.from(
        { length: partitions },
        () => (option as number | undefined) ?? TOPOLOGY_DEFAULTS.replyBatchingWindowSeconds,
      );
  if (windows.length !== partitions) {
    throw new Error(
      `replyBatchingWindowSeconds must have one value per reply partition (given ${windows.length} for ${partitions})`,
    );
  }
  for (const window of windows) {
    if (!Number.isInteger(window) || window < 0 || window > MAX_BATCHING_WINDOW_SECONDS) {
      throw new Error(
        `replyBatchingWindowSeconds must be integers between 0 and ${MAX_BATCHING_WINDOW_SECONDS} inclusive (given ${window})`,
      );
    }
    if (fifo && window > 0) {
      throw new Error(
        `replyBatchingWindowSeconds must be 0 with fifoReplies: Lambda has no window for FIFO sources (given ${window})`,
      );
    }
  }
  return windows;
}

/** Replies per reply consumer invocation at most unless `replyBatchSize` says otherwise. */
export const DEFAULT_REPLY_BATCH_SIZE = TOPOLOGY_DEFAULTS.replyBatchSize;
/** The longest drain interval: an hour (a reply waits at most this long to be recorded). */
const MAX_DRAIN_INTERVAL_SECONDS = 3600;

/**
 * The drain interval of each reply partition, validated: 0 (an event source) or whole minutes, as
 * a schedule's rate is (EventBridge's finest is one minute); never with a window or FIFO replies.
 */
function replyDrains(
  option: number | readonly number[] | undefined,
  windows: readonly number[],
  fifo: boolean,
): number[] {
  const values = Array.isArray(option)
    ? [...option]
    : windows.map(() => (option as number | undefined) ?? TOPOLOGY_DEFAULTS.replyDrainIntervalSeconds);
  if (values.length !== windows.length) {
    throw new Error(
      `replyDrainIntervalSeconds must have one value per reply partition (given ${values.length} for ${windows.length})`,
    );
  }
  values.forEach((value, i) => {
    if (!Number.isInteger(value) || value < 0 || value > MAX_DRAIN_INTERVAL_SECONDS || value % 60 !== 0) {
      throw new Error(
        `replyDrainIntervalSeconds must be 0 or whole minutes from 60 to ${MAX_DRAIN_INTERVAL_SECONDS} (given ${value})`,
      );
    }
    if (value > 0 && fifo) {
      throw new Error(
        `replyDrainIntervalSeconds must be 0 with fifoReplies: a drain does not keep a message group's order (given ${value})`,
      );
    }
    if (value > 0 && (windows[i] ?? 0) > 0) {
      throw new Error(
        `replyDrainIntervalSeconds and replyBatchingWindowSeconds exclude each other on a partition (given ${value} and ${windows[i]} for partition ${i})`,
      );
    }
  });
  return values;
}

/**
 * The reply consumers' batch size per partition, validated against Lambda's rules for SQS event
 * sources: 1 to 10,000; above 10 only with a batching window of at least 1 s, and never for FIFO.
 * A drained partition has no event source: any size up to 10,000, 1,000 unless given.
 */
function replyBatchSizes(
  option: number | readonly number[] | undefined,
  windows: readonly number[],
  drains: readonly number[],
  fifo: boolean,
): number[] {
  const values = Array.isArray(option)
    ? [...option]
    : windows.map(
        (_, i) =>
          (option as number | undefined) ??
          ((drains[i] ?? 0) > 0 ? DEFAULT_DRAIN_BATCH_SIZE : DEFAULT_REPLY_BATCH_SIZE),
      );
  if (values.length !== windows.length) {
    throw new Error(
      `replyBatchSize must have one value per reply partition (given ${values.length} for ${windows.length})`,
    );
  }
  values.forEach((value, i) => {
    if (!Number.isInteger(value) || value < 1 || value > 10_000) {
      throw new Error(`replyBatchSize must be integers between 1 and 10000 inclusive (given ${value})`);
    }
    if (value > 10 && fifo) {
      throw new Error(
        `replyBatchSize must be at most 10 with fifoReplies: Lambda's limit for FIFO sources (given ${value})`,
      );
    }
    if (value > 10 && (windows[i] ?? 0) < 1 && (drains[i] ?? 0) === 0) {
      throw new Error(
        `replyBatchSize above 10 needs a replyBatchingWindowSeconds of at least 1, or a replyDrainIntervalSeconds, for its partition (given ${value} for partition ${i}, whose window is ${windows[i] ?? 0})`,
      );
    }
  });
  return values;
}

/** Reply consumer invocations at once per partition unless `replyConcurrency` says otherwise. */
export const DEFAULT_REPLY_CONCURRENCY = TOPOLOGY_DEFAULTS.replyConcurrency;

/** The reply consumers' concurrency per partition, validated (Lambda takes 2 to 1000). */
function replyConcurrency(option: number | readonly number[] | undefined, partitions: number): number[] {
  const values = Array.isArray(option)
    ? [...option]
    : Array.from({ length: partitions }, () => (option as number | undefined) ?? DEFAULT_REPLY_CONCURRENCY);
  if (values.length !== partitions) {
    throw new Error(
      `replyConcurrency must have one value per reply partition (given ${values.length} for ${partitions})`,
    );
  }
  for (const value of values) {
    if (!Number.isInteger(value) || value < 2 || value > 1000) {
      throw new Error(`replyConcurrency must be integers between 2 and 1000 inclusive (given ${value})`);
    }
  }
  return values;
}

/** Applies the partitioning defaults and checks the values; messages name the value received. */
export function resolvePartitioning(
  options: PartitioningOptions & { readonly drained?: readonly number[] },
): Partitioning {
  const { drained = [], ...given } = options;
  const defaults = TOPOLOGY_DEFAULTS.partitioning;
  const numbers = {
    highThreshold: given.highThreshold ?? defaults.highThreshold,
    highWatermark: given.highWatermark ?? defaults.highWatermark,
    lowWatermark: given.lowWatermark ?? defaults.lowWatermark,
    stallSeconds: given.stallSeconds ?? defaults.stallSeconds,
    distributorIntervalSeconds: given.distributorIntervalSeconds ?? defaults.distributorIntervalSeconds,
  };
  if (!Array.isArray(drained) || !drained.every((i) => Number.isInteger(i) && i >= 0)) {
    throw new Error(`partitioning.drained must be partition indexes (given ${JSON.stringify(drained)})`);
  }
  const resolved: Partitioning = { ...numbers, drained: [...drained] };
  for (const [name, value] of Object.entries(numbers)) {
    const minimum = name === 'lowWatermark' ? 0 : 1;
    if (!Number.isInteger(value) || value < minimum) {
      throw new Error(`partitioning.${name} must be an integer >= ${minimum} (given ${value})`);
    }
  }
  if (resolved.lowWatermark >= resolved.highWatermark) {
    throw new Error(
      `partitioning.lowWatermark must be below highWatermark (given ${resolved.lowWatermark} and ${resolved.highWatermark})`,
    );
  }
  if (resolved.highWatermark > resolved.highThreshold) {
    throw new Error(
      `partitioning.highWatermark must not exceed highThreshold (given ${resolved.highWatermark} and ${resolved.highThreshold})`,
    );
  }
  return resolved;
}
