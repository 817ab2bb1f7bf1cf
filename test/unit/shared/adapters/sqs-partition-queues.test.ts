import { describe, expect, it } from 'vitest';
import { SqsPartitionQueues } from '../../../../shared/adapters/sqs-partition-queues.ts';
import { type WorldOptions, world } from './support.ts';

/**
 * The partitioned destinations' queues on SQS: sends batched by ten (a refused entry an error),
 * a FIFO queue's group (`default` when none) and deduplication id, receives capped at ten, and
 * moves that trust the configured senders. The module's own fast test over the SQS model; the
 * moves themselves are sqs-queues.test.ts's.
 */

function setup(intercept?: WorldOptions['intercept']) {
  const w = world(intercept ? { intercept } : {});
  const create = (name: string) =>
    w.models.sqs.handle('CreateQueueCommand', {
      QueueName: name,
      ...(name.endsWith('.fifo') ? { Attributes: { FifoQueue: 'true' } } : {}),
    }).QueueUrl as string;
  return { w, create, queues: new SqsPartitionQueues({ sqs: w.clients.sqs, trustedSenders: ['mover'] }) };
}

describe('SqsPartitionQueues', () => {
  it('sends a batch of 23 in calls of at most ten, every message delivered', async () => {
    // Prepare
    const { w, create, queues } = setup();
    const url = create('p-0');

    // Act
    await queues.sendBatch(
      url,
      Array.from({ length: 23 }, (_, i) => ({ body: String(i) })),
    );

    // Assess
    expect(
      w.calls.filter((c) => c.command === 'SendMessageBatchCommand').map((c) => c.input.Entries.length),
    ).toEqual([10, 10, 3]);
    expect(w.models.sqs.messages(url)).toHaveLength(23);
  });

  it('fails a batch SQS partly refused, with its reason', async () => {
    // Prepare
    const { create, queues } = setup((_s, command, input, call) => {
      if (command !== 'SendMessageBatchCommand') return call();
      return {
        Successful: [],
        Failed: [{ Id: input.Entries[0].Id, Code: 'X', Message: 'too big', SenderFault: true }],
      };
    });
    const url = create('p-0');

    // Act
    const sending = queues.sendBatch(url, [{ body: 'a' }]);

    // Assess
    await expect(sending).rejects.toThrow('too big');
  });

  it('gives a FIFO message its group, or default, and its deduplication id', async () => {
    // Prepare
    const { w, create, queues } = setup();
    const url = create('p-0.fifo');

    // Act
    const id = await queues.send(url, { body: 'a', deduplicationId: 'd-1' });
    await queues.sendBatch(url, [{ body: 'b', groupId: 'g', deduplicationId: 'd-2' }]);

    // Assess
    expect(id).not.toBe('');
    expect(w.models.sqs.messages(url).map((m) => m.groupId)).toEqual(['default', 'g']);
  });

  it('receives at most ten with their attributes, and reports the depth', async () => {
    // Prepare
    const { create, queues } = setup();
    const url = create('p-0');
    await queues.sendBatch(
      url,
      Array.from({ length: 12 }, (_, i) => ({
        body: String(i),
        attributes: { n: { DataType: 'String', StringValue: String(i) } },
      })),
    );

    // Act
    const received = await queues.receive(url, { max: 50, visibilitySeconds: 30 });
    const depth = await queues.depth(url);

    // Assess
    expect(received.length).toBeLessThanOrEqual(10);
    expect(received.length).toBeGreaterThan(0);
    expect(received[0]?.MessageAttributes?.n?.StringValue).toBeDefined();
    expect(depth).toEqual({ visible: 12 - received.length, inFlight: received.length, depth: 12 });
  });

  it('moves with the senders it trusts', async () => {
    // Prepare
    const { w, create, queues } = setup();
    const from = create('a');
    const to = create('b');
    await queues.send(from, { body: 'x' });

    // Act
    const result = await queues.move({ from, to, max: 10, visibilitySeconds: 30 });

    // Assess
    expect(result.moved).toBe(1);
    expect(w.models.sqs.messages(to).map((m) => m.body)).toEqual(['x']);
  });
});
