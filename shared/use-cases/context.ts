import { createHash } from 'node:crypto';
import { predicateOf } from '../engine/completion/plan.ts';
import { readsRequest } from '../engine/completion/predicate.ts';
import type { Definition } from '../engine/definition.ts';
import { jsonDepth, MAX_JSON_DEPTH, MAX_REASON_LENGTH } from '../engine/limits.ts';
import { BadMessageError, isUnfixable } from '../errors.ts';
import type {
  Clock,
  Log,
  Metrics,
  OutputPublisher,
  PayloadStore,
  RawMessage,
  ReplyRouter,
  RequestSender,
  StateStore,
  StoredPayload,
  TimerScheduler,
} from '../ports.ts';
import { SILENT_LOG } from '../ports.ts';
import { QueueRole } from '../topology/topology.ts';
import type { RecipientPolicy } from './recipients.ts';

/** Everything a use case needs, injected: the ports, the definitions and the clock. */
export interface FaninContext {
  readonly store: StateStore;
  readonly outputs: OutputPublisher;
  readonly timers: TimerScheduler;
  readonly sender: RequestSender;
  readonly definitions: ReadonlyMap<string, Definition>;
  /** Picks the reply partition each aggregate's sub-requests name as their reply-to. */
  readonly replies: ReplyRouter;
  readonly clock: Clock;
  /**
   * How long a completing invocation owns an aggregate before a resumer may take it over: the
   * function timeout plus a margin (`completionLeaseSeconds` in the topology). @default 120 s
   */
  readonly completionLeaseMs: number;
  /** Largest reply body kept in the state store (a DynamoDB item is at most 400 KB). */
  readonly maxReplyBytes: number;
  /** The claim-check path (large payloads in S3); without it they are refused to the error output. */
  readonly payloads?: PayloadStore;
  /** Where the use cases report what they did and what went wrong (ids and reasons only). */
  readonly log: Log;
  /** Which queues a request may name as recipients (request-time recipient lists are untrusted). */
  readonly recipients: RecipientPolicy;
  /** Puts a request back on the ingress queue, for a large fan-out to go on in another invocation. */
  readonly requeue: (message: RawMessage) => Promise<void>;
  /**
   * The SQS senders (`SenderId`: an IAM user id, or a role id followed by `:` and a session) of
   * fanin's distributor: only their copies' `fanin-origin-sent-at` is taken as a reply's arrival
   * (replies.ts, arrivalOf). None by default: a moved reply arrives when it was moved.
   */
  readonly trustedMovers?: readonly string[];
  /**
   * Sends a command to the control queue: the continuation of a `complete` or `purge` of every
   * aggregate of a definition (or of all), from the cursor where this invocation stopped.
   */
  readonly continueControl: (body: string) => Promise<void>;
  /** `due` index entries a `complete`/`purge` of a definition (or all) reads a page. @default 100 */
  readonly controlPageSize: number;
  /** Pages one control invocation works through before it sends the rest on. @default 10 */
  readonly controlPagesPerInvocation: number;
  /** Counts what happened (aggregates opened and sealed, replies by fate) for CloudWatch; none when absent. */
  readonly metrics?: Metrics;
}

/** Defaults of the tunables in {@link FaninContext}. */
export const CONTEXT_DEFAULTS = {
  completionLeaseMs: 120_000,
  maxReplyBytes: 350_000,
  controlPageSize: 100,
  controlPagesPerInvocation: 10,
  log: SILENT_LOG,
} as const;

/** Where a message that could not be processed came from. */
export type ErrorSource = 'ingress' | 'reply' | 'control' | 'timer';

/**
 * Routes a message that can never succeed to the error output with its reason and the original
 * message, so it is neither lost nor left to block its queue. The id is derived from the source
 * message id, so a redelivered bad message yields the same error id.
 */
export async function routeError(
  ctx: FaninContext,
  source: ErrorSource,
  message: RawMessage,
  given: string,
): Promise<void> {
  // A reason quotes message values; a huge one must not make the error output unsendable.
  const reason = given.length > MAX_REASON_LENGTH ? `${given.slice(0, MAX_REASON_LENGTH)}…` : given;
  ctx.log.warn('message routed to the error output', {
    source,
    messageId: message.messageId,
    reason: redact(reason),
  });
  await ctx.outputs.publish(QueueRole.ERROR, {
    id: `error/${source}/${message.messageId}`,
    type: 'fanin.error',
    source,
    reason,
    at: ctx.clock(),
    message: { messageId: message.messageId, ...(ctx.payloads ? whole(message) : fitted(message)) },
  });
}

function whole(message: RawMessage): Pick<RawMessage, 'body' | 'attributes'> {
  return { body: message.body, attributes: message.attributes };
}

/**
 * The body and attributes of a bad message cut to fit an SQS output without a payload bucket,
 * measured as the output carries them (JSON-escaped: a body of quotes doubles in size), so the
 * error output itself can always be sent.
 */
function fitted(
  message: RawMessage,
): Pick<RawMessage, 'body' | 'attributes'> & { truncated?: true; bytes?: number } {
  const bytes = Buffer.byteLength(message.body);
  const attributesSize = Buffer.byteLength(JSON.stringify(message.attributes));
  if (
    bytes <= MAX_INLINE_ERROR_BODY &&
    Buffer.byteLength(JSON.stringify(message.body)) + attributesSize <= MAX_INLINE_ERROR_BODY
  )
    return whole(message);
  const attributes =
    attributesSize <= MAX_INLINE_ERROR_ATTRIBUTES
      ? message.attributes
      : Object.fromEntries(
          Object.entries(message.attributes).map(([name, value]) => [
            name.slice(0, MAX_INLINE_ERROR_ATTRIBUTE),
            value.slice(0, MAX_INLINE_ERROR_ATTRIBUTE),
          ]),
        );
  const budget = MAX_INLINE_ERROR_BODY - Math.min(attributesSize, MAX_INLINE_ERROR_ATTRIBUTES);
  let body = message.body.slice(0, budget);
  for (let size = Buffer.byteLength(JSON.stringify(body)); size > budget; ) {
    body = body.slice(0, Math.floor((body.length * budget) / size) - 1);
    size = Buffer.byteLength(JSON.stringify(body));
  }
  return { body, attributes, truncated: true, bytes };
}

/**
 * What a use case does with an error raised while handling `message`: bad input that no retry can
 * fix (a {@link FaninError} with `retryable` false, see `shared/errors.ts`) goes to the error
 * output with the error's message as its reason; anything else is thrown on, for the message to be
 * redelivered.
 *
 * @example
 * try {
 *   command = parseCommand(raw);
 * } catch (error) {
 *   await routeIfUnfixable(ctx, 'control', raw, error); // throws unless it routed
 *   return;
 * }
 */
export async function routeIfUnfixable(
  ctx: FaninContext,
  source: ErrorSource,
  message: RawMessage,
  error: unknown,
): Promise<void> {
  if (!isUnfixable(error)) throw error;
  await routeError(ctx, source, message, error.message);
}

/**
 * A reason fit for a log: values it quotes from the message (a definition name, an id, a
 * received value) are elided. The error output keeps the full reason with the message.
 */
export function redact(reason: string): string {
  return reason.replace(/"[^"]*"/g, '"…"').replace(/received [^;)]*/g, 'received …');
}

/** An error as one loggable line: its name and message, never the message body that caused it. */
export function describeError(error: unknown): string {
  return redact(error instanceof Error ? `${error.name}: ${error.message}` : String(error));
}

/** The most of a bad message's body an error output carries inline (as JSON, escaped). */
const MAX_INLINE_ERROR_BODY = 128 * 1024;
/** The most of its attributes, as JSON; beyond it each name and value is cut to {@link MAX_INLINE_ERROR_ATTRIBUTE}. */
const MAX_INLINE_ERROR_ATTRIBUTES = 32 * 1024;
/** The most of one attribute name or value an error output carries when the attributes are cut. */
const MAX_INLINE_ERROR_ATTRIBUTE = 1024;

/**
 * Resolves a claim-check pointer to the real body, so every handler sees the payload whichever
 * path it travelled. A pointer without a claim-check store configured is a bad message.
 */
export async function resolvePayload(ctx: FaninContext, message: RawMessage): Promise<RawMessage> {
  const pointer = ['ExtendedPayloadSize', 'SQSLargePayloadSize', 'AWSOffloadedPayloadSize'].some(
    (a) => a in message.attributes,
  );
  if (!pointer) return message;
  if (!ctx.payloads)
    throw new BadMessageError('the message is a claim-check pointer but no payload bucket is configured');
  return { ...message, body: await ctx.payloads.decode(message.body, message.attributes) };
}

/**
 * JSON text as the state store keeps it: inline when it fits an item, otherwise in S3 under a
 * key derived from `key` and the text itself, and referenced. A retry of the same payload writes
 * the same object; a different payload under the same ids (a duplicate reply with another body,
 * a request refused because its aggregate id is taken) writes another object, so nothing that is
 * then refused or ignored can overwrite a body an aggregate already references. Without a
 * payload bucket a payload that does not fit is bad input.
 */
export async function storable(
  ctx: FaninContext,
  key: string,
  json: string,
  what: string,
): Promise<StoredPayload> {
  const size = Buffer.byteLength(json);
  if (size <= ctx.maxReplyBytes) return { payload: json };
  if (!ctx.payloads) {
    throw new BadMessageError(
      `${what} is ${size} bytes; at most ${ctx.maxReplyBytes} are kept without a payload bucket`,
    );
  }
  const objectKey = `state/${createHash('sha256').update(key).update('\u0000').update(json).digest('hex')}`;
  return { payload: '', payloadRef: await ctx.payloads.put(objectKey, json) };
}

/** Reads back what {@link storable} kept. */
export async function loadStored(ctx: FaninContext, stored: StoredPayload): Promise<string> {
  if (!stored.payloadRef) return stored.payload;
  if (!ctx.payloads) {
    throw new Error(
      `s3://${stored.payloadRef.s3BucketName}/${stored.payloadRef.s3Key} needs a payload bucket`,
    );
  }
  return ctx.payloads.get(stored.payloadRef);
}

/**
 * Whether an aggregate's request is kept: only a `custom` aggregation reads it, and only a
 * labelled splitter or a recipient list labels its missing replies from it. Otherwise storing it
 * would cost a write per aggregate for nothing.
 */
export function keepsRequest(definition: Definition): boolean {
  const fanOut = definition.fanOut;
  return (
    definition.aggregation.algorithm === 'custom' ||
    fanOut?.type === 'recipient-list' ||
    (fanOut?.type === 'splitter' && fanOut.labelPath !== undefined) ||
    readsRequest(predicateOf(definition.completion) ?? '')
  );
}

/** Parses a message body as JSON, or throws {@link BadMessageError} (also when it nests too deep). */
export function parseJsonBody(message: RawMessage): unknown {
  if (jsonDepth(message.body, MAX_JSON_DEPTH) > MAX_JSON_DEPTH)
    throw new BadMessageError(`body nests deeper than ${MAX_JSON_DEPTH} levels of arrays and objects`);
  try {
    return JSON.parse(message.body);
  } catch (error) {
    // V8's message quotes the body; the reason must not (it is logged), so keep only where it broke.
    const at = /position (\d+)/.exec((error as Error).message)?.[1];
    throw new BadMessageError(`body is not valid JSON${at ? ` (at position ${at})` : ''}`, { cause: error });
  }
}
