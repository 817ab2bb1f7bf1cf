import { createHash } from 'node:crypto';
import { type EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { type MessageAttributeValue, SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { OutputChannel } from '../engine/constants.ts';
import { OutputChannelError, OutputTooLargeError } from '../errors.ts';
import { traceEventField, traceSystemAttributes } from '../observability/trace-context.ts';
import type { OutputMessage, OutputPublisher, PayloadPointer } from '../ports.ts';
import type { OutputRole } from '../topology/topology.ts';
import { DEFAULT_THRESHOLD_BYTES, S3ClaimCheck } from './s3-claim-check.ts';

/** The EventBridge `source` of fanin's output events. */
export const EVENT_SOURCE = 'fanin';

/**
 * Publishes outputs to their FIFO queues and, when asked, to an EventBridge bus.
 *
 * The deduplication id is a hash of the output's deterministic id, so a retried emission inside
 * SQS's five-minute window is dropped by SQS itself, and any later one carries the same `id` for
 * the consumer to drop. The group is the aggregate, so outputs of one aggregate stay in order
 * while different aggregates flow in parallel.
 */
export class OutputChannelPublisher implements OutputPublisher {
  /** EventBridge takes events of at most 256 KB; a larger result is referenced, not inlined. */
  private static readonly MAX_EVENT_BYTES = 250_000;
  private readonly sqs: SQSClient;
  private readonly queueUrls: Readonly<Record<OutputRole, string>>;
  private readonly eventBridge?: EventBridgeClient;
  private readonly eventBusName?: string;
  private readonly claimCheck?: S3ClaimCheck;

  public constructor(options: {
    readonly sqs: SQSClient;
    readonly queueUrls: Readonly<Record<OutputRole, string>>;
    readonly eventBridge?: EventBridgeClient;
    readonly eventBusName?: string;
    /** Large outputs take the claim-check path (S3 + Extended Client pointer). */
    readonly claimCheck?: S3ClaimCheck;
  }) {
    this.sqs = options.sqs;
    this.queueUrls = options.queueUrls;
    if (options.eventBridge) this.eventBridge = options.eventBridge;
    if (options.eventBusName) this.eventBusName = options.eventBusName;
    if (options.claimCheck) this.claimCheck = options.claimCheck;
  }

  public async publish(
    role: OutputRole,
    message: OutputMessage,
    options: { readonly eventBridge?: boolean; readonly skip?: readonly OutputChannel[] } = {},
  ): Promise<void> {
    const skip = new Set(options.skip ?? []);
    const delivered: OutputChannel[] = [...skip];
    const body = JSON.stringify(message);
    const attributes: Record<string, MessageAttributeValue> = {
      'fanin-output': { DataType: 'String', StringValue: role },
      'fanin-type': { DataType: 'String', StringValue: message.type },
      ...(message.aggregateId
        ? { 'fanin-aggregate-id': { DataType: 'String', StringValue: message.aggregateId } }
        : {}),
    };
    let encoded: {
      body: string;
      attributes: Record<string, MessageAttributeValue>;
      pointer?: PayloadPointer;
    };
    if (this.claimCheck) {
      // The key follows the output id, so a retried emission rewrites the same object.
      encoded = await this.claimCheck.encode(body, attributes, `outputs/${hash(message.id)}`);
    } else if (S3ClaimCheck.messageSize(body, attributes) > DEFAULT_THRESHOLD_BYTES) {
      // A message fanin carries (a late, unknown or refused input) is cut to fit, saying so: no
      // retry could ever send it whole, and failing it would cycle its input into the DLQ.
      const fit = fitCarried(message, DEFAULT_THRESHOLD_BYTES - S3ClaimCheck.messageSize('', attributes));
      if (!fit) throw new OutputTooLargeError(message.id, Buffer.byteLength(body));
      encoded = { body: JSON.stringify(fit), attributes };
    } else {
      encoded = { body, attributes };
    }
    if (!skip.has('queue')) {
      await this.sqs.send(
        new SendMessageCommand({
          QueueUrl: this.queueUrls[role],
          MessageBody: encoded.body,
          MessageGroupId: hash(message.aggregateId ?? message.id).slice(0, 64),
          MessageDeduplicationId: hash(message.id),
          MessageAttributes: encoded.attributes,
          ...traceSystemAttributes(),
        }),
      );
      delivered.push('queue');
    }
    if (options.eventBridge && this.eventBridge && this.eventBusName && !skip.has('events')) {
      const detail =
        Buffer.byteLength(body) <= OutputChannelPublisher.MAX_EVENT_BYTES
          ? body
          : eventDetail(
              { ...message, result: undefined, missing: undefined, payloadPointer: encoded.pointer ?? null },
              OutputChannelPublisher.MAX_EVENT_BYTES,
            );
      const result = await this.eventBridge
        .send(
          new PutEventsCommand({
            Entries: [
              {
                EventBusName: this.eventBusName,
                Source: EVENT_SOURCE,
                DetailType: message.type,
                Detail: detail,
                ...traceEventField(),
              },
            ],
          }),
        )
        .catch((error: unknown) => {
          throw new OutputChannelError('events', delivered, { cause: error });
        });
      if ((result.FailedEntryCount ?? 0) > 0) {
        const entry = result.Entries?.find((e) => e.ErrorCode);
        throw new OutputChannelError('events', delivered, {
          cause: new Error(
            `EventBridge refused output ${message.id}: ${entry?.ErrorCode} ${entry?.ErrorMessage}`,
          ),
        });
      }
    }
  }
}

/** The input message a late, unknown or error output carries (its body as received). */
interface CarriedMessage {
  readonly body: string;
  readonly attributes?: unknown;
  readonly truncated?: boolean;
  readonly bytes?: number;
  readonly [key: string]: unknown;
}

function carriedOf(message: OutputMessage): CarriedMessage | undefined {
  const carried = message.message;
  if (typeof carried !== 'object' || carried === null) return undefined;
  return typeof (carried as { body?: unknown }).body === 'string' ? (carried as CarriedMessage) : undefined;
}

/**
 * An event's detail for a message too large to go on the bus whole: without its result (the
 * pointer names the stored copy) and with the carried message's body cut as on the queue.
 */
function eventDetail(message: OutputMessage, maxBytes: number): string {
  const text = JSON.stringify(message);
  if (Buffer.byteLength(text) <= maxBytes) return text;
  const fit = fitCarried(message, maxBytes);
  return fit ? JSON.stringify(fit) : text;
}

/**
 * `message` with the body of the input message it carries cut so its JSON is at most `maxBytes`
 * (with `truncated: true`, the body's full size in `bytes` and why in `truncatedReason`, the
 * fields the error output already uses), and the input's attributes left out too
 * (`attributesOmitted`) when even an empty body would not fit. The cut is a function of the
 * message alone, so every retry sends the same text. Undefined when the message carries no input
 * body (a result: the use case decides what a result too large becomes, before its seal).
 */
export function fitCarried(message: OutputMessage, maxBytes: number): OutputMessage | undefined {
  const carried = carriedOf(message);
  if (!carried) return undefined;
  const bytes =
    carried.truncated && carried.bytes !== undefined ? carried.bytes : Buffer.byteLength(carried.body);
  const truncated = {
    ...carried,
    body: '',
    truncated: true,
    bytes,
    truncatedReason: `the body is ${bytes} bytes, more than this output carries without a payload bucket: only its beginning is kept`,
  };
  let shell: OutputMessage = { ...message, message: truncated };
  let room = maxBytes - Buffer.byteLength(JSON.stringify(shell));
  if (room < 0) {
    shell = { ...message, message: { ...truncated, attributes: {}, attributesOmitted: true } };
    room = maxBytes - Buffer.byteLength(JSON.stringify(shell));
    if (room < 0) return undefined;
  }
  const whole = Buffer.from(carried.body);
  // JSON escaping may grow the text (quotes, backslashes, control characters): shrink until it fits.
  for (let cut = Math.min(whole.length, room); ; ) {
    // Never inside a character: a cut before a UTF-8 continuation byte backs off to its start, so
    // the kept text is a prefix of the body (no replacement character the body never had).
    while (cut > 0 && cut < whole.length && ((whole[cut] ?? 0) & 0xc0) === 0x80) cut -= 1;
    const head = whole.subarray(0, cut).toString('utf8');
    const size = Buffer.byteLength(JSON.stringify(head)) - 2;
    if (size <= room || cut === 0) {
      return { ...shell, message: { ...(shell.message as CarriedMessage), body: head } };
    }
    cut = Math.max(0, Math.min(cut - 1, Math.floor((cut * room) / size)));
  }
}

function hash(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}
