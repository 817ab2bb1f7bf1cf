/**
 * fanin's one error family. Every error fanin raises on purpose is a {@link FaninError}; its
 * `retryable` flag says what becomes of the message being handled when it is thrown:
 *
 * - `retryable: false`: the input itself is wrong (a malformed body, an unknown definition, a
 *   reply without a usable correlation value, an expression that fails on this payload). No retry
 *   can fix it, so the message goes to the error output with the error's message as its `reason`
 *   (`routeIfUnfixable` in `use-cases/context.ts`) and is never retried.
 * - `retryable: true`: anything else (a channel, a queue or S3 that failed, no partition
 *   available, an output too large, a programming error): the message is not at fault, so it fails
 *   and is redelivered, and lands in its dead-letter queue if it keeps failing.
 *
 * The names, messages and fields are a contract: logs, the error output and tests read them.
 * This module imports one type of the engine's constants and nothing else, so every layer (the
 * engine included) may use it.
 */

import type { OutputChannel } from './engine/constants.ts';

/** Why a partition takes no new messages. */
export type UnavailableReason = 'send-disabled' | 'at-high-threshold' | 'unreachable';

/** Options of a {@link FaninError}: `cause`, and whether a retry may succeed. */
export interface FaninErrorOptions extends ErrorOptions {
  /** False when the input itself is wrong and no retry can fix it. @default true */
  readonly retryable?: boolean;
}

/** Base of every error fanin raises. */
export class FaninError extends Error {
  /** False when the input itself is wrong: route the message to the error output, never retry it. */
  public readonly retryable: boolean;
  public constructor(message: string, options: FaninErrorOptions = {}) {
    const { retryable = true, ...errorOptions } = options;
    super(message, errorOptions);
    this.name = 'FaninError';
    this.retryable = retryable;
  }
}

/**
 * Whether `error` is bad input that no retry can fix: a {@link FaninError} with `retryable` false.
 *
 * @example
 * if (!isUnfixable(error)) throw error; // redelivered
 * await routeError(ctx, 'reply', raw, error.message);
 */
export function isUnfixable(error: unknown): error is FaninError {
  return error instanceof FaninError && !error.retryable;
}

// ---- bad input: retryable false

/** A problem with the message itself: retrying cannot fix it, so it goes to the error output. */
export class BadMessageError extends FaninError {
  public constructor(message: string, options?: ErrorOptions) {
    super(message, { ...options, retryable: false });
    this.name = 'BadMessageError';
  }
}

/** A definition failed validation; `issues` lists each field path with what was wrong. */
export class InvalidDefinitionError extends FaninError {
  public readonly issues: readonly string[];
  public constructor(issues: readonly string[], options?: ErrorOptions) {
    super(`invalid aggregation definition: ${issues.join('; ')}`, { ...options, retryable: false });
    this.name = 'InvalidDefinitionError';
    this.issues = issues;
  }
}

/** A JSONata expression failed to compile, threw, or exceeded its time or depth budget. */
export class ExpressionError extends FaninError {
  public readonly expression: string;
  public constructor(expression: string, message: string, options?: ErrorOptions) {
    super(`expression ${JSON.stringify(expression)} failed: ${message}`, { ...options, retryable: false });
    this.name = 'ExpressionError';
    this.expression = expression;
  }
}

/** A message carried no usable correlation value (or reply id). */
export class CorrelationError extends FaninError {
  public constructor(message: string, options?: ErrorOptions) {
    super(message, { ...options, retryable: false });
    this.name = 'CorrelationError';
  }
}

// ---- not the input's fault: retryable true (the message is redelivered)

/**
 * An output too large for its channel when no claim-check bucket is configured: it can never be
 * sent. Retryable all the same: it is not the fault of the message being handled (a reply that
 * completes an aggregate whose result is too large was recorded and is fine), so that message is
 * redelivered, never routed to the error output; the stuck completion raises its own alarm.
 */
export class OutputTooLargeError extends FaninError {
  public readonly outputId: string;
  public readonly bytes: number;
  public constructor(outputId: string, bytes: number) {
    super(`output ${outputId} is ${bytes} bytes, more than SQS takes, and no payload bucket is configured`);
    this.name = 'OutputTooLargeError';
    this.outputId = outputId;
    this.bytes = bytes;
  }
}

/**
 * One channel of an output failed after others were delivered: the caller records `delivered`, so
 * a retry sends only what is missing.
 */
export class OutputChannelError extends FaninError {
  public readonly channel: OutputChannel;
  public readonly delivered: readonly OutputChannel[];
  public constructor(channel: OutputChannel, delivered: readonly OutputChannel[], options?: ErrorOptions) {
    super(`output channel ${channel} failed (delivered: ${delivered.join(', ') || 'none'})`, options);
    this.name = 'OutputChannelError';
    this.channel = channel;
    this.delivered = delivered;
  }
}

/** No partition can take the message; `partitions` says why for each. Nothing was sent. */
export class NoPartitionAvailableError extends FaninError {
  public readonly destination: string;
  public readonly partitions: readonly { index: number; reason: UnavailableReason; detail?: string }[];
  public constructor(destination: string, partitions: NoPartitionAvailableError['partitions']) {
    super(
      `no partition of ${destination} is available: ${partitions
        .map((p) => `#${p.index} ${p.reason}${p.detail ? ` (${p.detail})` : ''}`)
        .join(', ')}`,
    );
    this.name = 'NoPartitionAvailableError';
    this.destination = destination;
    this.partitions = partitions;
  }
}
