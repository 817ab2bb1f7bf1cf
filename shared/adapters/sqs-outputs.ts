import { createHash } from 'node:crypto';
import { type EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { OutputMessage, OutputPublisher } from '../ports.ts';
import type { OutputRole } from '../topology/topology.ts';

/** The EventBridge `source` of fanin's output events. */
export const EVENT_SOURCE = 'fanin';

/**
 * Publishes outputs to their FIFO queues and, when asked, to an EventBridge bus.
 *
 * The deduplication id is a hash of the output's deterministic id, so a retried emission inside
 * SQS's five-minute window is dropped by SQS itself, and any later one carries the same `id` for
 * the consumer to drop. The group is the aggregate, so outputs of one aggregate stay in order
 * while different aggregates flow in parallel.
 */
export class SqsOutputPublisher implements OutputPublisher {
  private readonly sqs: SQSClient;
  private readonly queueUrls: Readonly<Record<OutputRole, string>>;
  private readonly eventBridge?: EventBridgeClient;
  private readonly eventBusName?: string;

  public constructor(options: {
    readonly sqs: SQSClient;
    readonly queueUrls: Readonly<Record<OutputRole, string>>;
    readonly eventBridge?: EventBridgeClient;
    readonly eventBusName?: string;
  }) {
    this.sqs = options.sqs;
    this.queueUrls = options.queueUrls;
    if (options.eventBridge) this.eventBridge = options.eventBridge;
    if (options.eventBusName) this.eventBusName = options.eventBusName;
  }

  public async publish(
    role: OutputRole,
    message: OutputMessage,
    options: { eventBridge?: boolean } = {},
  ): Promise<void> {
    const body = JSON.stringify(message);
    await this.sqs.send(
      new SendMessageCommand({
        QueueUrl: this.queueUrls[role],
        MessageBody: body,
        MessageGroupId: hash(message.aggregateId ?? message.id).slice(0, 64),
        MessageDeduplicationId: hash(message.id),
        MessageAttributes: {
          'fanin-output': { DataType: 'String', StringValue: role },
          'fanin-type': { DataType: 'String', StringValue: message.type },
          ...(message.aggregateId
            ? { 'fanin-aggregate-id': { DataType: 'String', StringValue: message.aggregateId } }
            : {}),
        },
      }),
    );
    if (options.eventBridge && this.eventBridge && this.eventBusName) {
      const result = await this.eventBridge.send(
        new PutEventsCommand({
          Entries: [
            { EventBusName: this.eventBusName, Source: EVENT_SOURCE, DetailType: message.type, Detail: body },
          ],
        }),
      );
      if ((result.FailedEntryCount ?? 0) > 0) {
        const entry = result.Entries?.find((e) => e.ErrorCode);
        throw new Error(
          `EventBridge refused output ${message.id}: ${entry?.ErrorCode} ${entry?.ErrorMessage}`,
        );
      }
    }
  }
}

function hash(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}
