import { CorrelationError } from '../errors.ts';
import type { Definition, ValueSource } from './definition.ts';
import { compileExpression } from './expression.ts';
import { MAX_KEY_LENGTH } from './limits.ts';
import { readPath } from './path.ts';

/** A message as the engine sees it: a parsed body and its string attributes. No SQS types. */
export interface InboundMessage {
  readonly body: unknown;
  readonly attributes: Readonly<Record<string, string>>;
  /** The transport's own id (the SQS MessageId): the reply id of last resort. */
  readonly messageId?: string;
}

/** The attributes of fanin's wire contract (see docs/wire-contract.md). */
export const WireAttribute = {
  AGGREGATE_ID: 'fanin-aggregate-id',
  REPLY_ID: 'fanin-reply-id',
  DEFINITION: 'fanin-definition',
  REPLY_TO: 'fanin-reply-to',
  REQUEST_ID: 'fanin-request-id',
  /**
   * Set by fanin when it moves a message between queues (the distributor, evacuation, redrive):
   * the SQS message id the message had before its first move. A copy gets a new message id; this
   * keeps the message's identity across moves.
   */
  ORIGIN_MESSAGE_ID: 'fanin-origin-message-id',
  /**
   * Set by the distributor on a copy it moves: when SQS first accepted the message (its
   * `SentTimestamp`, epoch ms). Taken as the reply's arrival only on a message whose SQS sender
   * is one of fanin's movers (`trustedMovers`); from anyone else it is ignored.
   */
  ORIGIN_SENT_AT: 'fanin-origin-sent-at',
} as const;

/**
 * Reads a value from a message: an attribute, a path into the body, or a JSONata expression
 * evaluated over `{ body, attributes }`.
 */
export async function readValue(source: ValueSource, message: InboundMessage): Promise<unknown> {
  switch (source.source) {
    case 'attribute':
      return message.attributes[source.name];
    case 'path':
      return readPath(message.body, source.path);
    case 'jsonata':
      return compileExpression(source.expression).evaluate({
        body: message.body,
        attributes: message.attributes,
      });
  }
}

/**
 * Turns a correlation value into a key: strings and finite numbers only, at most
 * {@link MAX_KEY_LENGTH} characters (a reply's sort key and a self-starting aggregate's id are
 * built from it).
 */
export function asKey(value: unknown, what: string): string {
  const key = typeof value === 'number' && Number.isFinite(value) ? String(value) : value;
  if (typeof key !== 'string' || key.length === 0) {
    const received = value === undefined ? 'nothing' : (JSON.stringify(value) ?? String(value));
    throw new CorrelationError(
      `${what} is missing (received ${received.length > 80 ? `${received.slice(0, 80)}…` : received})`,
    );
  }
  if (key.length > MAX_KEY_LENGTH)
    throw new CorrelationError(`${what} is longer than ${MAX_KEY_LENGTH} characters`);
  return key;
}

/**
 * The correlation key of a message under a definition: the aggregate id (initialized) or the
 * group key the aggregate is opened under (self-starting). Throws {@link CorrelationError}.
 */
export async function correlationKey(definition: Definition, message: InboundMessage): Promise<string> {
  return asKey(
    await readValue(definition.correlation, message),
    `correlation (${describeSource(definition.correlation)})`,
  );
}

/**
 * The reply id used to recognise duplicates: the definition's source, else the `fanin-reply-id`
 * attribute, else the message's transport identity: the `fanin-origin-message-id` a move gave it
 * (the message id it had before it was first moved), else its message id. That identity catches
 * redeliveries and copies left by a move that died between its send and its delete, but not a
 * responder that publishes the same reply twice.
 */
export async function replyIdOf(
  definition: Definition | undefined,
  message: InboundMessage,
): Promise<string> {
  if (definition?.replyId) {
    return asKey(
      await readValue(definition.replyId, message),
      `reply id (${describeSource(definition.replyId)})`,
    );
  }
  // An empty attribute is as good as none: fall back to the transport's identity.
  const value =
    message.attributes[WireAttribute.REPLY_ID] ||
    message.attributes[WireAttribute.ORIGIN_MESSAGE_ID] ||
    message.messageId;
  return asKey(value, replyIdSource(definition, message));
}

/**
 * Where {@link replyIdOf} reads a message's reply id from, for a reason that refuses it: the
 * definition's source, else the attribute that carried it (`fanin-reply-id`, else
 * `fanin-origin-message-id`), else the SQS message id (`fanin-reply-id` when there is none: what
 * a sender would set).
 */
export function replyIdSource(definition: Definition | undefined, message: InboundMessage): string {
  if (definition?.replyId) return `reply id (${describeSource(definition.replyId)})`;
  if (message.attributes[WireAttribute.REPLY_ID]) return `reply id (attribute ${WireAttribute.REPLY_ID})`;
  if (message.attributes[WireAttribute.ORIGIN_MESSAGE_ID])
    return `reply id (attribute ${WireAttribute.ORIGIN_MESSAGE_ID})`;
  // None at all: the attribute is what a sender would set.
  return message.messageId
    ? 'reply id (the SQS message id)'
    : `reply id (attribute ${WireAttribute.REPLY_ID})`;
}

/** Says where a value is read from, for error messages. */
export function describeSource(source: ValueSource): string {
  switch (source.source) {
    case 'attribute':
      return `attribute ${source.name}`;
    case 'path':
      return `body path ${source.path}`;
    case 'jsonata':
      return `expression ${source.expression}`;
  }
}
