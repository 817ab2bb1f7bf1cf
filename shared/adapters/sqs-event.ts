import type { Message } from '@aws-sdk/client-sqs';
import type { SQSRecord } from 'aws-lambda';
import type { RawMessage } from '../ports.ts';

/**
 * A Lambda SQS record as the use cases see it: body, string attributes, id, receive count and
 * when SQS accepted it and from whom (`SentTimestamp`, `SenderId`).
 * Binary attributes are not part of fanin's wire contract and are left out.
 */
export function toRawMessage(record: SQSRecord): RawMessage {
  const attributes: Record<string, string> = {};
  for (const [name, value] of Object.entries(record.messageAttributes ?? {})) {
    if (value.stringValue !== undefined) attributes[name] = value.stringValue;
  }
  return {
    messageId: record.messageId,
    body: record.body,
    attributes,
    receiveCount: Number(record.attributes?.ApproximateReceiveCount ?? 1),
    ...sentAtOf(record.attributes?.SentTimestamp),
    ...(record.attributes?.SenderId ? { senderId: record.attributes.SenderId } : {}),
  };
}

/**
 * A message as a receive returns it (with `ApproximateReceiveCount`, `SentTimestamp` and `SenderId` asked for), as the use cases
 * see it: what {@link toRawMessage} makes of the record Lambda would have built from it.
 */
export function rawMessageOf(message: Message): RawMessage {
  const attributes: Record<string, string> = {};
  for (const [name, value] of Object.entries(message.MessageAttributes ?? {})) {
    if (value.StringValue !== undefined) attributes[name] = value.StringValue;
  }
  return {
    messageId: message.MessageId ?? '',
    body: message.Body ?? '',
    attributes,
    receiveCount: Number(message.Attributes?.ApproximateReceiveCount ?? 1),
    ...sentAtOf(message.Attributes?.SentTimestamp),
    ...(message.Attributes?.SenderId ? { senderId: message.Attributes.SenderId } : {}),
  };
}

/** SQS's `SentTimestamp` (epoch ms) as the message's `sentAt`, when it is there and a number. */
function sentAtOf(value: string | undefined): { sentAt?: number } {
  const sentAt = value === undefined || value === '' ? Number.NaN : Number(value);
  return Number.isFinite(sentAt) ? { sentAt } : {};
}
