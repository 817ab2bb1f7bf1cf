import type { Message, ReceiveMessageCommandInput, SQSClient } from '@aws-sdk/client-sqs';

/** A message one of a drain's batches held: its aggregate (`fanin-aggregate-id`) and when it was sent. */
export interface DrainedMessage {
  readonly messageId: string;
  readonly aggregateId: string | undefined;
  /** Its `SentTimestamp` (ms). */
  readonly sentAt: number | undefined;
}

/** What the rig learns of a drain's batches from the calls the drain makes with fanin's SQS client. */
export class DrainBatches {
  /** The drains in progress, by queue URL (one drain per queue at a time, as `QueueDrainer` runs them). */
  private readonly drains = new Map<string, { batches: DrainedMessage[][]; current: DrainedMessage[] }>();

  /** Observes `client`'s receives from and deletes on the queue of each drain in progress. */
  public instrument(client: SQSClient): void {
    client.middlewareStack.add(
      (next, context) => async (args) => {
        const input = args.input as { QueueUrl?: string };
        const drain = this.drains.get(String(input.QueueUrl ?? ''));
        if (!drain) return next(args);
        if (context.commandName === 'DeleteMessageBatchCommand' && drain.current.length > 0) {
          drain.batches.push(drain.current);
          drain.current = [];
        }
        if (context.commandName !== 'ReceiveMessageCommand') return next(args);
        const receive = args.input as ReceiveMessageCommandInput;
        const names = receive.MessageSystemAttributeNames ?? [];
        const asked =
          names.includes('SentTimestamp') || names.includes('All')
            ? args
            : { ...args, input: { ...receive, MessageSystemAttributeNames: [...names, 'SentTimestamp'] } };
        const result = await next(asked);
        const messages = ((result.output as { Messages?: Message[] }).Messages ?? []).map(drained);
        drain.current.push(...messages);
        return result;
      },
      { step: 'initialize', name: 'benchDrainBatches' },
    );
  }

  /** A drain of `queueUrl` starts: its receives and deletes are observed until {@link end}. */
  public begin(queueUrl: string): void {
    this.drains.set(queueUrl, { batches: [], current: [] });
  }

  /** The drain of `queueUrl` is over: @returns its batches, in order. */
  public end(queueUrl: string): DrainedMessage[][] {
    const drain = this.drains.get(queueUrl);
    this.drains.delete(queueUrl);
    if (!drain) return [];
    return drain.current.length > 0 ? [...drain.batches, drain.current] : drain.batches;
  }
}

function drained(message: Message): DrainedMessage {
  const sent = Number(message.Attributes?.SentTimestamp);
  return {
    messageId: message.MessageId ?? '',
    aggregateId: message.MessageAttributes?.['fanin-aggregate-id']?.StringValue,
    sentAt: Number.isFinite(sent) ? sent : undefined,
  };
}
