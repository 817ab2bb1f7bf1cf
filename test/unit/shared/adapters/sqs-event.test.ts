import type { Message } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { rawMessageOf, toRawMessage } from '../../../../shared/adapters/sqs-event.ts';
import { eventRecordOf } from '../../../../sim/storage.ts';

/**
 * A message as the use cases see it, from a Lambda SQS record and from a receive's answer alike:
 * string attributes only (binary ones are no part of the wire contract), the receive count, and
 * SQS's send time and sender when they are there. The module's own test.
 */

describe('toRawMessage', () => {
  it('keeps the string attributes, the receive count, the send time and the sender of a record', () => {
    // Prepare
    const record = eventRecordOf(
      {
        MessageId: 'm-1',
        ReceiptHandle: 'h',
        Body: '{}',
        MessageAttributes: { a: 'x' },
        ReceiveCount: 3,
        SentAt: 1700,
      },
      'q',
      'AIDA123',
    );
    const withBinary = {
      ...record,
      messageAttributes: { ...record.messageAttributes, bin: { binaryValue: 'AA==', dataType: 'Binary' } },
    } as typeof record;

    // Act
    const raw = toRawMessage(withBinary);

    // Assess
    expect(raw).toEqual({
      messageId: 'm-1',
      body: '{}',
      attributes: { a: 'x' },
      receiveCount: 3,
      sentAt: 1700,
      senderId: 'AIDA123',
    });
  });

  it('leaves out a send time that is not a number', () => {
    // Prepare
    const record = eventRecordOf(
      { MessageId: 'm', ReceiptHandle: 'h', Body: '', MessageAttributes: {}, ReceiveCount: 1, SentAt: 0 },
      'q',
      '',
    );

    // Act
    const raw = toRawMessage({ ...record, attributes: { ...record.attributes, SentTimestamp: 'soon' } });

    // Assess
    expect(raw.sentAt).toBeUndefined();
    expect(raw.senderId).toBeUndefined();
  });
});

describe('rawMessageOf', () => {
  it('makes of a received message what toRawMessage makes of the record Lambda builds from it', () => {
    // Prepare
    const message: Message = {
      MessageId: 'm-1',
      ReceiptHandle: 'h',
      Body: '{}',
      MessageAttributes: {
        a: { DataType: 'String', StringValue: 'x' },
        b: { DataType: 'Binary', BinaryValue: new Uint8Array(1) },
      },
      Attributes: { ApproximateReceiveCount: '3', SentTimestamp: '1700', SenderId: 'AIDA123' },
    };
    const record = eventRecordOf(
      {
        MessageId: 'm-1',
        ReceiptHandle: 'h',
        Body: '{}',
        MessageAttributes: { a: 'x' },
        ReceiveCount: 3,
        SentAt: 1700,
      },
      'q',
      'AIDA123',
    );

    // Act / Assess
    expect(rawMessageOf(message)).toEqual(toRawMessage(record));
  });

  it('takes a message with no attributes as received once, with an empty body', () => {
    // Act / Assess
    expect(rawMessageOf({})).toEqual({ messageId: '', body: '', attributes: {}, receiveCount: 1 });
  });
});
