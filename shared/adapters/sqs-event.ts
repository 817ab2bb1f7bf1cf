import type { Message } from '@aws-sdk/client-sqs';
import type { SQSRecord } from 'aws-lambda';
import type { RawMessage } from '../ports.ts';

/**
 * A Lambda SQS record as the use cases see it: body, string attributes, id and receive count.
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
  };
}

/**
 * A message as a receive returns it (with `ApproximateReceiveCount` asked for), as the use cases
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
  };
}
