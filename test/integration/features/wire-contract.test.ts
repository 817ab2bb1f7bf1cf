import {
  DeleteMessageCommand,
  GetQueueUrlCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
} from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { aws } from '../../support/clients.ts';
import { FaninUnderTest } from '../../support/fanin.ts';

/**
 * docs/wire-contract.md, followed literally: the producer and the responder here use nothing but
 * SQS SendMessage / ReceiveMessage with the documented attributes and bodies — no fanin code.
 * (fanin's own handlers run behind them, driven as Lambda would.)
 */
describe('wire contract', () => {
  let fanin: FaninUnderTest;
  let bank: string;

  beforeAll(async () => {
    fanin = await FaninUnderTest.start([
      {
        name: 'loan',
        fanOut: { type: 'recipient-list' },
        completion: { strategy: 'all' },
        aggregation: { algorithm: 'best', criteria: [{ path: '$.rate', order: 'min' }] },
        timeoutSeconds: 60,
      },
    ]);
    bank = await fanin.targetQueue('bank');
  });
  afterAll(() => fanin.stop());

  it('a request and replies written from the documented attributes alone complete an aggregate', async () => {
    // Prepare: the producer
    const sqs = aws.sqs;
    const url = async (name: string) =>
      (await sqs.send(new GetQueueUrlCommand({ QueueName: name }))).QueueUrl ?? '';
    await sqs.send(
      new SendMessageCommand({
        QueueUrl: await url(`${fanin.topology.prefix}-ingress`),
        MessageBody: JSON.stringify({ recipients: [bank, bank], payload: { amount: 1000 } }),
        MessageAttributes: {
          'fanin-definition': { DataType: 'String', StringValue: 'loan' },
          'fanin-request-id': { DataType: 'String', StringValue: 'req-42' },
        },
      }),
    );
    await fanin.drain();

    // Act: the responder copies the fanin-* attributes and replies to fanin-reply-to
    const bankUrl = await url(bank);
    const { Messages = [] } = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: bankUrl,
        MaxNumberOfMessages: 10,
        MessageAttributeNames: ['All'],
      }),
    );
    expect(Messages).toHaveLength(2);
    for (const [i, message] of Messages.entries()) {
      const attributes = Object.fromEntries(
        Object.entries(message.MessageAttributes ?? {})
          .filter(([name]) => name.startsWith('fanin-'))
          .map(([name, value]) => [name, { DataType: 'String', StringValue: value.StringValue }]),
      );
      expect(JSON.parse(message.Body ?? '')).toEqual({ amount: 1000 });
      await sqs.send(
        new SendMessageCommand({
          QueueUrl: attributes['fanin-reply-to']?.StringValue,
          MessageBody: JSON.stringify({ rate: 4 - i }),
          MessageAttributes: attributes,
        }),
      );
      await sqs.send(new DeleteMessageCommand({ QueueUrl: bankUrl, ReceiptHandle: message.ReceiptHandle }));
    }
    await fanin.drain();

    // Assess: the consumer reads the documented output
    const outputUrl = await url(`${fanin.topology.prefix}-out-completed.fifo`);
    const { Messages: outputs = [] } = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: outputUrl,
        MaxNumberOfMessages: 10,
        MessageAttributeNames: ['All'],
      }),
    );
    expect(outputs).toHaveLength(1);
    const output = JSON.parse(outputs[0]?.Body ?? '{}');
    expect(output).toMatchObject({
      type: 'fanin.aggregate.completed',
      outcome: 'completed',
      definition: 'loan',
      counts: { expected: 2, received: 2 },
      result: { replyId: '1', body: { rate: 3 } },
      missing: [],
    });
    expect(output.id).toBe(`${output.aggregateId}/result`);
    expect(outputs[0]?.MessageAttributes?.['fanin-type']?.StringValue).toBe('fanin.aggregate.completed');
  });
});
