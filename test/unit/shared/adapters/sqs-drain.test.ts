import { describe, expect, it } from 'vitest';
import { SqsDrainQueue } from '../../../../shared/adapters/sqs-drain.ts';
import { awsError, T0, type WorldOptions, world } from './support.ts';

/**
 * The SQS side of a scheduled drain: receives of at most ten that long-poll and ask for the receive
 * count, send time and sender, as raw messages with their receipts; deletes ten at a time, counting
 * what SQS refused (those come back). The module's own fast test over the SQS model.
 */

function setup(intercept?: WorldOptions['intercept']) {
  const w = world(intercept ? { intercept } : {});
  const url = w.models.sqs.handle('CreateQueueCommand', { QueueName: 'drain' }).QueueUrl as string;
  for (let i = 0; i < 25; i += 1)
    w.models.sqs.handle('SendMessageCommand', {
      QueueUrl: url,
      MessageBody: String(i),
      MessageAttributes: { 'fanin-reply-id': { DataType: 'String', StringValue: String(i) } },
    });
  return { w, url, drain: new SqsDrainQueue({ sqs: w.clients.sqs, queueUrl: url, waitTimeSeconds: 5 }) };
}

describe('SqsDrainQueue', () => {
  it('receives at most ten, long-polling, as raw messages with their receipts', async () => {
    // Prepare
    const { w, drain } = setup();

    // Act
    const received = await drain.receive(50);

    // Assess
    expect(drain.maxPerReceive).toBe(10);
    expect(received.length).toBeGreaterThan(0);
    expect(received.length).toBeLessThanOrEqual(10);
    const input = w.calls.find((c) => c.command === 'ReceiveMessageCommand')?.input;
    expect(input).toMatchObject({
      MaxNumberOfMessages: 10,
      WaitTimeSeconds: 5,
      MessageAttributeNames: ['All'],
    });
    expect(input.MessageSystemAttributeNames).toEqual(
      expect.arrayContaining(['ApproximateReceiveCount', 'SentTimestamp', 'SenderId']),
    );
    const [first] = received;
    expect(first?.receipt).not.toBe('');
    expect(first?.message).toMatchObject({ receiveCount: 1, sentAt: T0 });
    expect(first?.message.attributes['fanin-reply-id']).toBe(first?.message.body);
  });

  it('asks for at least one message, whatever it is told', async () => {
    // Prepare
    const { w, drain } = setup();

    // Act
    await drain.receive(0);

    // Assess
    expect(w.calls.find((c) => c.command === 'ReceiveMessageCommand')?.input.MaxNumberOfMessages).toBe(1);
  });

  it('deletes what it received, ten at a time, and reports none refused', async () => {
    // Prepare
    const { w, url, drain } = setup();
    const received = [
      ...(await drain.receive(10)),
      ...(await drain.receive(10)),
      ...(await drain.receive(10)),
    ];

    // Act
    const refused = await drain.delete(received);

    // Assess
    expect(refused).toBe(0);
    const deletes = w.calls.filter((c) => c.command === 'DeleteMessageBatchCommand');
    for (const d of deletes) expect(d.input.Entries.length).toBeLessThanOrEqual(10);
    expect(w.models.sqs.messages(url)).toHaveLength(25 - received.length);
  });

  it('counts the deletes SQS refused, and a whole failed call as refused', async () => {
    // Prepare: the first delete call refuses one entry, the second call fails
    let calls = 0;
    const { drain } = setup((_s, command, input, call) => {
      if (command !== 'DeleteMessageBatchCommand') return call();
      calls += 1;
      if (calls === 2) throw awsError('ServiceUnavailable');
      return {
        Successful: [],
        Failed: [{ Id: input.Entries[0].Id, Code: 'X', Message: 'no', SenderFault: false }],
      };
    });
    const received = [...(await drain.receive(10)), ...(await drain.receive(10))];

    // Act
    const refused = await drain.delete(received);

    // Assess
    expect(received.length).toBeGreaterThan(10);
    expect(refused).toBe(1 + (received.length - 10));
  });
});
