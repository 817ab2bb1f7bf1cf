import {
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  type SendMessageBatchRequestEntry,
  SendMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type {
  MoveRequest,
  MoveResult,
  OutgoingMessage,
  PartitionQueues,
  QueueDepth,
  ReceivedMessage,
} from '../partitions/queues.ts';
import { moveMessages, queueDepth, SQS_BATCH } from './sqs-queues.ts';

/**
 * The queues of partitioned destinations on SQS: depths from the approximate counts, sends
 * (batched by SQS's 10), receives and moves (`moveMessages`, in sqs-queues.ts). A queue whose URL
 * ends in `.fifo` gets each message's group (`default` when it names none) and deduplication id.
 */
export class SqsPartitionQueues implements PartitionQueues {
  private readonly sqs: SQSClient;
  private readonly trustedSenders: readonly string[];

  /**
   * `trustedSenders`: the SQS senders of fanin's movers (the distributor's role), whose copies keep
   * the first send time they carry when moved again (sqs-queues.ts, `moveMessages`). @default none
   */
  public constructor(options: { readonly sqs: SQSClient; readonly trustedSenders?: readonly string[] }) {
    this.sqs = options.sqs;
    this.trustedSenders = options.trustedSenders ?? [];
  }

  public depth(queueUrl: string): Promise<QueueDepth> {
    return queueDepth(this.sqs, queueUrl);
  }

  public async send(queueUrl: string, message: OutgoingMessage): Promise<string> {
    const result = await this.sqs.send(
      new SendMessageCommand({ QueueUrl: queueUrl, ...fieldsOf(message, queueUrl.endsWith('.fifo')) }),
    );
    return result.MessageId ?? '';
  }

  public async sendBatch(queueUrl: string, messages: readonly OutgoingMessage[]): Promise<void> {
    const fifo = queueUrl.endsWith('.fifo');
    for (let i = 0; i < messages.length; i += SQS_BATCH) {
      const result = await this.sqs.send(
        new SendMessageBatchCommand({
          QueueUrl: queueUrl,
          Entries: messages.slice(i, i + SQS_BATCH).map((m, j) => ({ Id: String(j), ...fieldsOf(m, fifo) })),
        }),
      );
      if ((result.Failed ?? []).length > 0) {
        throw new Error(`sending to ${queueUrl} failed: ${result.Failed?.map((f) => f.Message).join('; ')}`);
      }
    }
  }

  public async receive(
    queueUrl: string,
    options: { readonly max: number; readonly visibilitySeconds: number },
  ): Promise<ReceivedMessage[]> {
    const { Messages = [] } = await this.sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: queueUrl,
        MaxNumberOfMessages: Math.min(SQS_BATCH, options.max),
        VisibilityTimeout: options.visibilitySeconds,
        MessageAttributeNames: ['All'],
        WaitTimeSeconds: 0,
      }),
    );
    return Messages;
  }

  public move(request: MoveRequest): Promise<MoveResult> {
    return moveMessages(this.sqs, { ...request, trustedSenders: this.trustedSenders });
  }
}

/** What a send says of a message: body, attributes, and on a FIFO queue its group and deduplication id. */
function fieldsOf(message: OutgoingMessage, fifo: boolean): Omit<SendMessageBatchRequestEntry, 'Id'> {
  return {
    MessageBody: message.body,
    ...(message.attributes ? { MessageAttributes: { ...message.attributes } } : {}),
    ...(fifo
      ? { MessageGroupId: message.groupId ?? 'default', MessageDeduplicationId: message.deduplicationId }
      : {}),
  };
}
