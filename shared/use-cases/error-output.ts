import { MAX_REASON_LENGTH } from '../engine/limits.ts';
import { isUnfixable } from '../errors.ts';
import { redact } from '../observability/redaction.ts';
import type { RawMessage } from '../ports.ts';
import { QueueRole } from '../topology/topology.ts';
import type { FaninContext } from './context.ts';

/**
 * The error output: where a message that can never succeed goes, with its reason and the message
 * itself (cut to fit SQS without a payload bucket), so it is neither lost nor left to block its
 * queue.
 */

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

/** The most of a bad message's body an error output carries inline (as JSON, escaped). */
const MAX_INLINE_ERROR_BODY = 128 * 1024;

/** The most of its attributes, as JSON; beyond it each name and value is cut to {@link MAX_INLINE_ERROR_ATTRIBUTE}. */
const MAX_INLINE_ERROR_ATTRIBUTES = 32 * 1024;

/** The most of one attribute name or value an error output carries when the attributes are cut. */
const MAX_INLINE_ERROR_ATTRIBUTE = 1024;
