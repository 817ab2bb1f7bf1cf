import { type Definition, type DefinitionInput, parseDefinitions } from '../engine/definition.ts';

/**
 * The one description of fanin's resources. The CDK stack and the local runtime both build from
 * it, so names, partitions, batch settings and redrive limits cannot drift between them.
 */

/** The roles of fanin's queues. */
export const QueueRole = {
  INGRESS: 'ingress',
  CONTROL: 'control',
  TIMER: 'timer',
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
}

/** How a handler consumes its queue (Lambda event source settings; the local poller copies them). */
export interface ConsumerSpec {
  readonly batchSize: number;
  readonly maxBatchingWindowSeconds: number;
  /** Concurrent invocations per queue (per partition for replies). */
  readonly maxConcurrency: number;
}

/** What a user may choose; everything has a default. */
export interface TopologyOptions {
  /** Prefix of every resource name. @default 'fanin' */
  readonly prefix?: string;
  /** Number of reply partitions. @default 2 */
  readonly replyPartitions?: number;
  /** Reply partitions as FIFO queues. @default false */
  readonly fifoReplies?: boolean;
  /** Receives before a message is dead-lettered. @default 5 */
  readonly maxReceiveCount?: number;
  /** The aggregation definitions. */
  readonly definitions: readonly DefinitionInput[];
}

/** The resolved topology. */
export interface Topology {
  readonly prefix: string;
  readonly tableName: string;
  readonly bucketName: string;
  readonly queues: Readonly<Record<QueueRole, QueueSpec>>;
  readonly replyPartitions: readonly QueueSpec[];
  readonly consumers: {
    readonly fanOut: ConsumerSpec;
    readonly reply: ConsumerSpec;
    readonly timer: ConsumerSpec;
    readonly control: ConsumerSpec;
  };
  /** How often the sweeper runs, in seconds. */
  readonly sweepIntervalSeconds: number;
  readonly definitions: ReadonlyMap<string, Definition>;
}

const PREFIX = /^[a-z][a-z0-9-]{0,30}$/;

/**
 * Resolves the topology from options, validating them and the definitions.
 *
 * @example
 * const topology = describeTopology({ prefix: 'shop', replyPartitions: 4, definitions: [orderDefinition] });
 */
export function describeTopology(options: TopologyOptions): Topology {
  const prefix = options.prefix ?? 'fanin';
  if (!PREFIX.test(prefix)) {
    throw new Error(
      `prefix must be lowercase letters, digits and -, starting with a letter, at most 31 (given "${prefix}")`,
    );
  }
  const partitions = options.replyPartitions ?? 2;
  if (!Number.isInteger(partitions) || partitions < 1 || partitions > 64) {
    throw new Error(`replyPartitions must be an integer between 1 and 64 inclusive (given ${partitions})`);
  }
  const maxReceiveCount = options.maxReceiveCount ?? 5;
  if (!Number.isInteger(maxReceiveCount) || maxReceiveCount < 1 || maxReceiveCount > 1000) {
    throw new Error(
      `maxReceiveCount must be an integer between 1 and 1000 inclusive (given ${maxReceiveCount})`,
    );
  }
  const queue = (base: string, fifo: boolean, visibilityTimeoutSeconds = 60): QueueSpec => {
    const suffix = fifo ? '.fifo' : '';
    return {
      name: `${prefix}-${base}${suffix}`,
      fifo,
      visibilityTimeoutSeconds,
      maxReceiveCount,
      dlqName: `${prefix}-${base}-dlq${suffix}`,
    };
  };
  const queues = {
    [QueueRole.INGRESS]: queue('ingress', false),
    [QueueRole.CONTROL]: queue('control', false),
    [QueueRole.TIMER]: queue('timer', false),
    ...Object.fromEntries(OUTPUT_ROLES.map((role) => [role, queue(`out-${role}`, true)])),
  } as Record<QueueRole, QueueSpec>;
  return {
    prefix,
    tableName: `${prefix}-state`,
    bucketName: `${prefix}-payloads`,
    queues,
    replyPartitions: Array.from({ length: partitions }, (_, i) =>
      queue(`reply-${i}`, options.fifoReplies ?? false),
    ),
    consumers: {
      fanOut: { batchSize: 10, maxBatchingWindowSeconds: 0, maxConcurrency: 5 },
      reply: { batchSize: 10, maxBatchingWindowSeconds: 1, maxConcurrency: 5 },
      timer: { batchSize: 10, maxBatchingWindowSeconds: 0, maxConcurrency: 2 },
      control: { batchSize: 1, maxBatchingWindowSeconds: 0, maxConcurrency: 2 },
    },
    sweepIntervalSeconds: 60,
    definitions: parseDefinitions(options.definitions),
  };
}
