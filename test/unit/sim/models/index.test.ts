import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { CreateQueueCommand, ReceiveMessageCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { queryAll, unlessConditionFails } from '../../../../shared/adapters/state-table.ts';
import { describeTopology } from '../../../../shared/topology/topology.ts';
import {
  clientsOver,
  DynamoDbModel,
  faultFreeModels,
  isWrite,
  S3Model,
  SqsModel,
} from '../../../../sim/models/index.ts';
import { dynamo, sqs, TABLE, world } from './fixtures.ts';

/**
 * The clients over the models, which the conformance test uses but does not itself check: the
 * adapters' own helpers accept them (conditional failures are the SDK class, queries page), and
 * every call passes through the scheduler's intercept.
 */

describe('the clients over the models', () => {
  it('answers through clients the adapters accept: conditional failures are the SDK class, queries page', async () => {
    const w = world();
    const model = dynamo(w);
    const seen: string[] = [];
    const clients = clientsOver({ dynamodb: model, sqs: new SqsModel(w) }, (service, name, _input, call) => {
      seen.push(`${service} ${name}`);
      return call();
    });
    const put = () =>
      clients.dynamo.send(
        new PutCommand({
          TableName: TABLE,
          Item: { pk: 'p', sk: 'H' },
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      );
    await put();
    await expect(put()).rejects.toBeInstanceOf(ConditionalCheckFailedException);
    expect(await unlessConditionFails(put())).toBeUndefined();
    for (let i = 0; i < 5; i += 1)
      await clients.dynamo.send(new PutCommand({ TableName: TABLE, Item: { pk: 'p', sk: `R#${i}` } }));
    const rows = await queryAll(
      { client: clients.dynamo, tableName: TABLE, dueIndex: 'due' },
      {
        TableName: TABLE,
        KeyConditionExpression: 'pk = :p',
        ExpressionAttributeValues: { ':p': 'p' },
        ConsistentRead: true,
      },
      4,
    );
    expect(rows.map((r) => r.sk)).toEqual(['H', 'R#0', 'R#1', 'R#2']);
    expect(seen).toContain('dynamodb QueryCommand');
    expect(isWrite('dynamodb', 'PutCommand')).toBe(true);
    expect(isWrite('dynamodb', 'QueryCommand')).toBe(false);
  });

  it('sends through its client, which the scheduler intercepts', async () => {
    const w = world();
    const model = sqs(w);
    const { QueueUrl } = model.handle('CreateQueueCommand', { QueueName: 'q' });
    const clients = clientsOver(
      { dynamodb: new DynamoDbModel(w), sqs: model, s3: new S3Model(w) },
      (service, name, _input, call) => {
        if (name === 'ReceiveMessageCommand') throw new Error(`${service} timed out`);
        return call();
      },
    );
    await clients.sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: 'm' }));
    await expect(clients.sqs.send(new ReceiveMessageCommand({ QueueUrl }))).rejects.toThrow('sqs timed out');
    expect(model.messages(QueueUrl)).toHaveLength(1);
  });
});

describe('faultFreeModels', () => {
  it('receives a message once and reads the latest write, whatever the draws: no fault comes by chance', async () => {
    // Arrange: every draw the models make is the one most likely to give a fault
    const w = world();
    const models = faultFreeModels(w.clock, () => 0);
    models.dynamodb.createTable({ ...describeTopology({ definitions: [] }).table, name: TABLE });
    const clients = clientsOver(models);
    const { QueueUrl } = await clients.sqs.send(new CreateQueueCommand({ QueueName: 'q' }));
    await clients.sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: 'one' }));
    await clients.dynamo.send(new PutCommand({ TableName: TABLE, Item: { pk: 'p', sk: 'H', v: 1 } }));
    await clients.dynamo.send(new PutCommand({ TableName: TABLE, Item: { pk: 'p', sk: 'H', v: 2 } }));

    // Act
    const receives = [];
    for (let i = 0; i < 5; i += 1)
      receives.push(await clients.sqs.send(new ReceiveMessageCommand({ QueueUrl, MaxNumberOfMessages: 10 })));
    const read = await clients.dynamo.send(new GetCommand({ TableName: TABLE, Key: { pk: 'p', sk: 'H' } }));

    // Assess
    expect(receives.flatMap((r) => r.Messages ?? []).map((m) => m.Body)).toEqual(['one']);
    expect(read.Item?.v).toBe(2);
    expect(models.eventBridge).toBeDefined();
  });
});
