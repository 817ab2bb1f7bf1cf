import {
  ChangeMessageVisibilityBatchCommand,
  DeleteMessageBatchCommand,
  type Message,
  ReceiveMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';

/** A Lambda-style SQS handler. */
export type SqsHandler = (event: SQSEvent) => Promise<SQSBatchResponse | undefined>;

/** What one poller does, as Lambda's SQS event source would. */
export interface PollerOptions {
  readonly sqs: SQSClient;
  readonly queueUrl: string;
  readonly handler: SqsHandler;
  /** Records per invocation (1–10). @default 10 */
  readonly batchSize?: number;
  /** Long-poll wait per receive, seconds. @default 1 */
  readonly waitTimeSeconds?: number;
  /**
   * Lambda's `MaximumBatchingWindowInSeconds`: once a first record is in, keep gathering until the
   * batch is full or this many seconds have passed, then invoke. @default 0 (invoke at once)
   */
  readonly maxBatchingWindowSeconds?: number;
  /**
   * Seconds before a failed record is visible again. Lambda leaves it to the queue's visibility
   * timeout; tests shorten it. @default undefined (the queue's own)
   */
  readonly failedVisibilitySeconds?: number;
  /** Concurrent invocations. @default 1 */
  readonly concurrency?: number;
  /** Region for the records' `awsRegion`. @default process.env.AWS_REGION */
  readonly region?: string;
}

/**
 * Polls one queue and invokes a handler with Lambda's SQS semantics: batches of records with the
 * same shape as Lambda's, gathered up to the batch size within the batching window, partial batch
 * failures (`batchItemFailures`), a handler that throws fails the whole batch, failed records are
 * redelivered after their visibility timeout, and the queue's redrive policy moves them to its DLQ
 * after maxReceiveCount.
 */
export class QueuePoller {
  private readonly options: PollerOptions;
  private running = false;
  private loops: Promise<void>[] = [];
  /** Invocations and records, for the dashboard and the tests. */
  public readonly stats = { invocations: 0, records: 0, failures: 0, errors: 0 };

  public constructor(options: PollerOptions) {
    this.options = options;
  }

  /** Starts `concurrency` polling loops. */
  public start(): void {
    if (this.running) return;
    this.running = true;
    this.loops = Array.from({ length: this.options.concurrency ?? 1 }, () => this.loop());
  }

  /** Stops polling and waits for the invocations in flight. */
  public async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.loops);
    this.loops = [];
  }

  private async loop(): Promise<void> {
    while (this.running) {
      try {
        await this.pollOnce(this.options.waitTimeSeconds ?? 1);
      } catch {
        this.stats.errors += 1;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    }
  }

  /**
   * Receives one batch, invokes the handler, deletes what succeeded.
   * @returns the number of records received.
   */
  public async pollOnce(waitTimeSeconds = 0): Promise<number> {
    const { sqs, queueUrl } = this.options;
    const messages = await this.gather(waitTimeSeconds);
    if (messages.length === 0) return 0;
    const records = messages.map((m) => this.toRecord(m));
    let failedIds: Set<string>;
    this.stats.invocations += 1;
    this.stats.records += records.length;
    try {
      const response = await this.options.handler({ Records: records });
      failedIds = new Set((response?.batchItemFailures ?? []).map((f) => f.itemIdentifier));
    } catch {
      failedIds = new Set(records.map((r) => r.messageId));
    }
    this.stats.failures += failedIds.size;
    const done = messages.filter((m) => !failedIds.has(m.MessageId ?? ''));
    // SQS takes at most ten entries per batch call; a gathered batch may hold more.
    for (const chunk of chunks(done, 10)) {
      await sqs.send(
        new DeleteMessageBatchCommand({
          QueueUrl: queueUrl,
          Entries: chunk.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle })),
        }),
      );
    }
    const failed = messages.filter((m) => failedIds.has(m.MessageId ?? ''));
    if (this.options.failedVisibilitySeconds !== undefined) {
      for (const chunk of chunks(failed, 10)) {
        await sqs.send(
          new ChangeMessageVisibilityBatchCommand({
            QueueUrl: queueUrl,
            Entries: chunk.map((m, i) => ({
              Id: String(i),
              ReceiptHandle: m.ReceiptHandle,
              VisibilityTimeout: this.options.failedVisibilitySeconds,
            })),
          }),
        );
      }
    }
    return messages.length;
  }

  /**
   * One batch: a first receive (long-polling up to `waitTimeSeconds`), then, within the batching
   * window, more receives until the batch is full. SQS returns at most 10 per receive, so batches
   * above 10 are gathered in several.
   */
  private async gather(waitTimeSeconds: number): Promise<Message[]> {
    const batchSize = this.options.batchSize ?? 10;
    const windowMs = (this.options.maxBatchingWindowSeconds ?? 0) * 1000;
    const messages = await this.receive(Math.min(10, batchSize), waitTimeSeconds);
    if (messages.length === 0 || windowMs <= 0) return messages;
    const deadline = Date.now() + windowMs;
    while (messages.length < batchSize) {
      const left = deadline - Date.now();
      if (left <= 0) break;
      // WaitTimeSeconds is whole seconds: long-poll while a second is left, then short polls.
      const wait = Math.min(20, Math.floor(left / 1000));
      const more = await this.receive(Math.min(10, batchSize - messages.length), wait);
      messages.push(...more);
      if (more.length === 0 && wait === 0) await sleep(Math.min(100, left));
    }
    return messages;
  }

  private async receive(max: number, waitTimeSeconds: number): Promise<Message[]> {
    const received = await this.options.sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: this.options.queueUrl,
        MaxNumberOfMessages: max,
        WaitTimeSeconds: waitTimeSeconds,
        MessageAttributeNames: ['All'],
        MessageSystemAttributeNames: ['All'],
      }),
    );
    return received.Messages ?? [];
  }

  private toRecord(message: Message): SQSRecord {
    const attributes = message.Attributes ?? {};
    const region = this.options.region ?? process.env.AWS_REGION ?? 'us-east-1';
    return {
      messageId: message.MessageId ?? '',
      receiptHandle: message.ReceiptHandle ?? '',
      body: message.Body ?? '',
      attributes: {
        ApproximateReceiveCount: attributes.ApproximateReceiveCount ?? '1',
        SentTimestamp: attributes.SentTimestamp ?? String(Date.now()),
        SenderId: attributes.SenderId ?? 'local',
        ApproximateFirstReceiveTimestamp: attributes.ApproximateFirstReceiveTimestamp ?? String(Date.now()),
        ...(attributes.MessageGroupId ? { MessageGroupId: attributes.MessageGroupId } : {}),
        ...(attributes.MessageDeduplicationId
          ? { MessageDeduplicationId: attributes.MessageDeduplicationId }
          : {}),
        ...(attributes.SequenceNumber ? { SequenceNumber: attributes.SequenceNumber } : {}),
      },
      messageAttributes: Object.fromEntries(
        Object.entries(message.MessageAttributes ?? {}).map(([name, value]) => [
          name,
          {
            dataType: value.DataType ?? 'String',
            ...(value.StringValue !== undefined ? { stringValue: value.StringValue } : {}),
            stringListValues: [],
            binaryListValues: [],
          },
        ]),
      ),
      md5OfBody: message.MD5OfBody ?? '',
      eventSource: 'aws:sqs',
      eventSourceARN: queueArnOf(this.options.queueUrl, region),
      awsRegion: region,
    };
  }
}

function chunks<T>(items: readonly T[], size: number): T[][] {
  const result: T[][] = [];
  for (let i = 0; i < items.length; i += size) result.push(items.slice(i, i + size));
  return result;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** The ARN a queue URL stands for (`https://host/<account>/<name>`), as Lambda puts in records. */
export function queueArnOf(queueUrl: string, region: string): string {
  const [account = '000000000000', name = ''] = new URL(queueUrl).pathname.split('/').filter(Boolean);
  return `arn:aws:sqs:${region}:${account}:${name}`;
}
