import { randomUUID } from 'node:crypto';
import {
  GetQueueUrlCommand,
  SendMessageBatchCommand,
  type SendMessageBatchCommandOutput,
  type SendMessageBatchRequestEntry,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { FaninError } from '../errors.ts';
import { traceSystemAttributes } from '../observability/trace-context.ts';
import type { RequestSender, SubRequest } from '../ports.ts';
import { parseQueueUrl } from '../use-cases/recipients.ts';
import { S3ClaimCheck, SUB_REQUEST_PREFIX } from './s3-claim-check.ts';
import { SQS_BATCH } from './sqs-queues.ts';

/** A send that SQS refused, naming the queue and the reason (seed 003: each path fails clearly). */
export class SendFailedError extends FaninError {
  public readonly queue: string;
  public constructor(queue: string, reason: string, options?: ErrorOptions) {
    super(`sending to queue ${queue} failed: ${reason}`, options);
    this.name = 'SendFailedError';
    this.queue = queue;
  }
}

/**
 * Sends sub-requests in batches of ten per target. A target is a queue name in this account and
 * region, or a queue URL `…/<account>/<name>`; either is resolved once per process with
 * `GetQueueUrl` (for a URL with `QueueOwnerAWSAccountId`) on the configured endpoint, so a URL's
 * host is never handed to the SDK: a target that came from a message cannot choose where the
 * payload and the request's credentials go, whatever the client's `useQueueUrlAsEndpoint`.
 * Large sub-requests are stored under {@link SUB_REQUEST_PREFIX}.
 */
export class SqsRequestSender implements RequestSender {
  /** SQS refuses a batch whose entries add up to more than 256 KiB. */
  private static readonly MAX_BATCH_BYTES = 262_144;
  private readonly sqs: SQSClient;
  private readonly claimCheck?: S3ClaimCheck;
  private readonly urls = new Map<string, Promise<string>>();

  public constructor(options: { readonly sqs: SQSClient; readonly claimCheck?: S3ClaimCheck }) {
    this.sqs = options.sqs;
    if (options.claimCheck) this.claimCheck = options.claimCheck;
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
      const entries: SendMessageBatchRequestEntry[] = [];
      for (const request of list) {
        const attributes = Object.fromEntries(
          Object.entries(request.attributes).map(([name, value]) => [
            name,
            { DataType: 'String', StringValue: value },
          ]),
        );
        // A large sub-request takes the claim-check path; without a bucket SQS refuses it and says why.
        const message = this.claimCheck
          ? await this.claimCheck.encode(request.body, attributes, `${SUB_REQUEST_PREFIX}${randomUUID()}`)
          : { body: request.body, attributes };
        entries.push({
          Id: String(entries.length),
          MessageBody: message.body,
          MessageAttributes: message.attributes,
          ...traceSystemAttributes(),
          ...(fifo
            ? { MessageGroupId: request.groupId, MessageDeduplicationId: request.deduplicationId }
            : {}),
        });
      }
      for (const batch of batches(entries, SqsRequestSender.MAX_BATCH_BYTES)) {
        let result: SendMessageBatchCommandOutput;
        try {
          result = await this.sqs.send(new SendMessageBatchCommand({ QueueUrl: url, Entries: batch }));
        } catch (error) {
          throw new SendFailedError(target, (error as Error).message, { cause: error });
        }
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

  /** The queue URL the configured endpoint gives for a target (never the target's own host). */
  private resolve(target: string): Promise<string> {
    let input: { QueueName: string; QueueOwnerAWSAccountId?: string };
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) {
      const parts = parseQueueUrl(target);
      if (typeof parts === 'string')
        return Promise.reject(new SendFailedError(target, `the target ${parts}`));
      input = { QueueName: parts.name, QueueOwnerAWSAccountId: parts.account };
    } else {
      input = { QueueName: target };
    }
    const key = `${input.QueueOwnerAWSAccountId ?? ''}/${input.QueueName}`;
    let url = this.urls.get(key);
    if (!url) {
      url = this.sqs
        .send(new GetQueueUrlCommand(input))
        .then((r) => {
          if (!r.QueueUrl) throw new SendFailedError(target, 'queue not found');
          return r.QueueUrl;
        })
        .catch((error: unknown) => {
          this.urls.delete(key);
          throw error instanceof SendFailedError
            ? error
            : new SendFailedError(target, (error as Error).message, { cause: error });
        });
      this.urls.set(key, url);
    }
    return url;
  }
}

/** Splits entries into SendMessageBatch calls of at most ten entries and `maxBytes` in all. */
function batches(
  entries: SendMessageBatchRequestEntry[],
  maxBytes: number,
): SendMessageBatchRequestEntry[][] {
  const result: SendMessageBatchRequestEntry[][] = [];
  let current: SendMessageBatchRequestEntry[] = [];
  let bytes = 0;
  for (const entry of entries) {
    const size = S3ClaimCheck.messageSize(entry.MessageBody ?? '', entry.MessageAttributes);
    if (current.length === SQS_BATCH || (current.length > 0 && bytes + size > maxBytes)) {
      result.push(current);
      current = [];
      bytes = 0;
    }
    current.push({ ...entry, Id: String(current.length) });
    bytes += size;
  }
  if (current.length > 0) result.push(current);
  return result;
}
