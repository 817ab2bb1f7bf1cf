import {
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  type MessageAttributeValue,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';

/** How many messages a queue holds: visible, in flight, and both (SQS's approximate counts). */
export async function queueDepth(
  sqs: SQSClient,
  queueUrl: string,
): Promise<{ visible: number; inFlight: number; depth: number }> {
  const { Attributes = {} } = await sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl: queueUrl,
      AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
    }),
  );
  const visible = Number(Attributes.ApproximateNumberOfMessages ?? 0);
  const inFlight = Number(Attributes.ApproximateNumberOfMessagesNotVisible ?? 0);
  return { visible, inFlight, depth: visible + inFlight };
}

/** Options of {@link moveMessages}. */
export interface MoveOptions {
  readonly from: string;
  readonly to: string;
  /** Most messages to move. */
  readonly max: number;
  /** How long a message being moved stays invisible at its source (it reappears if the move dies). */
  readonly visibilitySeconds: number;
  /** FIFO targets: the deduplication id is this prefix + the source message id. @default '' */
  readonly deduplicationPrefix?: string;
  /** FIFO targets: the group of a message that had none. @default 'default' */
  readonly defaultGroup?: string;
  /** Called after each batch with the running total. */
  readonly onBatch?: (moved: number) => void;
  /** Checked before each batch; true stops the move. */
  readonly stop?: () => boolean;
}

/**
 * Moves messages between queues at least once: receive a batch, send it to the target, delete
 * what was sent from the source. A crash between the send and the delete duplicates a message
 * (the reply path's deduplication makes that harmless). Stops when the source is empty, `max`
 * is reached, or a send is partly refused (reported as `failure`).
 */
export async function moveMessages(
  sqs: SQSClient,
  options: MoveOptions,
): Promise<{ moved: number; failure?: { code: string; message: string } }> {
  const fifo = options.to.endsWith('.fifo');
  let moved = 0;
  while (moved < options.max && !options.stop?.()) {
    const { Messages = [] } = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: options.from,
        MaxNumberOfMessages: Math.min(10, options.max - moved),
        WaitTimeSeconds: 0,
        VisibilityTimeout: options.visibilitySeconds,
        MessageAttributeNames: ['All'],
        MessageSystemAttributeNames: ['MessageGroupId'],
      }),
    );
    if (Messages.length === 0) break;
    const result = await sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: options.to,
        Entries: Messages.map((m, i) => ({
          Id: String(i),
          MessageBody: m.Body ?? '',
          ...(m.MessageAttributes
            ? { MessageAttributes: m.MessageAttributes as Record<string, MessageAttributeValue> }
            : {}),
          ...(fifo
            ? {
                MessageGroupId: m.Attributes?.MessageGroupId ?? options.defaultGroup ?? 'default',
                MessageDeduplicationId: `${options.deduplicationPrefix ?? ''}${m.MessageId}`,
              }
            : {}),
        })),
      }),
    );
    const sent = new Set((result.Successful ?? []).map((s) => Number(s.Id)));
    const done = Messages.filter((_, i) => sent.has(i));
    if (done.length > 0) {
      await sqs.send(
        new DeleteMessageBatchCommand({
          QueueUrl: options.from,
          Entries: done.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle })),
        }),
      );
    }
    moved += done.length;
    options.onBatch?.(moved);
    const failed = result.Failed?.[0];
    if (failed) return { moved, failure: { code: failed.Code ?? 'Failed', message: failed.Message ?? '' } };
  }
  return { moved };
}
