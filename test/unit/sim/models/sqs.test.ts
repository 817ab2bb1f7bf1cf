import { describe, expect, it } from 'vitest';
import { receive, sqs, world } from './fixtures.ts';

/**
 * The SQS model's own fast test, of what fauxqs cannot show deterministically: duplicate
 * deliveries to a second receiver, a delete with an older receipt handle that leaves the message,
 * redelivery to the millisecond, the receive after which redrive happens, the deduplication
 * window's end. The conformance test compares the common answers to fauxqs's.
 */

describe('the SQS model', () => {
  it('delivers a message another receiver holds, with a new handle and a higher receive count', () => {
    const w = world([0]);
    const model = sqs(w, { duplicateProbability: 1 });
    const { QueueUrl } = model.handle('CreateQueueCommand', { QueueName: 'q' });
    model.handle('SendMessageCommand', { QueueUrl, MessageBody: 'once' });
    const [first] = receive(model, QueueUrl);
    const [again] = receive(model, QueueUrl);
    expect(again?.Body).toBe('once');
    expect(again?.ReceiptHandle).not.toBe(first?.ReceiptHandle);
    expect(again?.Attributes.ApproximateReceiveCount).toBe('2');
  });

  it('redelivers a message its receiver did not delete once the visibility timeout has passed', () => {
    const w = world();
    const model = sqs(w);
    const { QueueUrl } = model.handle('CreateQueueCommand', {
      QueueName: 'q',
      Attributes: { VisibilityTimeout: '30' },
    });
    model.handle('SendMessageCommand', { QueueUrl, MessageBody: 'm' });
    expect(receive(model, QueueUrl)).toHaveLength(1);
    w.advance(29_999);
    expect(receive(model, QueueUrl)).toHaveLength(0);
    w.advance(1);
    expect(receive(model, QueueUrl)[0]?.Attributes.ApproximateReceiveCount).toBe('2');
  });

  it('accepts a delete with an older receipt handle but may leave the message, as SQS documents', () => {
    const w = world();
    const model = sqs(w, { staleDeleteIgnoredProbability: 1 });
    const { QueueUrl } = model.handle('CreateQueueCommand', {
      QueueName: 'q',
      Attributes: { VisibilityTimeout: '1' },
    });
    model.handle('SendMessageCommand', { QueueUrl, MessageBody: 'm' });
    const [old] = receive(model, QueueUrl);
    w.advance(1000);
    const [latest] = receive(model, QueueUrl);
    model.handle('DeleteMessageCommand', { QueueUrl, ReceiptHandle: old?.ReceiptHandle });
    expect(model.messages(QueueUrl)).toHaveLength(1);
    model.handle('DeleteMessageCommand', { QueueUrl, ReceiptHandle: latest?.ReceiptHandle });
    expect(model.messages(QueueUrl)).toHaveLength(0);
  });

  it('moves a message to its dead-letter queue on the receive after maxReceiveCount, and not before', () => {
    const w = world();
    const model = sqs(w);
    const { QueueUrl: dlq } = model.handle('CreateQueueCommand', { QueueName: 'q-dlq' });
    const arn = model.handle('GetQueueAttributesCommand', { QueueUrl: dlq, AttributeNames: ['QueueArn'] })
      .Attributes.QueueArn;
    const { QueueUrl } = model.handle('CreateQueueCommand', {
      QueueName: 'q',
      Attributes: {
        VisibilityTimeout: '1',
        RedrivePolicy: JSON.stringify({ deadLetterTargetArn: arn, maxReceiveCount: 3 }),
      },
    });
    model.handle('SendMessageCommand', { QueueUrl, MessageBody: 'poison' });
    for (let i = 1; i <= 3; i += 1) {
      expect(receive(model, QueueUrl)[0]?.Attributes.ApproximateReceiveCount).toBe(String(i));
      w.advance(1000);
    }
    expect(receive(model, QueueUrl)).toHaveLength(0);
    expect(model.messages(dlq)).toMatchObject([
      { body: 'poison', deadLetterSourceArn: 'arn:aws:sqs:us-east-1:000000000000:q' },
    ]);
  });

  it('holds a delayed message back for its delay, per message or per queue, and refuses a per-message delay on FIFO', () => {
    const w = world();
    const model = sqs(w);
    const { QueueUrl } = model.handle('CreateQueueCommand', {
      QueueName: 'q',
      Attributes: { DelaySeconds: '5' },
    });
    model.handle('SendMessageCommand', { QueueUrl, MessageBody: 'queue delay' });
    model.handle('SendMessageCommand', { QueueUrl, MessageBody: 'own delay', DelaySeconds: 2 });
    expect(model.messages(QueueUrl).map((m) => m.state)).toEqual(['delayed', 'delayed']);
    w.advance(2000);
    expect(receive(model, QueueUrl).map((m) => m.Body)).toEqual(['own delay']);
    w.advance(3000);
    expect(receive(model, QueueUrl).map((m) => m.Body)).toEqual(['queue delay']);
    const { QueueUrl: fifo } = model.handle('CreateQueueCommand', {
      QueueName: 'f.fifo',
      Attributes: { FifoQueue: 'true' },
    });
    expect(() =>
      model.handle('SendMessageCommand', {
        QueueUrl: fifo,
        MessageBody: 'x',
        MessageGroupId: 'g',
        MessageDeduplicationId: 'd',
        DelaySeconds: 1,
      }),
    ).toThrow(/DelaySeconds is invalid/);
  });

  it('delivers a FIFO group in order, one message in flight at a time, and drops a repeated deduplication id for five minutes', () => {
    const w = world();
    const model = sqs(w);
    const { QueueUrl } = model.handle('CreateQueueCommand', {
      QueueName: 'f.fifo',
      Attributes: { FifoQueue: 'true' },
    });
    const send = (body: string, dedup: string) =>
      model.handle('SendMessageCommand', {
        QueueUrl,
        MessageBody: body,
        MessageGroupId: 'g',
        MessageDeduplicationId: dedup,
      });
    send('1', 'd1');
    send('2', 'd2');
    send('1 again', 'd1');
    expect(receive(model, QueueUrl, { MaxNumberOfMessages: 1 }).map((m) => m.Body)).toEqual(['1']);
    expect(receive(model, QueueUrl)).toHaveLength(0);
    w.advance(5 * 60_000);
    send('1 later', 'd1');
    expect(model.messages(QueueUrl).map((m) => m.body)).toEqual(['1', '2', '1 later']);
  });
});
