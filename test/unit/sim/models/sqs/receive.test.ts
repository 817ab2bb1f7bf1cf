import { describe, expect, it } from 'vitest';
import { SqsModel } from '../../../../../sim/models/index.ts';
import { receive, sqs, world } from '../fixtures.ts';

/**
 * ReceiveMessage as SQS documents it: 1 to 10 messages a receive; on a FIFO queue, messages of a
 * group in order, none of a group while one of it is in flight, other groups meanwhile, and a
 * message that comes back before the ones behind it; on a standard queue no order and now and
 * then fewer than asked; retention that drops a message once its period is over. fauxqs shows
 * the common cases to the conformance test; this pins each rule, to the millisecond.
 */

function fifo(w = world()) {
  const model = sqs(w);
  const { QueueUrl } = model.handle('CreateQueueCommand', {
    QueueName: 'f.fifo',
    Attributes: { FifoQueue: 'true' },
  });
  let n = 0;
  const send = (group: string, body: string) => {
    n += 1;
    return model.handle('SendMessageCommand', {
      QueueUrl,
      MessageBody: body,
      MessageGroupId: group,
      MessageDeduplicationId: String(n),
    });
  };
  return { w, model, QueueUrl, send };
}

describe('ReceiveMessage', () => {
  it('takes 1 to 10 messages a receive and refuses more', () => {
    const w = world();
    const model = sqs(w);
    const { QueueUrl } = model.handle('CreateQueueCommand', { QueueName: 'q' });
    for (let i = 0; i < 12; i += 1) model.handle('SendMessageCommand', { QueueUrl, MessageBody: String(i) });
    expect(receive(model, QueueUrl, { MaxNumberOfMessages: undefined })).toHaveLength(1);
    expect(receive(model, QueueUrl)).toHaveLength(10);
    expect(() => receive(model, QueueUrl, { MaxNumberOfMessages: 11 })).toThrow(
      'Value 11 for parameter MaxNumberOfMessages is invalid. Reason: Must be between 1 and 10, if provided.',
    );
    expect(() => receive(model, QueueUrl, { MaxNumberOfMessages: 0 })).toThrow(/Must be between 1 and 10/);
    expect(() => receive(model, QueueUrl, { WaitTimeSeconds: 21 })).toThrow(/Must be between 0 and 20/);
  });

  it('returns fewer messages than it could when the draw says so, never none of several', () => {
    const w = world();
    const short = new SqsModel({
      clock: w.clock,
      random: () => 0,
      duplicateProbability: 0,
      shortReceiveProbability: 1,
    });
    const { QueueUrl } = short.handle('CreateQueueCommand', { QueueName: 'q' });
    for (let i = 0; i < 5; i += 1) short.handle('SendMessageCommand', { QueueUrl, MessageBody: String(i) });
    expect(receive(short, QueueUrl)).toHaveLength(1);
    expect(receive(short, QueueUrl)).toHaveLength(1);
  });

  it('delivers a FIFO group in order, and other groups while one is in flight', () => {
    const { model, QueueUrl, send } = fifo();
    send('a', 'a1');
    send('b', 'b1');
    send('a', 'a2');
    send('b', 'b2');
    expect(receive(model, QueueUrl).map((m) => m.Body)).toEqual(['a1', 'a2', 'b1', 'b2']);
    send('c', 'c1');
    expect(receive(model, QueueUrl).map((m) => m.Body)).toEqual(['c1']);
  });

  it('holds back the rest of a FIFO group until the message in flight is deleted or comes back, which comes first', () => {
    const { w, model, QueueUrl, send } = fifo();
    send('g', '1');
    send('g', '2');
    const [one] = receive(model, QueueUrl, { MaxNumberOfMessages: 1, VisibilityTimeout: 10 });
    expect(one?.Body).toBe('1');
    expect(receive(model, QueueUrl)).toHaveLength(0);
    w.advance(10_000);
    // Not deleted: it comes back, still ahead of 2.
    expect(receive(model, QueueUrl, { MaxNumberOfMessages: 1 }).map((m) => m.Body)).toEqual(['1']);
    w.advance(30_000);
    const [again] = receive(model, QueueUrl, { MaxNumberOfMessages: 1 });
    model.handle('DeleteMessageCommand', { QueueUrl, ReceiptHandle: again?.ReceiptHandle });
    expect(receive(model, QueueUrl).map((m) => m.Body)).toEqual(['2']);
  });

  it('gives FIFO messages increasing sequence numbers and their group as attributes', () => {
    const { model, QueueUrl, send } = fifo();
    send('g', '1');
    send('h', '2');
    const got = receive(model, QueueUrl);
    expect(got.map((m) => m.Attributes.MessageGroupId)).toEqual(['g', 'h']);
    const [a, b] = got.map((m) => BigInt(m.Attributes.SequenceNumber as string));
    expect((b as bigint) > (a as bigint)).toBe(true);
  });

  it('drops a message once the retention period of its queue is over', () => {
    const w = world();
    const model = sqs(w);
    const { QueueUrl } = model.handle('CreateQueueCommand', {
      QueueName: 'q',
      Attributes: { MessageRetentionPeriod: '60' },
    });
    model.handle('SendMessageCommand', { QueueUrl, MessageBody: 'old' });
    w.advance(30_000);
    model.handle('SendMessageCommand', { QueueUrl, MessageBody: 'young' });
    w.advance(30_000);
    expect(receive(model, QueueUrl).map((m) => m.Body)).toEqual(['young']);
  });

  it('returns the system attributes asked for: sent time, first receive time, receive count', () => {
    const w = world();
    const model = sqs(w);
    const { QueueUrl } = model.handle('CreateQueueCommand', { QueueName: 'q' });
    const sent = w.clock();
    model.handle('SendMessageCommand', { QueueUrl, MessageBody: 'm' });
    w.advance(2000);
    const [first] = receive(model, QueueUrl, { VisibilityTimeout: 0 });
    w.advance(3000);
    const [second] = receive(model, QueueUrl, { MessageSystemAttributeNames: ['ApproximateReceiveCount'] });
    expect(first?.Attributes).toMatchObject({
      SentTimestamp: String(sent),
      ApproximateFirstReceiveTimestamp: String(sent + 2000),
      ApproximateReceiveCount: '1',
    });
    expect(second?.Attributes).toEqual({ ApproximateReceiveCount: '2' });
  });
});
