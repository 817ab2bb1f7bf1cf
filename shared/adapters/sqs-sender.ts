import { randomUUID } from 'node:crypto';
import {
  GetQueueUrlCommand,
  SendMessageBatchCommand,
  type SendMessageBatchCommandOutput,
  type SendMessageBatchRequestEntry,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { parseQueueUrl } from '../engine/recipients.ts';
import { FaninError, type FaninErrorOptions } from '../errors.ts';
import { traceSystemAttributes } from '../observability/trace-context.ts';
import type { RequestSender, SubRequest } from '../ports.ts';
import { S3ClaimCheck, SUB_REQUEST_PREFIX } from './s3-claim-check.ts';
import { SQS_BATCH } from './sqs-queues.ts';

/** A send that SQS refused, naming the queue and the reason (each delivery path fails clearly). */
export class SendFailedError extends FaninError {
  public readonly queue: string;
  public constructor(queue: string, reason: string, options?: FaninErrorOptions) {
    super(`sending to queue ${queue} failed: ${reason}`, options);
    this.name = 'SendFailedError';
    this.queue = queue;
  }
}

/**
 * SQS's answers that no retry changes: the queue does not exist (`QueueDoesNotExist`, its query
 * code `AWS.SimpleQueueService.NonExistentQueue`), or fanin's role may not use it (`AccessDenied`).
 */
const UNREACHABLE = new Set([
  'QueueDoesNotExist',
  'AWS.SimpleQueueService.NonExistentQueue',
  'AccessDenied',
  'AccessDeniedException',
]);

/** Whether an SDK error says the queue can never be sent to (see {@link UNREACHABLE}). */
function isUnreachable(error: unknown): boolean {
  const e = error as { name?: unknown; Code?: unknown; code?: unknown } | null;
  return (
    e !== null &&
    typeof e === 'object' &&
    [e.name, e.Code, e.code].some((v) => typeof v === 'string' && UNREACHABLE.has(v))
  );
}

/**
 * The error for a send SQS failed: unfixable (`retryable: false`, so the request goes to the error
 * output and is never retried) when the queue does not exist or may not be used, retryable otherwise.
 */
function sendFailure(target: string, error: unknown): SendFailedError {
  if (error instanceof SendFailedError) return error;
  const message = (error as Error).message;
  if (!isUnreachable(error)) return new SendFailedError(target, message, { cause: error });
  const name = (error as { name?: string }).name ?? 'QueueDoesNotExist';
  const what = /AccessDenied/.test(name)
    ? `fanin may not send to this queue (${name}: ${message})`
    : `the queue does not exist (${name}: ${message})`;
  return new SendFailedError(target, what, { cause: error, retryable: false });
}

/**
 * Sends sub-requests in batches of ten per target. A target is a queue name in this account and
 * region, or a queue URL `…/<account>/<name>`; either is resolved once per process with
 * `GetQueueUrl` (for a URL with `QueueOwnerAWSAccountId`) on the configured endpoint, so a URL's
 * host is never handed to the SDK: a target that came from a message cannot choose where the
 * payload and the request's credentials go, whatever the client's `useQueueUrlAsEndpoint`.
 * Large sub-requests are stored under {@link SUB_REQUEST_PREFIX}.
 *
 * A queue that does not exist, or that fanin may not send to, fails with an unfixable
 * {@link SendFailedError} (`retryable: false`) naming the target; a URL is cached only once
 * resolved, and dropped when a send to it says the queue is gone, so the next check asks again.
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

  /**
   * Resolves every target (GetQueueUrl, once per distinct queue while this process is warm).
   * Throws the first unreachable target's unfixable error (its queue does not exist or may not be
   * used) in the order given, else the first other failure (retryable).
   */
  public async check(targets: readonly string[]): Promise<void> {
    const distinct = [...new Set(targets)];
    const failures: unknown[] = [];
    // Ten at a time: a list of thousands of recipients does not open thousands of connections.
    for (let start = 0; start < distinct.length; start += SQS_BATCH) {
      const resolved = await Promise.allSettled(
        distinct.slice(start, start + SQS_BATCH).map((target) => this.resolve(target)),
      );
      for (const r of resolved) if (r.status === 'rejected') failures.push(r.reason);
      // One unreachable queue decides: a hostile list of thousands costs no more lookups than that.
      if (failures.some(isUnfixableFailure)) break;
    }
    // An unreachable queue first: no retry can send that request, whatever else failed.
    const failure = failures.find(isUnfixableFailure) ?? failures[0];
    if (failure !== undefined) throw failure;
  }

  public async send(requests: readonly SubRequest[]): Promise<void> {
    const byTarget = new Map<string, SubRequest[]>();
    for (const request of requests) {
      const list = byTarget.get(request.target) ?? [];
      list.push(request);
      byTarget.set(request.target, list);
    }
    // Every queue is resolved before anything is sent: a target that does not exist fails the
    // call with none of its sub-requests sent.
    await this.check([...byTarget.keys()]);
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
          const failure = sendFailure(target, error);
          // Deleted (or its policy changed) since it was resolved: the next check asks SQS again.
          if (!failure.retryable) this.urls.delete(keyOf(target));
          throw failure;
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
    const input = inputOf(target);
    if (typeof input === 'string') return Promise.reject(new SendFailedError(target, `the target ${input}`));
    const key = keyOf(target);
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
          throw sendFailure(target, error);
        });
      this.urls.set(key, url);
    }
    return url;
  }
}

/** The GetQueueUrl input for a target, or why it has none. */
function inputOf(target: string): { QueueName: string; QueueOwnerAWSAccountId?: string } | string {
  if (!/^[a-z][a-z0-9+.-]*:/i.test(target)) return { QueueName: target };
  const parts = parseQueueUrl(target);
  return typeof parts === 'string' ? parts : { QueueName: parts.name, QueueOwnerAWSAccountId: parts.account };
}

/** The cache key of a target's URL: its account (for a URL) and its queue name. */
function keyOf(target: string): string {
  const input = inputOf(target);
  return typeof input === 'string' ? target : `${input.QueueOwnerAWSAccountId ?? ''}/${input.QueueName}`;
}

/** Whether a lookup's failure is one no retry changes (an unfixable {@link SendFailedError}). */
function isUnfixableFailure(failure: unknown): boolean {
  return failure instanceof FaninError && !failure.retryable;
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
