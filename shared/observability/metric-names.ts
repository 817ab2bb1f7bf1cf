/**
 * The names fanin's metrics and traces are published under: the one contract between the
 * handlers that emit them (shared/adapters/powertools-metrics.ts) and the stack's dashboard and
 * alarms (infra/). Documented in docs/observability.md ("Metrics"). Never rename a value here:
 * a deployed dashboard or alarm keeps the old name and silently stops seeing data.
 */
import type { Outcome } from '../engine/constants.ts';

/** The CloudWatch namespace of every fanin metric. */
export const METRICS_NAMESPACE = 'fanin';

/** The service name when `POWERTOOLS_SERVICE_NAME` is not set: the `service` dimension's value. */
export const DEFAULT_SERVICE_NAME = 'fanin';

/** Environment variables the handlers read (the stack sets them). */
export const ObservabilityEnv = {
  /** The `service` dimension of every metric, and the X-Ray service name. Default {@link DEFAULT_SERVICE_NAME}. */
  SERVICE_NAME: 'POWERTOOLS_SERVICE_NAME',
  /** `true` turns the Powertools Tracer on (with Lambda active tracing); anything else leaves it off. */
  TRACE_ENABLED: 'POWERTOOLS_TRACE_ENABLED',
  /** The handlers' log level (Powertools Logger's): the construct's `logLevel`. Default INFO. */
  LOG_LEVEL: 'POWERTOOLS_LOG_LEVEL',
} as const;

/**
 * The log levels a deployment may set (`logLevel` of the construct, `POWERTOOLS_LOG_LEVEL` of the
 * handlers): Powertools Logger's own, from the most verbose to none. Here, beside the other
 * variables, so the construct reads them without loading Powertools.
 */
export const LOG_LEVELS = ['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR', 'CRITICAL', 'SILENT'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/**
 * Dimensions. Every metric is published under two dimension sets: `[service]` (the total, what the
 * alarms watch) and, when it concerns one definition, `[service, definition]` (per definition).
 */
export const MetricDimension = {
  /** Powertools' own dimension: `POWERTOOLS_SERVICE_NAME`, default `fanin`. */
  SERVICE: 'service',
  /** A configured definition's name; never a name taken from a message (see {@link UNKNOWN_DEFINITION}). */
  DEFINITION: 'definition',
} as const;
export type MetricDimension = (typeof MetricDimension)[keyof typeof MetricDimension];

/**
 * The `definition` value of a reply that names no configured definition (none, or a name that is
 * not configured): definition names start with a letter or digit, so it can never collide.
 */
export const UNKNOWN_DEFINITION = '(unknown)';

/** Metric names. Units in {@link METRIC_UNITS}; when each is emitted in docs/observability.md. */
export const MetricName = {
  /** An aggregate was created (its open won; a retried request that finds it does not count). */
  AGGREGATES_OPENED: 'AggregatesOpened',
  /** An aggregate was sealed with outcome `completed`. */
  AGGREGATES_COMPLETED: 'AggregatesCompleted',
  /** An aggregate was sealed with outcome `timed-out`. */
  AGGREGATES_TIMED_OUT: 'AggregatesTimedOut',
  /** An aggregate was sealed with outcome `purged` (the control bus). */
  AGGREGATES_PURGED: 'AggregatesPurged',
  /** An aggregate was sealed with outcome `failed`. */
  AGGREGATES_FAILED: 'AggregatesFailed',
  /** Milliseconds from an aggregate's open to its seal (every outcome). */
  COMPLETION_LATENCY: 'CompletionLatency',
  /** A reply was recorded into its aggregate (first delivery of its id). */
  REPLIES_RECORDED: 'RepliesRecorded',
  /** A reply id already recorded came again (a redelivery or a responder's retry). */
  REPLIES_DUPLICATE: 'RepliesDuplicate',
  /** A reply was routed to the late output (its aggregate was already sealed or closed). */
  REPLIES_LATE: 'RepliesLate',
  /** A reply was routed to the unknown output (no aggregate of its id appeared in time). */
  REPLIES_UNKNOWN: 'RepliesUnknown',
  /** A heartbeat extended its recipient's deadline (kept on the header). */
  HEARTBEATS_KEPT: 'HeartbeatsKept',
  /** A heartbeat changed nothing: after its recipient's deadline, older than the one kept, or its aggregate no longer open. */
  HEARTBEATS_IGNORED: 'HeartbeatsIgnored',
  /** Sub-requests sent again to recipients that had not replied (`responders.retry`), one per recipient and attempt. */
  RETRIES_SENT: 'RetriesSent',
  /** A failed reply was kept for a retry instead of recorded (`responders.retry.failedReplies`): its recipient is asked again. */
  FAILED_REPLIES_RETRIED: 'FailedRepliesRetried',
  /** Cancellation notices sent to recipients that had not replied when their aggregate ended (`cancelOutstanding`). */
  CANCELLATIONS_SENT: 'CancellationsSent',
  /** The sweeper found a `completing` aggregate whose completion lease had run out. */
  COMPLETIONS_LEASE_EXPIRED: 'CompletionsLeaseExpired',
  /** A resumer took over a `completing` aggregate whose lease had run out. */
  COMPLETIONS_RESUMED: 'CompletionsResumed',
  /** A completion could not be finished and stays `completing` (the `completion-stuck` alarm's condition). */
  COMPLETIONS_STUCK: 'CompletionsStuck',
  /** A due item failed in the sweeper (the `due-item-failed` condition); the sweep went on. */
  DUE_ITEMS_FAILED: 'DueItemsFailed',
  /** A sweeper invocation failed as a whole. */
  SWEEP_CYCLES_FAILED: 'SweepCyclesFailed',
  /** A distributor cycle failed as a whole. */
  DISTRIBUTOR_CYCLES_FAILED: 'DistributorCyclesFailed',
} as const;
export type MetricName = (typeof MetricName)[keyof typeof MetricName];

/** CloudWatch units (the values of Powertools' `MetricUnit`). */
export type MetricUnitName = 'Count' | 'Milliseconds';

/** The unit of each metric. */
export const METRIC_UNITS: Readonly<Record<MetricName, MetricUnitName>> = {
  AggregatesOpened: 'Count',
  AggregatesCompleted: 'Count',
  AggregatesTimedOut: 'Count',
  AggregatesPurged: 'Count',
  AggregatesFailed: 'Count',
  CompletionLatency: 'Milliseconds',
  RepliesRecorded: 'Count',
  RepliesDuplicate: 'Count',
  RepliesLate: 'Count',
  RepliesUnknown: 'Count',
  HeartbeatsKept: 'Count',
  HeartbeatsIgnored: 'Count',
  RetriesSent: 'Count',
  FailedRepliesRetried: 'Count',
  CancellationsSent: 'Count',
  CompletionsLeaseExpired: 'Count',
  CompletionsResumed: 'Count',
  CompletionsStuck: 'Count',
  DueItemsFailed: 'Count',
  SweepCyclesFailed: 'Count',
  DistributorCyclesFailed: 'Count',
};

/** The counter of each sealed outcome. */
export const OUTCOME_METRICS = {
  completed: MetricName.AGGREGATES_COMPLETED,
  'timed-out': MetricName.AGGREGATES_TIMED_OUT,
  purged: MetricName.AGGREGATES_PURGED,
  failed: MetricName.AGGREGATES_FAILED,
} as const satisfies Record<Outcome, MetricName>;

/** The counter of each fate of a reply's conditional put. */
export const REPLY_FATE_METRICS = {
  recorded: MetricName.REPLIES_RECORDED,
  duplicate: MetricName.REPLIES_DUPLICATE,
} as const satisfies Record<'recorded' | 'duplicate', MetricName>;
