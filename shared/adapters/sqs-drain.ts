import { DeleteMessageBatchCommand, ReceiveMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { DrainQueue, ReceivedMessage } from '../ports.ts';
import { rawMessageOf } from './sqs-event.ts';

/** SQS's most messages per receive and entries per batch call. */
const SQS_BATCH = 10;

export interface SqsDrainQueueOptions {
  readonly sqs: SQSClient;
  readonly queueUrl: string;
  /**
   * Each receive long-polls this long (1–20 s), so a receive that finds nothing means the queue
   * holds nothing visible (a short poll asks only some of SQS's servers and may come back empty
   * while messages wait). A long poll still returns fewer messages than asked for while more wait
   * (it returns once some are there, and SQS samples its servers). @default 1
   */
  readonly waitTimeSeconds?: number;
}

/**
 * The SQS side of a scheduled drain (`DrainQueue`): one queue's receives, long-polled and asking
 * for what the use cases read of a message, and its deletes, ten at a time. What a drain does with
 * them is `shared/use-cases/reply-drain.ts`'s.
 */
export class SqsDrainQueue implements DrainQueue {
  readonly maxPerReceive = SQS_BATCH;
  private readonly sqs: SQSClient;
  private readonly queueUrl: string;
  private readonly wait: number;

  constructor(options: SqsDrainQueueOptions) {
    this.sqs = options.sqs;
    this.queueUrl = options.queueUrl;
    this.wait = options.waitTimeSeconds ?? 1;
  }

  async receive(max: number): Promise<readonly ReceivedMessage[]> {
    const { Messages = [] } = await this.sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: this.queueUrl,
        MaxNumberOfMessages: Math.max(1, Math.min(SQS_BATCH, max)),
        WaitTimeSeconds: this.wait,
        MessageAttributeNames: ['All'],
        MessageSystemAttributeNames: ['ApproximateReceiveCount', 'SentTimestamp', 'SenderId'],
      }),
    );
    return Messages.map((m) => ({ message: rawMessageOf(m), receipt: m.ReceiptHandle ?? '' }));
  }

  /** Deletes `messages` ten at a time; @returns how many SQS would not delete (they come back). */
  async delete(messages: readonly ReceivedMessage[]): Promise<number> {
    let refused = 0;
    for (let i = 0; i < messages.length; i += SQS_BATCH) {
      const chunk = messages.slice(i, i + SQS_BATCH);
      try {
        const { Failed = [] } = await this.sqs.send(
          new DeleteMessageBatchCommand({
            QueueUrl: this.queueUrl,
            Entries: chunk.map((m, j) => ({ Id: String(j), ReceiptHandle: m.receipt })),
          }),
        );
        refused += Failed.length;
      } catch {
        refused += chunk.length;
      }
    }
    return refused;
  }
}
