/**
 * An in-memory, synchronous, deterministic model of SQS for the simulation: every SQS command
 * fanin sends, with at-least-once delivery (a receive may return a message another receiver
 * holds), no order on standard queues, visibility timeouts, delays, retention, redrive to a DLQ
 * after maxReceiveCount, message attribute and size limits, and FIFO queues (groups delivered one
 * in flight at a time and in order, five-minute deduplication). Time comes from `clock`, chance
 * from `random`. See sim/models/index.ts for what it is faithful to.
 */
import { QueueDoesNotExist, ReceiptHandleIsInvalid } from '@aws-sdk/client-sqs';
import { sdkError } from './errors.ts';
import { createQueue, queueAttributes } from './sqs/admin.ts';
import { BATCH_COMMANDS, batch } from './sqs/batch.ts';
import {
  type AttributeValue,
  checkAttributes,
  checkBody,
  md5,
  md5OfAttributes,
  messageSize,
  sqsError,
  uuid,
} from './sqs/messages.ts';
import type { SqsModelCore } from './sqs/model.ts';
import type { Queue, StoredMessage } from './sqs/queue.ts';
import { receive } from './sqs/receive.ts';

/** Options of {@link SqsModel}. */
export interface SqsModelOptions {
  readonly clock: () => number;
  readonly random: () => number;
  /** @default '000000000000' */
  readonly accountId?: string;
  /** @default 'us-east-1' */
  readonly region?: string;
  /**
   * SQS's largest message (body and attributes) and largest batch in all: 1 MiB on AWS since 2025,
   * as fauxqs has it and docs/guarantees.md assumes. A queue's `MaximumMessageSize` may lower
   * the message limit. @default 1048576
   */
  readonly maxMessageBytes?: number;
  /** How likely a receive on a standard queue also returns one message another receiver holds. @default 0.02 */
  readonly duplicateProbability?: number;
  /** How likely a receive returns fewer messages than it could (SQS samples its servers). @default 0.1 */
  readonly shortReceiveProbability?: number;
  /** How likely a delete with a receipt handle older than the latest leaves the message. @default 0.5 */
  readonly staleDeleteIgnoredProbability?: number;
}

const WRITES = new Set([
  'CreateQueueCommand',
  'DeleteQueueCommand',
  'PurgeQueueCommand',
  'SendMessageCommand',
  'SendMessageBatchCommand',
  'ReceiveMessageCommand',
  'DeleteMessageCommand',
  'DeleteMessageBatchCommand',
  'ChangeMessageVisibilityCommand',
  'ChangeMessageVisibilityBatchCommand',
  'SetQueueAttributesCommand',
]);

/**
 * True when the SQS command changes state, so that a timeout after it may hide its effect. A
 * receive is one: the messages it took are in flight even if its answer is lost.
 */
export function isSqsWrite(commandName: string): boolean {
  return WRITES.has(commandName);
}

/** What {@link SqsModel.messages} tells of one message. */
export interface MessageView {
  readonly messageId: string;
  readonly body: string;
  readonly attributes: Readonly<Record<string, AttributeValue>>;
  readonly receiveCount: number;
  readonly state: 'visible' | 'in-flight' | 'delayed';
  readonly sentAt: number;
  readonly groupId?: string;
  readonly deadLetterSourceArn?: string;
}

type Request = Record<string, unknown>;

/** The SQS model. */
export class SqsModel implements SqsModelCore {
  private readonly queues = new Map<string, Queue>();
  public readonly accountId: string;
  public readonly region: string;
  public readonly maxMessageBytes: number;
  public readonly clock: () => number;
  public readonly random: () => number;
  public readonly duplicateProbability: number;
  public readonly shortReceiveProbability: number;
  public readonly staleDeleteIgnoredProbability: number;
  private handles = 0;
  private sequence = 0n;

  public constructor(options: SqsModelOptions) {
    this.clock = options.clock;
    this.random = options.random;
    this.accountId = options.accountId ?? '000000000000';
    this.region = options.region ?? 'us-east-1';
    this.maxMessageBytes = options.maxMessageBytes ?? 1_048_576;
    this.duplicateProbability = options.duplicateProbability ?? 0.02;
    this.shortReceiveProbability = options.shortReceiveProbability ?? 0.1;
    this.staleDeleteIgnoredProbability = options.staleDeleteIgnoredProbability ?? 0.5;
  }

  /** Runs one command with its SDK input; returns its SDK output or throws the SDK's error. */
  // biome-ignore lint/suspicious/noExplicitAny: commands of every shape pass through here
  public handle(commandName: string, input: any): any {
    const request: Request = input ?? {};
    const name = commandName.replace(/Command$/, '');
    if (BATCH_COMMANDS.has(name)) return batch(this, name, request);
    switch (name) {
      case 'CreateQueue':
        return createQueue(this, this.queues, request);
      case 'GetQueueUrl': {
        const account = (request.QueueOwnerAWSAccountId as string | undefined) ?? this.accountId;
        const queue = this.queues.get(`${account}/${String(request.QueueName)}`);
        if (!queue) throw this.missing();
        return { QueueUrl: queue.url };
      }
      case 'GetQueueAttributes':
        return {
          Attributes: queueAttributes(
            this,
            this.queue(request.QueueUrl),
            request.AttributeNames as string[] | undefined,
          ),
        };
      case 'ListQueues':
        return this.listQueues(request);
      case 'DeleteQueue':
        this.queues.delete(this.keyOf(this.queue(request.QueueUrl).url));
        return {};
      case 'PurgeQueue': {
        const queue = this.queue(request.QueueUrl);
        const now = this.clock();
        if (queue.lastPurgeAt !== undefined && now - queue.lastPurgeAt < 60_000) {
          throw sqsError(
            'PurgeQueueInProgress',
            `Only one PurgeQueue operation on ${queue.name} is allowed every 60 seconds.`,
          );
        }
        queue.lastPurgeAt = now;
        queue.messages.length = 0;
        return {};
      }
      case 'SendMessage':
        return this.send(this.queue(request.QueueUrl), request);
      case 'ReceiveMessage':
        return receive(this, this.queue(request.QueueUrl), request);
      case 'DeleteMessage':
        this.deleteMessage(this.queue(request.QueueUrl), String(request.ReceiptHandle ?? ''));
        return {};
      case 'ChangeMessageVisibility':
        this.changeVisibility(
          this.queue(request.QueueUrl),
          String(request.ReceiptHandle ?? ''),
          request.VisibilityTimeout,
        );
        return {};
      default:
        throw sqsError('UnsupportedOperation', `the SQS model does not implement ${name}`);
    }
  }

  /** Every queue URL. */
  public queueUrls(): string[] {
    return [...this.queues.values()].map((q) => q.url);
  }

  /** Every message a queue holds, visible, in flight or delayed (copies). */
  public messages(queueUrl: string): MessageView[] {
    const queue = this.queue(queueUrl);
    const now = this.clock();
    queue.expire(now);
    return queue.messages.map((m) => ({
      messageId: m.messageId,
      body: m.body,
      attributes: structuredClone(m.attributes),
      receiveCount: m.receiveCount,
      state: m.visibleAt <= now ? 'visible' : m.received ? 'in-flight' : 'delayed',
      sentAt: m.sentAt,
      ...(m.groupId !== undefined ? { groupId: m.groupId } : {}),
      ...(m.deadLetterSourceArn ? { deadLetterSourceArn: m.deadLetterSourceArn } : {}),
    }));
  }

  /** The URL SQS gives a queue of this account and region. */
  public urlOf(name: string): string {
    return `https://sqs.${this.region}.amazonaws.com/${this.accountId}/${name}`;
  }

  private keyOf(url: string): string {
    const parts = url.split('/');
    return `${parts[parts.length - 2] ?? ''}/${parts[parts.length - 1] ?? ''}`;
  }

  private missing(): Error {
    return sdkError(QueueDoesNotExist, 'The specified queue does not exist.', {
      Code: 'AWS.SimpleQueueService.NonExistentQueue',
    });
  }

  /** The queue a URL names, by its account and name as SQS resolves it. */
  public queue(url: unknown): Queue {
    if (typeof url !== 'string' || url.length === 0) {
      throw sqsError('MissingParameter', 'The request must contain the parameter QueueUrl.');
    }
    const queue = this.queues.get(this.keyOf(url));
    if (!queue) throw this.missing();
    return queue;
  }

  /** The queue an ARN names (a redrive target), if it exists. */
  public queueByArn(arn: string): Queue | undefined {
    return [...this.queues.values()].find((q) => q.arn === arn);
  }

  /** A new receipt handle, never issued before. */
  public nextHandle(message: StoredMessage): string {
    this.handles += 1;
    return Buffer.from(`${message.messageId}:${this.handles}:${Math.floor(this.random() * 1e9)}`).toString(
      'base64',
    );
  }

  private listQueues(request: Request): Request {
    const prefix = String(request.QueueNamePrefix ?? '');
    const urls = [...this.queues.values()]
      .filter((q) => q.name.startsWith(prefix))
      .map((q) => q.url)
      .sort();
    const max = request.MaxResults === undefined ? 1000 : Number(request.MaxResults);
    const start = request.NextToken ? Number(Buffer.from(String(request.NextToken), 'base64').toString()) : 0;
    const page = urls.slice(start, start + max);
    const next =
      start + max < urls.length && request.MaxResults !== undefined
        ? Buffer.from(String(start + max)).toString('base64')
        : undefined;
    return { ...(page.length > 0 ? { QueueUrls: page } : {}), ...(next ? { NextToken: next } : {}) };
  }

  /**
   * Accepts one message (SendMessage, or one entry of SendMessageBatch): validated as SQS does,
   * delayed as asked, deduplicated on FIFO queues. Throws the SQS error for a refused message.
   */
  public send(queue: Queue, entry: Request): Request {
    const body = checkBody(entry.MessageBody);
    const attributes = (entry.MessageAttributes ?? {}) as Record<string, AttributeValue>;
    checkAttributes(attributes);
    const size = messageSize(body, attributes);
    if (size > queue.settings.maximumMessageSize) {
      throw sqsError(
        'InvalidParameterValue',
        `One or more parameters are invalid. Reason: Message must be shorter than ${queue.settings.maximumMessageSize} bytes.`,
      );
    }
    const delay = entry.DelaySeconds === undefined ? queue.settings.delaySeconds : Number(entry.DelaySeconds);
    if (!Number.isInteger(delay) || delay < 0 || delay > 900) {
      throw sqsError(
        'InvalidParameterValue',
        `Value ${String(entry.DelaySeconds)} for parameter DelaySeconds is invalid. Reason: must be between 0 and 900, if provided.`,
      );
    }
    const now = this.clock();
    const systemAttributes = (entry.MessageSystemAttributes ?? {}) as Record<string, AttributeValue>;
    const md5s = {
      MD5OfMessageBody: md5(body),
      ...(Object.keys(attributes).length > 0 ? { MD5OfMessageAttributes: md5OfAttributes(attributes) } : {}),
      ...(Object.keys(systemAttributes).length > 0
        ? { MD5OfMessageSystemAttributes: md5OfAttributes(systemAttributes) }
        : {}),
    };
    let fifo: { groupId: string; deduplicationId: string; sequenceNumber: string } | undefined;
    if (queue.fifo) {
      if (entry.DelaySeconds !== undefined) {
        throw sqsError(
          'InvalidParameterValue',
          `Value ${String(entry.DelaySeconds)} for parameter DelaySeconds is invalid. Reason: The request include parameter that is not valid for this queue type.`,
        );
      }
      const groupId = entry.MessageGroupId as string | undefined;
      if (!groupId)
        throw sqsError('MissingParameter', 'The request must contain the parameter MessageGroupId.');
      const deduplicationId =
        (entry.MessageDeduplicationId as string | undefined) ??
        (queue.settings.contentBasedDeduplication ? md5(body) + body.length.toString(16) : undefined);
      if (!deduplicationId) {
        throw sqsError(
          'InvalidParameterValue',
          'The queue should either have ContentBasedDeduplication enabled or MessageDeduplicationId provided explicitly.',
        );
      }
      const scope = queue.given.DeduplicationScope === 'messageGroup' ? groupId : '';
      const key = `${scope}\u0000${deduplicationId}`;
      const seen = queue.deduplication.get(key);
      if (seen && now - seen.at < 5 * 60_000) {
        return { MessageId: seen.messageId, SequenceNumber: seen.sequenceNumber, ...md5s };
      }
      this.sequence += 1n;
      fifo = { groupId, deduplicationId, sequenceNumber: (10n ** 19n + this.sequence).toString() };
    } else if (entry.MessageGroupId !== undefined && typeof entry.MessageGroupId !== 'string') {
      throw sqsError('InvalidParameterValue', 'MessageGroupId must be a string.');
    }
    const message: StoredMessage = {
      messageId: uuid(this.random),
      body,
      md5OfBody: md5s.MD5OfMessageBody,
      attributes: structuredClone(attributes),
      systemAttributes: structuredClone(systemAttributes),
      sentAt: now,
      visibleAt: now + delay * 1000,
      receiveCount: 0,
      handles: new Set(),
      received: false,
      ...(fifo
        ? {
            groupId: fifo.groupId,
            deduplicationId: fifo.deduplicationId,
            sequenceNumber: fifo.sequenceNumber,
          }
        : {}),
      ...(!queue.fifo && typeof entry.MessageGroupId === 'string' ? { groupId: entry.MessageGroupId } : {}),
    };
    queue.messages.push(message);
    if (fifo) {
      const scope = queue.given.DeduplicationScope === 'messageGroup' ? fifo.groupId : '';
      queue.deduplication.set(`${scope}\u0000${fifo.deduplicationId}`, {
        at: now,
        messageId: message.messageId,
        sequenceNumber: fifo.sequenceNumber,
      });
    }
    return {
      MessageId: message.messageId,
      ...(fifo ? { SequenceNumber: fifo.sequenceNumber } : {}),
      ...md5s,
    };
  }

  private byHandle(queue: Queue, handle: string): StoredMessage | undefined {
    return queue.messages.find((m) => m.handles.has(handle));
  }

  private checkHandle(handle: string): void {
    if (handle.length === 0)
      throw sqsError('MissingParameter', 'The request must contain the parameter ReceiptHandle.');
    let issued = false;
    try {
      issued = /^[^:]+:\d+:\d+$/.test(Buffer.from(handle, 'base64').toString());
    } catch {
      issued = false;
    }
    if (!issued)
      throw sdkError(
        ReceiptHandleIsInvalid,
        `The input receipt handle "${handle}" is not a valid receipt handle.`,
      );
  }

  /**
   * Deletes the message a receipt handle names. A handle older than the message's latest is
   * accepted, but the message may stay (SQS: "the request will still succeed, but the message
   * might not be deleted"); a handle of a message already gone is accepted.
   */
  public deleteMessage(queue: Queue, handle: string): void {
    this.checkHandle(handle);
    const message = this.byHandle(queue, handle);
    if (!message) return;
    if (message.latestHandle !== handle && (queue.fifo || this.random() < this.staleDeleteIgnoredProbability))
      return;
    queue.remove(message);
  }

  /** Changes the visibility of the message a receipt handle names (its latest handle only). */
  public changeVisibility(queue: Queue, handle: string, timeout: unknown): void {
    this.checkHandle(handle);
    const seconds = Number(timeout);
    if (!Number.isInteger(seconds) || seconds < 0 || seconds > 43_200) {
      throw sqsError(
        'InvalidParameterValue',
        `Value ${String(timeout)} for parameter VisibilityTimeout is invalid. Reason: Must be between 0 and 43200, if provided.`,
      );
    }
    const message = this.byHandle(queue, handle);
    const now = this.clock();
    if (!message?.received) {
      throw sqsError(
        'MessageNotInflight',
        `Value ${handle} for parameter ReceiptHandle is invalid. Reason: Message does not exist or is not available for visibility timeout change.`,
      );
    }
    if (message.latestHandle !== handle) {
      throw sqsError(
        'InvalidParameterValue',
        `Value ${handle} for parameter ReceiptHandle is invalid. Reason: The receipt handle has expired.`,
      );
    }
    message.visibleAt = now + seconds * 1000;
  }
}

export type { MessageView as SqsMessageView, Queue };
