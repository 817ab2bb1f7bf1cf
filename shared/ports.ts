import type { AggregateStatus, Outcome } from './engine/constants.ts';
import type { EffectiveParameters, RuntimeParameters } from './engine/definition.ts';
import type { OutputRole } from './topology/topology.ts';

/**
 * The ports of the data plane: what the use cases need from the outside world. The DynamoDB and
 * SQS adapters implement them; the use cases know nothing of the AWS SDK.
 */

/** The small header item of an aggregate (also its tombstone once closed). */
export interface AggregateHeader {
  readonly aggregateId: string;
  readonly definition: string;
  readonly status: AggregateStatus;
  readonly outcome?: Outcome;
  /** Replies expected (initialized aggregates). */
  readonly expected?: number;
  /** Distinct replies recorded. */
  readonly received: number;
  readonly lateCount: number;
  readonly openedAt: number;
  /** Epoch ms when the aggregate times out. */
  readonly deadline?: number;
  readonly params: EffectiveParameters;
  /** The request that opened it (initialized) — a retried request is recognised by it. */
  readonly requestId?: string;
  /** True once the fan-out has sent every sub-request. */
  readonly dispatched: boolean;
  /** The reply that opened a self-starting aggregate. */
  readonly openedBy?: string;
  /** When completion was won: the timestamp the output carries, stable across retries. */
  readonly completingAt?: number;
  /** True once the completing invocation has emitted the result (a resumed completion skips emitting). */
  readonly emitted?: boolean;
  /** When closed: epoch seconds after which the tombstone may be deleted. */
  readonly expiresAt?: number;
}

/** An S3 location of a payload (the SQS Extended Client's pointer). */
export interface PayloadPointer {
  readonly s3BucketName: string;
  readonly s3Key: string;
}

/** JSON text kept in the state store, or in S3 when too large for an item. */
export interface StoredPayload {
  /** The JSON text ('' when it is in S3). */
  readonly payload: string;
  readonly payloadRef?: PayloadPointer;
}

/** A reply to record. */
export interface ReplyToRecord {
  readonly replyId: string;
  /** The retained body, as JSON text ('' when it is in S3, see `payloadRef`). */
  readonly payload: string;
  /** Where the retained body is when it was too large for a DynamoDB item. */
  readonly payloadRef?: PayloadPointer;
  readonly receivedAt: number;
}

/** What opening a self-starting aggregate with its first reply needs. */
export interface SelfStartSpec {
  readonly definition: string;
  readonly openedAt: number;
  readonly deadline?: number;
  readonly params: EffectiveParameters;
  readonly openedBy: string;
}

/** The outcome of recording a group of replies to one aggregate. */
export interface RecordResult {
  /** Reply ids newly recorded. */
  readonly accepted: readonly string[];
  /** Reply ids that were already recorded. */
  readonly duplicates: readonly string[];
  /** Set when the aggregate does not exist (nothing was recorded). */
  readonly missing: boolean;
  /** The header after the write (or as found when the write was refused). */
  readonly header?: AggregateHeader;
}

/** A reply held because its aggregate did not exist yet (IBM's unknown message timeout). */
export interface HeldReply {
  readonly aggregateId: string;
  readonly replyId: string;
  readonly definition?: string;
  /** The original message: body text and attributes, so it can be routed as it came. */
  readonly body: string;
  readonly attributes: Readonly<Record<string, string>>;
  readonly receivedAt: number;
  /** Epoch ms at which it goes to the unknown output if its aggregate has not appeared. */
  readonly dueAt: number;
}

/** An item the sweeper found due. */
export type DueItem =
  | { readonly kind: 'aggregate'; readonly aggregateId: string; readonly dueAt: number }
  | { readonly kind: 'held'; readonly aggregateId: string; readonly replyId: string; readonly dueAt: number };

/** The aggregate state store (DynamoDB in production and tests). */
export interface StateStore {
  /** Creates an aggregate; returns the existing header instead when the id is taken. */
  openAggregate(
    header: AggregateHeader,
    request: StoredPayload,
  ): Promise<{ readonly created: boolean; readonly header: AggregateHeader }>;
  /** Marks the fan-out as sent. */
  markDispatched(aggregateId: string): Promise<void>;
  getHeader(aggregateId: string): Promise<AggregateHeader | undefined>;
  /** The request stored when the aggregate was opened. */
  getRequest(aggregateId: string): Promise<StoredPayload | undefined>;
  /**
   * Records replies exactly once, together with the header counter, in one transaction; held
   * replies listed in `consume` are deleted in the same transaction. Opens the aggregate when
   * `selfStart` is given and it does not exist.
   */
  recordReplies(
    aggregateId: string,
    replies: readonly ReplyToRecord[],
    options?: { readonly selfStart?: SelfStartSpec; readonly consume?: readonly string[] },
  ): Promise<RecordResult>;
  listReplies(aggregateId: string): Promise<ReplyToRecord[]>;
  /** Wins the right to complete: open → completing. Returns the header, or undefined when another won. */
  beginCompletion(
    aggregateId: string,
    outcome: Outcome,
    at: number,
    leaseUntil: number,
  ): Promise<AggregateHeader | undefined>;
  /** Records that the result was emitted, so a resumed completion does not rebuild it. */
  markEmitted(aggregateId: string): Promise<void>;
  /** completing → closed: the header becomes the tombstone; reply items are removed. */
  close(aggregateId: string, expiresAt: number, outcome: Outcome): Promise<void>;
  countLate(aggregateId: string): Promise<void>;
  holdReply(held: HeldReply): Promise<boolean>;
  getHeld(aggregateId: string, replyId: string): Promise<HeldReply | undefined>;
  listHeld(aggregateId: string): Promise<HeldReply[]>;
  deleteHeld(aggregateId: string, replyId: string): Promise<void>;
  dueItems(now: number, limit: number): Promise<DueItem[]>;
  listOpen(definition: string): Promise<AggregateHeader[]>;
  getParameters(definition: string): Promise<RuntimeParameters>;
  setParameters(definition: string, parameters: RuntimeParameters): Promise<void>;
}

/** One message on an output. */
export interface OutputMessage {
  /** Deterministic: a retry emits the same id, so consumers (and SQS FIFO) deduplicate. */
  readonly id: string;
  readonly type: string;
  readonly aggregateId?: string;
  readonly definition?: string;
  readonly [key: string]: unknown;
}

/** An output too large for its channel when no claim-check bucket is configured: it can never be sent. */
export class OutputTooLargeError extends Error {
  public readonly outputId: string;
  public readonly bytes: number;
  public constructor(outputId: string, bytes: number) {
    super(`output ${outputId} is ${bytes} bytes, more than SQS takes, and no payload bucket is configured`);
    this.name = 'OutputTooLargeError';
    this.outputId = outputId;
    this.bytes = bytes;
  }
}

/** Emits to the output channels (SQS FIFO queues, optionally an EventBridge bus). */
export interface OutputPublisher {
  publish(
    role: OutputRole,
    message: OutputMessage,
    options?: { readonly eventBridge?: boolean },
  ): Promise<void>;
}

/** What a timer fires for. */
export type TimerMessage =
  | { readonly kind: 'deadline'; readonly aggregateId: string; readonly dueAt: number }
  | { readonly kind: 'held'; readonly aggregateId: string; readonly replyId: string; readonly dueAt: number };

/** Arms timers (SQS delay messages, at most 900 s, re-armed until due). */
export interface TimerScheduler {
  arm(timer: TimerMessage, now: number): Promise<void>;
}

/** A sub-request to send. */
export interface SubRequest {
  /** Target queue: a name in this account and region, or a URL. */
  readonly target: string;
  readonly body: string;
  readonly attributes: Readonly<Record<string, string>>;
  /** Stable per sub-request, for FIFO targets' deduplication. */
  readonly deduplicationId: string;
  readonly groupId: string;
}

/** Sends sub-requests to their targets. */
export interface RequestSender {
  send(requests: readonly SubRequest[]): Promise<void>;
}

/** A message as it came off a queue, before any interpretation. */
export interface RawMessage {
  /** The transport's id (SQS MessageId): stable across redeliveries. */
  readonly messageId: string;
  readonly body: string;
  /** String message attributes. */
  readonly attributes: Readonly<Record<string, string>>;
  /** How many times it has been received (1 on first delivery). */
  readonly receiveCount: number;
}

/**
 * The claim-check path (seed 003): large payloads live in S3, the SQS message carries a pointer in
 * the SQS Extended Client's format.
 */
export interface PayloadStore {
  /** The real body of a received message (fetched when it is a pointer). */
  decode(body: string, attributes?: Readonly<Record<string, string>>): Promise<string>;
  put(key: string, payload: string): Promise<PayloadPointer>;
  get(pointer: PayloadPointer): Promise<string>;
}

/** Chooses the reply partition a sub-request names as its reply-to (affinity by aggregate). */
export interface ReplyRouter {
  /** The queue URL replies of this aggregate should go to now; throws when no partition is available. */
  replyTo(aggregateId: string): Promise<string>;
}

/**
 * Structured logging. Callers pass ids, counts and reasons — never a message body, payload or
 * attribute value (those may carry personal or secret data).
 */
export interface Log {
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

/** A {@link Log} that drops everything. */
export const SILENT_LOG: Log = { info: () => undefined, warn: () => undefined, error: () => undefined };

/** The clock, injectable so tests can move time instead of waiting. */
export type Clock = () => number;

/**
 * Conditions an operator must hear about: the use cases log them at error level with the field
 * `alarm` set to one of these values, and the stack turns each into a CloudWatch metric (a metric
 * filter on `{ $.alarm = "<value>" }`) with an alarm.
 */
export const Alarm = {
  /** One output channel (SQS queue, EventBridge bus, S3) keeps failing; the others were not re-sent. */
  OUTPUT_CHANNEL_FAILED: 'output-channel-failed',
  /** A due item (an aggregate's deadline or lease, a held reply) failed in the sweeper. */
  DUE_ITEM_FAILED: 'due-item-failed',
  /** A completion could not be finished (its stored bodies are gone, its result cannot be rebuilt). */
  COMPLETION_STUCK: 'completion-stuck',
} as const;
export type Alarm = (typeof Alarm)[keyof typeof Alarm];
