import type { Queue, StoredMessage } from './queue.ts';

type Request = Record<string, unknown>;

/**
 * What the SQS model's operations (admin.ts, batch.ts, receive.ts) use of the model: its
 * settings, clock and randomness, and the queue operations they share. `SqsModel` (sqs.ts)
 * implements it; the operations name this, not the class, so they do not import the module that
 * dispatches to them.
 */
export interface SqsModelCore {
  readonly accountId: string;
  readonly region: string;
  readonly maxMessageBytes: number;
  readonly clock: () => number;
  readonly random: () => number;
  readonly duplicateProbability: number;
  readonly shortReceiveProbability: number;
  /** The URL SQS gives a queue of this account and region. */
  urlOf(name: string): string;
  queue(url: unknown): Queue;
  queueByArn(arn: string): Queue | undefined;
  nextHandle(message: StoredMessage): string;
  send(queue: Queue, entry: Request): Request;
  deleteMessage(queue: Queue, handle: string): void;
  changeVisibility(queue: Queue, handle: string, timeout: unknown): void;
}
