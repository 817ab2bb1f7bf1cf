import { GetItemCommand, TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import {
  DeleteMessageCommand,
  type Message,
  ReceiveMessageCommand,
  SendMessageCommand,
} from '@aws-sdk/client-sqs';
import { GetCommand, PutCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, describe, expect, test, vi } from 'vitest';
import { createClients, createS3Client, createSqsClient } from '../../../shared/aws/clients.ts';
import { aws } from '../../support/clients.ts';
import { requireEventBridge } from '../../support/eventbridge.ts';
import { uniquePrefix } from '../../support/names.ts';
import { createTestResources } from '../../support/resources.ts';

const resources = createTestResources(uniquePrefix(import.meta.url));
afterAll(() => resources.cleanup());

async function receive(queueUrl: string, waitTimeSeconds = 1): Promise<Message[]> {
  const { Messages } = await aws.sqs.send(
    new ReceiveMessageCommand({
      QueueUrl: queueUrl,
      MaxNumberOfMessages: 10,
      WaitTimeSeconds: waitTimeSeconds,
      MessageAttributeNames: ['All'],
      MessageSystemAttributeNames: ['ApproximateReceiveCount'],
    }),
  );
  return Messages ?? [];
}

describe('clients', () => {
  test("an entry point's clients are each created once, on first use, and anew after destroy()", () => {
    // Prepare
    const created: unknown[] = [];
    const clients = createClients({
      instrument: (client) => {
        created.push(client);
        return client;
      },
    });

    // Act
    const first = { sqs: clients.sqs, dynamo: clients.dynamo };

    // Assess: the document client sends through the (instrumented) DynamoDB client, not again.
    expect(clients.sqs).toBe(first.sqs);
    expect(clients.dynamo).toBe(first.dynamo);
    expect(created).toEqual([first.sqs, clients.dynamoDb]);
    clients.destroy();
    expect(clients.sqs).not.toBe(first.sqs);
    clients.destroy();
  });

  test('a connection (what the local runtime found itself) applies to its services; the others keep the standard settings', async () => {
    // Prepare: no endpoint in the environment, so path-style S3 can only come from the connection.
    for (const name of ['AWS_ENDPOINT_URL', 'AWS_ENDPOINT_URL_S3']) vi.stubEnv(name, undefined);

    // Act
    const clients = createClients({
      endpoints: { SQS: 'http://127.0.0.1:1', S3: 'http://127.0.0.1:2' },
      region: 'eu-west-1',
      credentials: { accessKeyId: 'emulator', secretAccessKey: 'emulator' },
    });
    const s3 = clients.s3;
    vi.unstubAllEnvs();

    // Assess
    expect(await clients.sqs.config.endpoint?.()).toMatchObject({ hostname: '127.0.0.1', port: 1 });
    expect(await s3.config.endpoint?.()).toMatchObject({ hostname: '127.0.0.1', port: 2 });
    expect(s3.config.forcePathStyle).toBe(true);
    expect(clients.dynamoDb.config.endpoint).toBeUndefined();
    expect(await clients.dynamoDb.config.region()).toBe('eu-west-1');
    expect((await clients.sqs.config.credentials()).accessKeyId).toBe('emulator');
    expect(clients.sqs.config.useQueueUrlAsEndpoint).toBe(false);
    clients.destroy();
  });

  test('emulator settings apply only when an endpoint override is configured', () => {
    // Prepare
    const overridden = { sqs: createSqsClient(), s3: createS3Client() };
    for (const name of ['AWS_ENDPOINT_URL', 'AWS_ENDPOINT_URL_SQS', 'AWS_ENDPOINT_URL_S3']) {
      vi.stubEnv(name, undefined);
    }

    // Act
    const plain = { sqs: createSqsClient(), s3: createS3Client() };
    vi.unstubAllEnvs();

    // Assess
    expect(overridden.sqs.config.useQueueUrlAsEndpoint).toBe(false);
    expect(overridden.s3.config.forcePathStyle).toBe(true);
    // On AWS too: a queue URL from a message must never become the endpoint.
    expect(plain.sqs.config.useQueueUrlAsEndpoint).toBe(false);
    expect(plain.s3.config.forcePathStyle).toBeFalsy();
  });
});

describe('DynamoDB', () => {
  test('a transaction whose condition fails is cancelled with ConditionalCheckFailed and writes none of its items', async () => {
    // Prepare
    const table = await resources.table();
    await aws.dynamo.send(new PutCommand({ TableName: table, Item: { pk: 'existing', version: 1 } }));

    // Act
    const outcome = await aws.dynamo
      .send(
        new TransactWriteCommand({
          TransactItems: [
            { Put: { TableName: table, Item: { pk: 'new', version: 1 } } },
            {
              Put: {
                TableName: table,
                Item: { pk: 'existing', version: 2 },
                ConditionExpression: 'attribute_not_exists(pk)',
                ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
              },
            },
          ],
        }),
      )
      .then(
        () => undefined,
        (error: unknown) => error,
      );

    // Assess
    expect(outcome).toBeInstanceOf(TransactionCanceledException);
    const reasons = (outcome as TransactionCanceledException).CancellationReasons ?? [];
    expect(reasons.map(({ Code }) => Code)).toEqual(['None', 'ConditionalCheckFailed']);
    // The reasons are not unmarshalled by the document client: the item comes in AttributeValue form.
    expect(reasons[1]?.Item).toEqual({ pk: { S: 'existing' }, version: { N: '1' } });
    const untouched = await aws.dynamo.send(new GetCommand({ TableName: table, Key: { pk: 'existing' } }));
    expect(untouched.Item).toEqual({ pk: 'existing', version: 1 });
    const notWritten = await aws.dynamoDb.send(
      new GetItemCommand({ TableName: table, Key: { pk: { S: 'new' } }, ConsistentRead: true }),
    );
    expect(notWritten.Item).toBeUndefined();
  });

  test('the document client drops undefined attributes instead of failing', async () => {
    // Prepare
    const table = await resources.table();

    // Act
    await aws.dynamo.send(
      new PutCommand({ TableName: table, Item: { pk: 'a', kept: 'yes', dropped: undefined } }),
    );

    // Assess
    const { Item } = await aws.dynamo.send(new GetCommand({ TableName: table, Key: { pk: 'a' } }));
    expect(Item).toEqual({ pk: 'a', kept: 'yes' });
  });
});

describe('SQS', () => {
  test('a message round-trips with its attributes and is gone once deleted', async () => {
    // Prepare
    const queue = await resources.queue();

    // Act
    const sent = await aws.sqs.send(
      new SendMessageCommand({
        QueueUrl: queue.url,
        MessageBody: JSON.stringify({ hello: 'world' }),
        MessageAttributes: {
          kind: { DataType: 'String', StringValue: 'reply' },
          attempt: { DataType: 'Number', StringValue: '1' },
        },
      }),
    );
    const [message, ...others] = await receive(queue.url);

    // Assess
    expect(others).toEqual([]);
    expect(message?.MessageId).toBe(sent.MessageId);
    expect(JSON.parse(message?.Body ?? 'null')).toEqual({ hello: 'world' });
    expect(message?.MessageAttributes).toEqual({
      kind: { DataType: 'String', StringValue: 'reply' },
      attempt: { DataType: 'Number', StringValue: '1' },
    });
    await aws.sqs.send(
      new DeleteMessageCommand({ QueueUrl: queue.url, ReceiptHandle: message?.ReceiptHandle }),
    );
    expect(await receive(queue.url, 0)).toEqual([]);
  });

  test('a FIFO queue drops a second send with the same deduplication id', async () => {
    // Prepare
    const queue = await resources.queue({ fifo: true });
    const send = (body: string, deduplicationId: string) =>
      aws.sqs.send(
        new SendMessageCommand({
          QueueUrl: queue.url,
          MessageBody: body,
          MessageGroupId: 'g1',
          MessageDeduplicationId: deduplicationId,
        }),
      );

    // Act
    await send('first', 'a');
    await send('duplicate of first', 'a');
    await send('second', 'b');

    // Assess
    const bodies: string[] = [];
    // One group delivers in order, and not while an earlier message is in flight: delete as we go.
    for (let messages = await receive(queue.url); messages.length > 0; messages = await receive(queue.url)) {
      for (const message of messages) {
        bodies.push(message.Body ?? '');
        await aws.sqs.send(
          new DeleteMessageCommand({ QueueUrl: queue.url, ReceiptHandle: message.ReceiptHandle }),
        );
      }
    }
    expect(bodies).toEqual(['first', 'second']);
  });

  test('a message received maxReceiveCount times without being deleted moves to the dead-letter queue', async () => {
    // Prepare
    const queue = await resources.queue({ visibilityTimeoutSeconds: 1, deadLetter: { maxReceiveCount: 2 } });
    await aws.sqs.send(new SendMessageCommand({ QueueUrl: queue.url, MessageBody: 'poison' }));

    // Act: receive and never delete, as a consumer that keeps failing would.
    const receiveCounts: string[] = [];
    let deadLettered: Message[] = [];
    const deadline = Date.now() + 20_000;
    while (deadLettered.length === 0 && Date.now() < deadline) {
      for (const message of await receive(queue.url)) {
        receiveCounts.push(message.Attributes?.ApproximateReceiveCount ?? '?');
      }
      deadLettered = await receive(queue.deadLetter?.url ?? '', 0);
    }

    // Assess
    expect(receiveCounts).toEqual(['1', '2']);
    expect(deadLettered.map(({ Body }) => Body)).toEqual(['poison']);
  });
});

describe('S3', () => {
  test('an object reads back as written', async () => {
    // Prepare
    const bucket = await resources.bucket();
    const body = JSON.stringify({ payload: 'x'.repeat(1_000) });

    // Act
    await aws.s3.send(
      new PutObjectCommand({
        Bucket: bucket,
        Key: 'claims/one.json',
        Body: body,
        ContentType: 'application/json',
      }),
    );
    const object = await aws.s3.send(new GetObjectCommand({ Bucket: bucket, Key: 'claims/one.json' }));

    // Assess
    expect(object.ContentType).toBe('application/json');
    expect(await object.Body?.transformToString()).toBe(body);
  });
});

describe('EventBridge', () => {
  test('PutEvents accepts an event on the default bus', async (context) => {
    if (!(await requireEventBridge(context))) return;

    // Act
    const result = await aws.eventBridge.send(
      new PutEventsCommand({
        Entries: [
          {
            Source: 'fanin.test',
            DetailType: 'harness',
            Detail: JSON.stringify({ prefix: resources.prefix }),
          },
        ],
      }),
    );

    // Assess
    expect(result.FailedEntryCount).toBe(0);
    expect(result.Entries?.[0]?.EventId).toEqual(expect.any(String));
  });
});
