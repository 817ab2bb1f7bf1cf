import { describe, expect, it } from 'vitest';
import { sqs, world } from '../fixtures.ts';

/**
 * CreateQueue and GetQueueAttributes as SQS's API reference documents them: names of 1 to 80
 * letters, digits, hyphens and underscores, a FIFO queue's ending in `.fifo`; creating an existing
 * queue again is the same queue unless an attribute differs; attributes within their ranges
 * (VisibilityTimeout 0 to 43200, DelaySeconds 0 to 900, MessageRetentionPeriod 60 to 1209600,
 * maxReceiveCount 1 to 1000); the defaults (30 s visibility, 4 days retention); the counts of
 * visible, in-flight and delayed messages. fauxqs shows a few of these to the conformance test.
 */

describe('CreateQueue', () => {
  it('takes names of 1 to 80 allowed characters, a FIFO name ending in .fifo, and refuses others', () => {
    const model = sqs(world());
    const create =
      (QueueName: string, Attributes: Record<string, string> = {}) =>
      () =>
        model.handle('CreateQueueCommand', { QueueName, Attributes });
    expect(create('a'.repeat(80))).not.toThrow();
    expect(create('ok_name-1')).not.toThrow();
    expect(create('a'.repeat(81))).toThrow(expect.objectContaining({ name: 'InvalidParameterValue' }));
    expect(create('bad.name')).toThrow(expect.objectContaining({ name: 'InvalidParameterValue' }));
    expect(create('')).toThrow(expect.objectContaining({ name: 'InvalidParameterValue' }));
    expect(create('f.fifo', { FifoQueue: 'true' })).not.toThrow();
    expect(create('f', { FifoQueue: 'true' })).toThrow(/must end with .fifo suffix/);
    expect(create('g.fifo')).toThrow(expect.objectContaining({ name: 'InvalidParameterValue' }));
  });

  it('answers the same queue to the same creation, and refuses one with a different attribute', () => {
    const model = sqs(world());
    const first = model.handle('CreateQueueCommand', {
      QueueName: 'q',
      Attributes: { VisibilityTimeout: '10' },
    });
    expect(
      model.handle('CreateQueueCommand', { QueueName: 'q', Attributes: { VisibilityTimeout: '10' } }),
    ).toEqual(first);
    expect(() =>
      model.handle('CreateQueueCommand', { QueueName: 'q', Attributes: { VisibilityTimeout: '11' } }),
    ).toThrow(expect.objectContaining({ name: 'QueueNameExists' }));
  });

  it('refuses attributes out of their documented ranges and takes their bounds', () => {
    const model = sqs(world());
    let n = 0;
    const create = (Attributes: Record<string, string>) => () => {
      n += 1;
      return model.handle('CreateQueueCommand', { QueueName: `q${n}`, Attributes });
    };
    for (const [name, low, high] of [
      ['VisibilityTimeout', 0, 43_200],
      ['DelaySeconds', 0, 900],
      ['MessageRetentionPeriod', 60, 1_209_600],
    ] as const) {
      expect(create({ [name]: String(low) }), name).not.toThrow();
      expect(create({ [name]: String(high) }), name).not.toThrow();
      expect(create({ [name]: String(low - 1) }), name).toThrow(`Invalid value for the parameter ${name}.`);
      expect(create({ [name]: String(high + 1) }), name).toThrow(`Invalid value for the parameter ${name}.`);
    }
    const { QueueUrl } = model.handle('CreateQueueCommand', { QueueName: 'dlq' });
    const arn = model.handle('GetQueueAttributesCommand', { QueueUrl, AttributeNames: ['QueueArn'] })
      .Attributes.QueueArn;
    const redrive = (maxReceiveCount: number) =>
      create({ RedrivePolicy: JSON.stringify({ deadLetterTargetArn: arn, maxReceiveCount }) });
    expect(redrive(1)).not.toThrow();
    expect(redrive(1000)).not.toThrow();
    expect(redrive(0)).toThrow('Value for parameter RedrivePolicy is invalid.');
    expect(redrive(1001)).toThrow('Value for parameter RedrivePolicy is invalid.');
  });
});

describe('GetQueueAttributes', () => {
  it('gives the defaults, and counts visible, in-flight and delayed messages', () => {
    const w = world();
    const model = sqs(w);
    const { QueueUrl } = model.handle('CreateQueueCommand', { QueueName: 'q' });
    model.handle('SendMessageCommand', { QueueUrl, MessageBody: 'a' });
    model.handle('SendMessageCommand', { QueueUrl, MessageBody: 'b' });
    model.handle('SendMessageCommand', { QueueUrl, MessageBody: 'c', DelaySeconds: 60 });
    model.handle('ReceiveMessageCommand', { QueueUrl, MaxNumberOfMessages: 1 });
    const attributes = model.handle('GetQueueAttributesCommand', {
      QueueUrl,
      AttributeNames: ['All'],
    }).Attributes;
    expect(attributes).toMatchObject({
      VisibilityTimeout: '30',
      MessageRetentionPeriod: '345600',
      DelaySeconds: '0',
      ApproximateNumberOfMessages: '1',
      ApproximateNumberOfMessagesNotVisible: '1',
      ApproximateNumberOfMessagesDelayed: '1',
    });
    expect(() =>
      model.handle('GetQueueAttributesCommand', { QueueUrl, AttributeNames: ['Nonsense'] }),
    ).toThrow(expect.objectContaining({ name: 'InvalidAttributeName' }));
  });
});
