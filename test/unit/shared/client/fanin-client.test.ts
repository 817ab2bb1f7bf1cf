import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { FaninClient } from '../../../../shared/client/fanin-client.ts';
import { clientsOver, DynamoDbModel, SqsModel } from '../../../../sim/models/index.ts';

/**
 * What a responder's `receive` makes of the messages on its queue, over the simulation's SQS
 * model through the real SDK client: a cancellation notice is told from a sub-request. The
 * module's own fast test of it (test/integration/guarantees/cancellation.test.ts sends the notices).
 */
function aQueue() {
  const w = { clock: () => 1_800_000_000_000, random: () => 0.5 };
  const sqs = new SqsModel({ ...w, duplicateProbability: 0, shortReceiveProbability: 0 });
  const { QueueUrl } = sqs.handle('CreateQueueCommand', { QueueName: 'bank-a' }) as { QueueUrl: string };
  const clients = clientsOver({ dynamodb: new DynamoDbModel(w), sqs });
  return { url: QueueUrl, sqs: clients.sqs, client: new FaninClient({ sqs: clients.sqs }) };
}
const attributes = (values: Record<string, string>) =>
  Object.fromEntries(Object.entries(values).map(([k, v]) => [k, { DataType: 'String', StringValue: v }]));

describe('FaninClient.receive', () => {
  it('says which message is a cancellation notice, with the outcome and what ended the aggregate', async () => {
    const { url, sqs, client } = aQueue();
    await sqs.send(
      new SendMessageCommand({
        QueueUrl: url,
        MessageBody: '{"amount":1}',
        MessageAttributes: attributes({
          'fanin-aggregate-id': 'loan-7',
          'fanin-reply-id': '0',
          'fanin-reply-to': 'http://replies/0',
        }),
      }),
    );
    await sqs.send(
      new SendMessageCommand({
        QueueUrl: url,
        MessageBody: '{"type":"fanin.cancellation","aggregateId":"loan-7","replyId":"0"}',
        MessageAttributes: attributes({
          'fanin-aggregate-id': 'loan-7',
          'fanin-reply-id': '0',
          'fanin-cancelled': 'completed',
          'fanin-completed-by': 'first',
        }),
      }),
    );
    const [subRequest, notice] = await client.receive(url, { max: 10 });
    expect(subRequest?.cancelled).toBeUndefined();
    expect(subRequest?.replyTo).toBe('http://replies/0');
    expect(notice).toMatchObject({
      aggregateId: 'loan-7',
      replyId: '0',
      cancelled: { outcome: 'completed', completedBy: 'first' },
    });
    expect(notice?.replyTo).toBeUndefined();
  });
});
