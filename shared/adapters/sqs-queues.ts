import {
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  type Message,
  type MessageAttributeValue,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  type SendMessageBatchRequestEntry,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { WireAttribute } from '../engine/correlation.ts';
import type { MoveRequest, MoveResult, QueueDepth, UndeletedMessage } from '../partitions/queues.ts';

/** How many messages a queue holds: visible, in flight, and both (SQS's approximate counts). */
export async function queueDepth(sqs: SQSClient, queueUrl: string): Promise<QueueDepth> {
  const { Attributes = {} } = await sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl: queueUrl,
      AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
    }),
  );
  const visible = Number(Attributes.ApproximateNumberOfMessages ?? 0);
  const inFlight = Number(Attributes.ApproximateNumberOfMessagesNotVisible ?? 0);
  return { visible, inFlight, depth: visible + inFlight };
}

/**
 * The message attribute that carries a moved message's identity: the SQS message id it had when it
 * was first moved. A move re-sends a message, and SQS gives the copy a new message id; with this
 * attribute the copy still says which message it is, so a reply without a `fanin-reply-id` keeps
 * one reply id however often it is moved, and the duplicate a crashed move leaves is recognised.
 */
export const ORIGIN_ATTRIBUTE = WireAttribute.ORIGIN_MESSAGE_ID;

/**
 * The message attribute that carries when SQS first accepted a moved message (its first
 * `SentTimestamp`): a reply moved after its aggregate's deadline still arrived before it when it
 * reached fanin before it. The reply path takes it only from a copy a mover sent (replies.ts,
 * arrivalOf). Left out, like the origin id, when the message has no room for another attribute.
 */
export const SENT_AT_ATTRIBUTE = WireAttribute.ORIGIN_SENT_AT;

/** SQS's limit of message attributes on one message. */
const MAX_MESSAGE_ATTRIBUTES = 10;

/** SQS's limit of entries in one batch call and of messages in one receive. */
export const SQS_BATCH = 10;

/** Options of {@link moveMessages}: a {@link MoveRequest} and what only SQS needs. */
export interface MoveOptions extends MoveRequest {
  /** How often a delete SQS reports as failed is tried, in all, before it is reported. @default 3 */
  readonly deleteAttempts?: number;
  /** FIFO targets: the deduplication id is this prefix + the source message id. @default '' */
  readonly deduplicationPrefix?: string;
  /** FIFO targets: the group of a message that had none. @default 'default' */
  readonly defaultGroup?: string;
  /**
   * The SQS senders (`SenderId`) of fanin's movers: a message one of them sent keeps the first
   * send time it carries; any other's is stamped with its own `SentTimestamp`. @default none
   */
  readonly trustedSenders?: readonly string[];
}

/**
 * Moves messages between queues at least once: receive a batch (long poll), send it to the
 * target, delete what was sent from the source.
 *
 * Identity survives the move: each copy carries {@link ORIGIN_ATTRIBUTE} (kept from the source
 * when the message was moved before, else the source's message id), {@link SENT_AT_ATTRIBUTE}
 * (when SQS first accepted it), its body as is (a claim-check
 * pointer stays a pointer), its message attributes, and on a FIFO target its group and a
 * deduplication id of the source message id (a retried move of the same message is deduplicated
 * by SQS). A crash between the send and the delete leaves a duplicate with the same identity,
 * which the reply path recognises.
 *
 * Stops when `max` is reached, `emptyReceives` consecutive receives found nothing (`drained`),
 * a send is partly refused (`failure`), `stop()` says so or `signal` is aborted. Deletes SQS
 * reports as failed are retried, and those still failing are returned in `undeleted`.
 */
export async function moveMessages(sqs: SQSClient, options: MoveOptions): Promise<MoveResult> {
  const fifo = options.to.endsWith('.fifo');
  const waitSeconds = Math.min(20, Math.max(1, Math.floor(options.waitSeconds ?? 1)));
  const emptyReceives = Math.max(2, Math.floor(options.emptyReceives ?? 2));
  const deleteAttempts = Math.max(1, Math.floor(options.deleteAttempts ?? 3));
  const signal = options.signal;
  const call = { ...(signal ? { abortSignal: signal } : {}) };
  const undeleted: UndeletedMessage[] = [];
  let moved = 0;
  let withoutOrigin = 0;
  let empty = 0;
  const result = (extra: Partial<MoveResult> = {}): MoveResult => ({
    moved,
    drained: false,
    undeleted,
    withoutOrigin,
    aborted: signal?.aborted ?? false,
    ...extra,
  });
  try {
    while (moved < options.max && !options.stop?.() && !signal?.aborted) {
      const { Messages = [] } = await sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: options.from,
          MaxNumberOfMessages: Math.min(SQS_BATCH, options.max - moved),
          WaitTimeSeconds: waitSeconds,
          VisibilityTimeout: options.visibilitySeconds,
          MessageAttributeNames: ['All'],
          MessageSystemAttributeNames: ['MessageGroupId', 'SentTimestamp', 'SenderId'],
        }),
        call,
      );
      if (Messages.length === 0) {
        empty += 1;
        if (empty >= emptyReceives) return result({ drained: true });
        continue;
      }
      empty = 0;
      const copies = Messages.map((m, i) => {
        const copy = copyOf(m, i, fifo, options);
        if (!copy.origin) withoutOrigin += 1;
        return copy;
      });
      const sent = await sqs.send(
        new SendMessageBatchCommand({ QueueUrl: options.to, Entries: copies.map((c) => c.entry) }),
        call,
      );
      const ok = new Set((sent.Successful ?? []).map((s) => Number(s.Id)));
      const done = Messages.map((m, i) => ({ m, i })).filter(({ i }) => ok.has(i));
      moved += done.length;
      if (done.length > 0) {
        const failures = await deleteAll(
          sqs,
          options.from,
          done.map(({ m, i }) => ({ id: String(i), receiptHandle: m.ReceiptHandle ?? '' })),
          deleteAttempts,
          call,
        );
        for (const [id, failure] of failures) {
          const index = Number(id);
          undeleted.push({
            messageId: Messages[index]?.MessageId ?? '',
            originMessageId: copies[index]?.origin ?? Messages[index]?.MessageId ?? '',
            ...failure,
          });
        }
      }
      options.onBatch?.(moved);
      const failed = sent.Failed?.[0];
      if (failed) {
        return result({ failure: { code: failed.Code ?? 'Failed', message: failed.Message ?? '' } });
      }
    }
  } catch (error) {
    // Aborted: the call in flight was cancelled; what it did not finish reappears at the source.
    if (signal?.aborted) return result({ aborted: true });
    throw error;
  }
  return result();
}

/** The send entry that re-creates a received message at another queue, and the identity it carries. */
function copyOf(
  m: Message,
  index: number,
  fifo: boolean,
  options: MoveOptions,
): { entry: SendMessageBatchRequestEntry; origin: string | undefined } {
  const attributes = { ...(m.MessageAttributes ?? {}) } as Record<string, MessageAttributeValue>;
  // When SQS first accepted it: the time a mover's own copy carries (trustedSenders), else the
  // source's SentTimestamp — a time any other sender put in the attribute is replaced, never kept.
  const sentAt = Number(m.Attributes?.SentTimestamp ?? Number.NaN);
  const carried = Number(attributes[SENT_AT_ATTRIBUTE]?.StringValue || Number.NaN);
  const sender = m.Attributes?.SenderId;
  const byMover =
    sender !== undefined &&
    (options.trustedSenders ?? []).some((id) => sender === id || sender.startsWith(`${id}:`));
  const first = byMover && Number.isFinite(carried) ? Math.min(carried, sentAt) : sentAt;
  delete attributes[SENT_AT_ATTRIBUTE];
  const kept = attributes[ORIGIN_ATTRIBUTE]?.StringValue;
  let origin: string | undefined = kept || m.MessageId;
  if (!kept && origin) {
    if (Object.keys(attributes).length < MAX_MESSAGE_ATTRIBUTES) {
      attributes[ORIGIN_ATTRIBUTE] = { DataType: 'String', StringValue: origin };
    } else {
      origin = undefined;
    }
  }
  if (Number.isFinite(first) && Object.keys(attributes).length < MAX_MESSAGE_ATTRIBUTES) {
    attributes[SENT_AT_ATTRIBUTE] = { DataType: 'Number', StringValue: String(first) };
  }
  return {
    origin,
    entry: {
      Id: String(index),
      MessageBody: m.Body ?? '',
      ...(Object.keys(attributes).length > 0 ? { MessageAttributes: attributes } : {}),
      ...(fifo
        ? {
            MessageGroupId: m.Attributes?.MessageGroupId ?? options.defaultGroup ?? 'default',
            // Per hop, not per origin: a message that comes back to a queue it left within the
            // five-minute deduplication window must not be dropped as a duplicate of itself.
            MessageDeduplicationId: `${options.deduplicationPrefix ?? ''}${m.MessageId}`,
          }
        : {}),
    },
  };
}

/**
 * Deletes a batch, retrying the entries SQS reports as failed (`attempts` tries in all).
 * @returns the entries still failing, by id, with SQS's reason
 */
async function deleteAll(
  sqs: SQSClient,
  queueUrl: string,
  entries: readonly { id: string; receiptHandle: string }[],
  attempts: number,
  call: { abortSignal?: AbortSignal },
): Promise<Map<string, { code: string; message: string }>> {
  let pending = entries;
  const failures = new Map<string, { code: string; message: string }>();
  for (let attempt = 1; attempt <= attempts && pending.length > 0; attempt += 1) {
    const { Failed = [] } = await sqs.send(
      new DeleteMessageBatchCommand({
        QueueUrl: queueUrl,
        Entries: pending.map((e) => ({ Id: e.id, ReceiptHandle: e.receiptHandle })),
      }),
      call,
    );
    failures.clear();
    for (const f of Failed) {
      if (f.Id !== undefined) failures.set(f.Id, { code: f.Code ?? 'Failed', message: f.Message ?? '' });
    }
    pending = pending.filter((e) => failures.has(e.id));
  }
  return failures;
}
