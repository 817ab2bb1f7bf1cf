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

  it('keeps a message in flight for 30 seconds by default, or for the VisibilityTimeout of the receive', () => {
    const w = world();
    const model = sqs(w);
    const { QueueUrl } = model.handle('CreateQueueCommand', { QueueName: 'q' });
    model.handle('SendMessageCommand', { QueueUrl, MessageBody: 'a' });
    model.handle('SendMessageCommand', { QueueUrl, MessageBody: 'b' });
    expect(receive(model, QueueUrl, { MaxNumberOfMessages: 1 })).toHaveLength(1);
    expect(receive(model, QueueUrl, { MaxNumberOfMessages: 1, VisibilityTimeout: 5 })).toHaveLength(1);
    w.advance(5_000);
    expect(receive(model, QueueUrl, { VisibilityTimeout: 100 })).toHaveLength(1);
    w.advance(25_000);
    expect(receive(model, QueueUrl)).toHaveLength(1);
  });

  it('changes visibility from now with the latest handle: 0 makes the message visible at once', () => {
    const w = world();
    const model = sqs(w);
    const { QueueUrl } = model.handle('CreateQueueCommand', { QueueName: 'q' });
    model.handle('SendMessageCommand', { QueueUrl, MessageBody: 'm' });
    const [first] = receive(model, QueueUrl);
    w.advance(20_000);
    // 20 s after the receive, a new timeout of 60 s runs from now: visible 80 s after the receive.
    model.handle('ChangeMessageVisibilityCommand', {
      QueueUrl,
      ReceiptHandle: first?.ReceiptHandle,
      VisibilityTimeout: 60,
    });
    w.advance(59_999);
    expect(receive(model, QueueUrl)).toHaveLength(0);
    w.advance(1);
    const [second] = receive(model, QueueUrl);
    expect(second?.Attributes.ApproximateReceiveCount).toBe('2');
    model.handle('ChangeMessageVisibilityCommand', {
      QueueUrl,
      ReceiptHandle: second?.ReceiptHandle,
      VisibilityTimeout: 0,
    });
    expect(receive(model, QueueUrl)[0]?.Attributes.ApproximateReceiveCount).toBe('3');
  });

  it('refuses to change the visibility with an older handle, of a message not in flight, or beyond 12 hours', () => {
    const w = world();
    const model = sqs(w);
    const { QueueUrl } = model.handle('CreateQueueCommand', { QueueName: 'q' });
    model.handle('SendMessageCommand', { QueueUrl, MessageBody: 'm' });
    const [old] = receive(model, QueueUrl, { VisibilityTimeout: 1 });
    w.advance(1000);
    const [latest] = receive(model, QueueUrl, { VisibilityTimeout: 1 });
    const change = (handle: string | undefined, VisibilityTimeout: number) => () =>
      model.handle('ChangeMessageVisibilityCommand', { QueueUrl, ReceiptHandle: handle, VisibilityTimeout });
    expect(change(old?.ReceiptHandle, 10)).toThrow(/The receipt handle has expired/);
    expect(change(latest?.ReceiptHandle, 43_201)).toThrow(/Must be between 0 and 43200/);
    expect(change(latest?.ReceiptHandle, 43_200)).not.toThrow();
    model.handle('DeleteMessageCommand', { QueueUrl, ReceiptHandle: latest?.ReceiptHandle });
    expect(change(latest?.ReceiptHandle, 10)).toThrow(
      expect.objectContaining({ name: 'MessageNotInflight' }),
    );
    expect(change('not-a-handle', 10)).toThrow(expect.objectContaining({ name: 'ReceiptHandleIsInvalid' }));
  });

  it('deletes with the latest handle always, and on a FIFO queue ignores an older one', () => {
    const w = world([0]);
    const model = sqs(w, { staleDeleteIgnoredProbability: 0 });
    const { QueueUrl } = model.handle('CreateQueueCommand', {
      QueueName: 'f.fifo',
      Attributes: { FifoQueue: 'true' },
    });
    model.handle('SendMessageCommand', {
      QueueUrl,
      MessageBody: 'm',
      MessageGroupId: 'g',
      MessageDeduplicationId: 'd',
    });
    const [old] = receive(model, QueueUrl, { VisibilityTimeout: 1 });
    w.advance(1000);
    const [latest] = receive(model, QueueUrl);
    model.handle('DeleteMessageCommand', { QueueUrl, ReceiptHandle: old?.ReceiptHandle });
    expect(model.messages(QueueUrl)).toHaveLength(1);
    model.handle('DeleteMessageCommand', { QueueUrl, ReceiptHandle: latest?.ReceiptHandle });
    expect(model.messages(QueueUrl)).toHaveLength(0);
    // A handle of a message already deleted is accepted.
    expect(() =>
      model.handle('DeleteMessageCommand', { QueueUrl, ReceiptHandle: latest?.ReceiptHandle }),
    ).not.toThrow();
  });

  it('names queues by URL and ARN, and says a queue that does not exist does not exist', () => {
    const w = world();
    const model = sqs(w);
    const { QueueUrl } = model.handle('CreateQueueCommand', { QueueName: 'orders' });
    expect(QueueUrl).toBe('https://sqs.us-east-1.amazonaws.com/000000000000/orders');
    expect(model.handle('GetQueueUrlCommand', { QueueName: 'orders' }).QueueUrl).toBe(QueueUrl);
    expect(() => model.handle('GetQueueUrlCommand', { QueueName: 'none' })).toThrow(
      expect.objectContaining({ name: 'QueueDoesNotExist' }),
    );
  });

  it('drops a FIFO message whose body was seen in five minutes when the queue deduplicates by content', () => {
    const w = world();
    const model = sqs(w);
    const { QueueUrl } = model.handle('CreateQueueCommand', {
      QueueName: 'c.fifo',
      Attributes: { FifoQueue: 'true', ContentBasedDeduplication: 'true' },
    });
    const send = (body: string) =>
      model.handle('SendMessageCommand', { QueueUrl, MessageBody: body, MessageGroupId: 'g' });
    send('same');
    send('same');
    send('other');
    w.advance(5 * 60_000 - 1);
    send('same');
    w.advance(1);
    send('same');
    expect(model.messages(QueueUrl).map((m) => m.body)).toEqual(['same', 'other', 'same']);
  });

  it('requires a group on a FIFO queue, and a deduplication id unless it deduplicates by content', () => {
    const w = world();
    const model = sqs(w);
    const { QueueUrl } = model.handle('CreateQueueCommand', {
      QueueName: 'f.fifo',
      Attributes: { FifoQueue: 'true' },
    });
    expect(() =>
      model.handle('SendMessageCommand', { QueueUrl, MessageBody: 'x', MessageDeduplicationId: 'd' }),
    ).toThrow('The request must contain the parameter MessageGroupId.');
    expect(() =>
      model.handle('SendMessageCommand', { QueueUrl, MessageBody: 'x', MessageGroupId: 'g' }),
    ).toThrow(expect.objectContaining({ name: 'InvalidParameterValue' }));
  });
});
