import type { DrainQueue, ReceivedMessage } from '../ports.ts';
import type { FaninContext } from './context.ts';
import { handleReplies } from './replies.ts';

/**
 * A scheduled drain of one reply partition: what takes its messages when it has no event source
 * (`replyDrainIntervalSeconds`). It does what Lambda's poller would, with the receives a backlog
 * allows: ten messages a receive instead of about one when messages trickle in. The queue's
 * receives and deletes are the `DrainQueue` port's (`shared/adapters/sqs-drain.ts`); the loop and
 * every decision are here.
 *
 * Each batch is received in full (up to `batchSize`), handled by the reply use case, then deleted,
 * except the messages it failed: those come back after the queue's visibility timeout, and after
 * `maxReceiveCount` receives the redrive policy moves them to the dead-letter queue, as with an
 * event source. A drain stopped between handling and deleting leaves its batch to come back too:
 * handling must be safe to repeat (the reply path records a reply once whatever its copies).
 */

/**
 * What a drain adds to its slowest batch so far when it asks whether another fits in the time
 * left: room for one call slower than any it has seen (a throttled write, a slow delete), so a
 * batch is not cut off by the invocation's end between its records and its deletes.
 */
export const DRAIN_MARGIN_MS = 1_000;

export interface ReplyDrainOptions {
  /** Messages handled together at most (1 to 10,000). */
  readonly batchSize: number;
  /**
   * The invocation's time left (ms). Half of what it is when the drain starts is kept for the
   * last batch: no batch starts, and no batch grows by another receive, once the time left is
   * down to that half, or is no more than the next batch may take (the slowest batch so far,
   * receives, handling and deletes, plus {@link DRAIN_MARGIN_MS}; 0 before the first).
   */
  readonly remainingMs: () => number;
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
 * Drains `queue` in batches into the reply use case until it has caught up with the queue, or the
 * time is spent. It has caught up when a receive finds nothing, or comes back short (fewer messages
 * than it asked for) holding only messages sent after the drain began (their `SentTimestamp`, SQS's
 * clock, after the drain's start by its own): the backlog it found is taken, and going on would
 * follow the replies as they arrive, one or two a receive, which is what an event source does and
 * what a drain is there to avoid. What arrives later waits for the next drain. A short receive that
 * holds a message of the backlog does not end the drain: a long poll returns fewer than asked for
 * while more wait (SQS samples its servers), and stopping there would leave the backlog to later
 * drains, a few receives each. A message without a `SentTimestamp` counts as the backlog's.
 */
export async function drainReplies(
  ctx: FaninContext,
  queue: DrainQueue,
  options: ReplyDrainOptions,
): Promise<DrainResult> {
  const batchSize = Math.max(1, Math.floor(options.batchSize));
  const half = options.remainingMs() / 2;
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
  const timeLeft = () => {
    const left = options.remainingMs();
    return left > half && left > (batches === 0 ? 0 : slowest + DRAIN_MARGIN_MS);
  };
  while (!emptied && timeLeft()) {
    const started = Date.now();
    const batch: ReceivedMessage[] = [];
    // A batch stops growing once the time is spent too, so a large batch size cannot use up the
    // invocation in receives and leave the batch to come back, again and again, until it is
    // dead-lettered: what was received is handled with the half of the time that is left.
    while (batch.length < batchSize && (batch.length === 0 || timeLeft())) {
      const asked = Math.min(queue.maxPerReceive, batchSize - batch.length);
      const messages = await queue.receive(asked);
      receives += 1;
      batch.push(...messages);
      if (messages.length === 0 || (messages.length < asked && messages.every((m) => sentAfter(m, began)))) {
        emptied = true;
        break;
      }
    }
    if (batch.length === 0) break;
    received += batch.length;
    batches += 1;
    let failedIds: ReadonlySet<string>;
    try {
      failedIds = await handleReplies(
        ctx,
        batch.map((m) => m.message),
      );
    } catch {
      // As an event source does with a handler that throws: the whole batch comes back.
      failedIds = new Set(batch.map((m) => m.message.messageId));
    }
    const done = batch.filter((m) => !failedIds.has(m.message.messageId));
    failed += batch.length - done.length;
    undeleted += await queue.delete(done);
    slowest = Math.max(slowest, Date.now() - started);
  }
  return { batches, received, receives, failed, undeleted, emptied };
}

/** True when SQS accepted `received` after `time` (epoch ms); false without a `SentTimestamp`. */
function sentAfter(received: ReceivedMessage, time: number): boolean {
  const { sentAt } = received.message;
  return sentAt !== undefined && sentAt > time;
}
