import {
  DeleteMessageBatchCommand,
  type Message,
  ReceiveMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { RawMessage } from '../ports.ts';
import { rawMessageOf } from './sqs-event.ts';

/**
 * A scheduled drain of one queue: what takes a reply partition's messages when it has no event
 * source (`replyDrainIntervalSeconds`). It does what Lambda's poller would, with the receives a
 * backlog allows: ten messages a receive instead of about one when messages trickle in.
 *
 * Each batch is received in full (up to `batchSize`), handled, then deleted, except the messages
 * the handler failed: those come back after the queue's visibility timeout, and after
 * `maxReceiveCount` receives the redrive policy moves them to the dead-letter queue, as with an
 * event source. A drain stopped between handling and deleting leaves its batch to come back too:
 * handling must be safe to repeat (the reply path records a reply once whatever its copies).
 */

/** SQS's most messages per receive and entries per batch call. */
const SQS_BATCH = 10;

/**
 * What a drain adds to its slowest batch so far when it asks whether another fits in the time
 * left: room for one call slower than any it has seen (a throttled write, a slow delete), so a
 * batch is not cut off by the invocation's end between its records and its deletes.
 */
export const DRAIN_MARGIN_MS = 1_000;

/** What one drain does with a batch: the ids of the messages it could not handle (kept on the queue). */
export type DrainBatchHandler = (messages: readonly RawMessage[]) => Promise<ReadonlySet<string>>;

export interface DrainOptions {
  readonly sqs: SQSClient;
  readonly queueUrl: string;
  /** Messages handled together at most (1 to 10,000). */
  readonly batchSize: number;
  readonly handle: DrainBatchHandler;
  /**
   * Checked before each batch and before each receive that would grow one: false stops the drain
   * (what it received is handled and deleted first). `needMs` is what the next batch may take:
   * the slowest batch so far (receives, handling and deletes) plus {@link DRAIN_MARGIN_MS}, 0
   * before the first.
   */
  readonly timeLeft: (needMs: number) => boolean;
  /**
   * Each receive long-polls this long (1–20 s), so a receive that finds nothing means the queue
   * holds nothing visible (a short poll asks only some of SQS's servers and may come back empty
   * while messages wait). A long poll still returns fewer messages than asked for while more wait
   * (it returns once some are there, and SQS samples its servers): a short receive alone does not
   * end the drain. @default 1
   */
  readonly waitTimeSeconds?: number;
}

/** What a drain did. */
export interface DrainResult {
  /** Batches handled. */
  readonly batches: number;
  /** Messages received (a message received twice counts twice). */
  readonly received: number;
  /** Receive calls, the last (empty) one included. */
  readonly receives: number;
  /** Messages the handler failed, left on the queue. */
  readonly failed: number;
  /** Messages handled whose delete failed: they come back, and are handled again. */
  readonly undeleted: number;
  /**
   * True when the drain caught up with the queue: a receive found nothing, or came back short with
   * only messages sent after the drain began (the backlog is taken; those are the stream). False
   * when it stopped for time.
   */
  readonly emptied: boolean;
}

/**
 * Drains `queueUrl` in batches until it has caught up with the queue, or `timeLeft()` says stop.
 * It has caught up when a receive finds nothing, or comes back short (fewer messages than it asked
 * for) holding only messages sent after the drain began (their `SentTimestamp`, SQS's clock, after
 * the drain's start by its own): the backlog it found is taken, and going on would follow the
 * replies as they arrive, one or two a receive, which is what an event source does and what a drain
 * is there to avoid. What arrives later waits for the next drain. A short receive that holds a
 * message of the backlog does not end the drain: a long poll returns fewer than asked for while
 * more wait (SQS samples its servers), and stopping there would leave the backlog to later drains,
 * a few receives each. A message without a `SentTimestamp` counts as the backlog's.
 */
export async function drainQueue(options: DrainOptions): Promise<DrainResult> {
  const { sqs, queueUrl, handle } = options;
  const batchSize = Math.max(1, Math.floor(options.batchSize));
  const wait = options.waitTimeSeconds ?? 1;
  let batches = 0;
  let received = 0;
  let receives = 0;
  let failed = 0;
  let undeleted = 0;
  let emptied = false;
  // What was sent by then is the backlog this drain takes; what was sent later is the stream.
  const began = Date.now();
  // The slowest batch so far, from its first receive to its last delete: the next may take as long.
  let slowest = 0;
  const need = () => (batches === 0 ? 0 : slowest + DRAIN_MARGIN_MS);
  while (!emptied && options.timeLeft(need())) {
    const started = Date.now();
    const batch: Message[] = [];
    // A batch stops growing once the time is spent too, so a large batch size cannot use up the
    // invocation in receives and leave the batch to come back, again and again, until it is
    // dead-lettered: what was received is handled with the half of the time that is left.
    while (batch.length < batchSize && (batch.length === 0 || options.timeLeft(need()))) {
      const asked = Math.min(SQS_BATCH, batchSize - batch.length);
      const { Messages = [] } = await sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: queueUrl,
          MaxNumberOfMessages: asked,
          WaitTimeSeconds: wait,
          MessageAttributeNames: ['All'],
          MessageSystemAttributeNames: ['ApproximateReceiveCount', 'SentTimestamp', 'SenderId'],
        }),
      );
      receives += 1;
      batch.push(...Messages);
      if (Messages.length === 0 || (Messages.length < asked && Messages.every((m) => sentAfter(m, began)))) {
        emptied = true;
        break;
      }
    }
    if (batch.length === 0) break;
    received += batch.length;
    batches += 1;
    let failedIds: ReadonlySet<string>;
    try {
      failedIds = await handle(batch.map(rawMessageOf));
    } catch {
      // As an event source does with a handler that throws: the whole batch comes back.
      failedIds = new Set(batch.map((m) => m.MessageId ?? ''));
    }
    const done = batch.filter((m) => !failedIds.has(m.MessageId ?? ''));
    failed += batch.length - done.length;
    undeleted += await deleteAll(sqs, queueUrl, done);
    slowest = Math.max(slowest, Date.now() - started);
  }
  return { batches, received, receives, failed, undeleted, emptied };
}

/** True when SQS accepted `message` after `time` (epoch ms); false without a `SentTimestamp`. */
function sentAfter(message: Message, time: number): boolean {
  const sentAt = Number(message.Attributes?.SentTimestamp ?? Number.NaN);
  return Number.isFinite(sentAt) && sentAt > time;
}

/** Deletes `messages` ten at a time; @returns how many SQS would not delete (they come back). */
async function deleteAll(sqs: SQSClient, queueUrl: string, messages: readonly Message[]): Promise<number> {
  let refused = 0;
  for (let i = 0; i < messages.length; i += SQS_BATCH) {
    const chunk = messages.slice(i, i + SQS_BATCH);
    try {
      const { Failed = [] } = await sqs.send(
        new DeleteMessageBatchCommand({
          QueueUrl: queueUrl,
          Entries: chunk.map((m, j) => ({ Id: String(j), ReceiptHandle: m.ReceiptHandle })),
        }),
      );
      refused += Failed.length;
    } catch {
      refused += chunk.length;
    }
  }
  return refused;
}
