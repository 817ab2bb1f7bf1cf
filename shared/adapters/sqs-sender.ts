import { GetQueueUrlCommand, SendMessageBatchCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { RequestSender, SubRequest } from '../ports.ts';

/** A send that SQS refused, naming the queue and the reason (seed 003: each path fails clearly). */
export class SendFailedError extends Error {
  public readonly queue: string;
  public constructor(queue: string, reason: string, options?: ErrorOptions) {
    super(`sending to queue ${queue} failed: ${reason}`, options);
    this.name = 'SendFailedError';
    this.queue = queue;
  }
}

/**
 * Sends sub-requests in batches of ten per target. A target is a queue URL or a queue name in
 * this account and region (resolved once per process with GetQueueUrl).
 */
export class SqsRequestSender implements RequestSender {
  private readonly sqs: SQSClient;
  private readonly urls = new Map<string, Promise<string>>();

  public constructor(options: { readonly sqs: SQSClient }) {
    this.sqs = options.sqs;
  }

  public async send(requests: readonly SubRequest[]): Promise<void> {
    const byTarget = new Map<string, SubRequest[]>();
    for (const request of requests) {
      const list = byTarget.get(request.target) ?? [];
      list.push(request);
      byTarget.set(request.target, list);
    }
    for (const [target, list] of byTarget) {
      const url = await this.resolve(target);
      const fifo = url.endsWith('.fifo');
      for (let i = 0; i < list.length; i += 10) {
        const batch = list.slice(i, i + 10);
        const result = await this.sqs.send(
          new SendMessageBatchCommand({
            QueueUrl: url,
            Entries: batch.map((request, index) => ({
              Id: String(index),
              MessageBody: request.body,
              MessageAttributes: Object.fromEntries(
                Object.entries(request.attributes).map(([name, value]) => [
                  name,
                  { DataType: 'String', StringValue: value },
                ]),
              ),
              ...(fifo
                ? { MessageGroupId: request.groupId, MessageDeduplicationId: request.deduplicationId }
                : {}),
            })),
          }),
        );
        const failed = result.Failed ?? [];
        if (failed.length > 0) {
          const first = failed[0];
          throw new SendFailedError(
            target,
            `${failed.length} of ${batch.length} refused (${first?.Code}: ${first?.Message})`,
          );
        }
      }
    }
  }

  private resolve(target: string): Promise<string> {
    if (/^https?:\/\//.test(target)) return Promise.resolve(target);
    let url = this.urls.get(target);
    if (!url) {
      url = this.sqs
        .send(new GetQueueUrlCommand({ QueueName: target }))
        .then((r) => {
          if (!r.QueueUrl) throw new SendFailedError(target, 'queue not found');
          return r.QueueUrl;
        })
        .catch((error: unknown) => {
          this.urls.delete(target);
          throw error instanceof SendFailedError
            ? error
            : new SendFailedError(target, (error as Error).message, { cause: error });
        });
      this.urls.set(target, url);
    }
    return url;
  }
}
