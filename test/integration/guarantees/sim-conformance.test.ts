import {
  CreateTableCommand,
  type CreateTableCommandInput,
  DeleteTableCommand,
  waitUntilTableExists,
} from '@aws-sdk/client-dynamodb';
import { CreateEventBusCommand, DeleteEventBusCommand, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import {
  CreateBucketCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  PutObjectCommand,
} from '@aws-sdk/client-s3';
import {
  ChangeMessageVisibilityBatchCommand,
  CreateQueueCommand,
  DeleteMessageBatchCommand,
  DeleteMessageCommand,
  DeleteQueueCommand,
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
} from '@aws-sdk/client-sqs';
import {
  BatchWriteCommand,
  DeleteCommand,
  GetCommand,
  NumberValue,
  PutCommand,
  QueryCommand,
  type QueryCommandInput,
  TransactWriteCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  clientsOver,
  DynamoDbModel,
  EventBridgeModel,
  type ModelClients,
  S3Model,
  SqsModel,
} from '../../../sim/models/index.ts';
import { aws } from '../../support/clients.ts';
import { requireEventBridge } from '../../support/eventbridge.ts';
import { uniquePrefix } from '../../support/names.ts';

/**
 * The models of the simulation (sim/models) against the emulators: the same scripted calls go to
 * DynamoDB Local, fauxqs (SQS, S3) and moto (EventBridge) and to the models, and the answers,
 * errors and limits included, must be the same once what differs by nature (ids, receipt
 * handles, timestamps, metadata, URLs) is taken out. The models run on the wall clock here and
 * with chance turned off (no duplicates, no short receives, no stale reads), so the emulator's
 * one behaviour is the model's.
 */

type Side = Pick<ModelClients, 'sqs' | 'dynamo' | 'dynamoDb' | 's3' | 'eventBridge'>;

const never = () => 0.999_999;
const models = {
  dynamodb: new DynamoDbModel({ clock: Date.now, random: never, staleProbability: 0 }),
  sqs: new SqsModel({ clock: Date.now, random: never, duplicateProbability: 0, shortReceiveProbability: 0 }),
  s3: new S3Model({ clock: Date.now, random: never }),
  eventBridge: new EventBridgeModel({ clock: Date.now, random: never }),
};
const sim: Side = clientsOver(models);
const emulator: Side = aws;

const prefix = uniquePrefix(import.meta.url);
const table = `${prefix}-t`;

/** What varies by nature between two services that behave alike. */
const VARYING = new Set([
  '$metadata',
  'MessageId',
  'ReceiptHandle',
  'SentTimestamp',
  'ApproximateFirstReceiveTimestamp',
  'SenderId',
  'SequenceNumber',
  'QueueUrl',
  'EventId',
  'ETag',
  'LastModified',
  'ConsumedCapacity',
]);

function normalise(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(normalise);
  if (value instanceof Uint8Array) return Buffer.from(value).toString('base64');
  if (value instanceof Set) return [...value].map(normalise).sort();
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value)
        .filter(([k, v]) => !VARYING.has(k) && v !== undefined && typeof v !== 'function')
        .map(([k, v]) => [k, normalise(v)]),
    );
  }
  return value;
}

/**
 * Where DynamoDB Local words an error differently from DynamoDB. The model says what DynamoDB
 * says (its wording as AWS users report it, typo included); the comparison reads the model's
 * answer in Local's words. Every other message must be the same word for word.
 */
const LOCAL_WORDING: Readonly<Record<string, string>> = {
  'One or more parameter values were invalid: Size of hashkey has exceeded the maximum size limit of2048 bytes':
    'Hash primary key values must be under 2048 bytes, and range primary key values must be under 1024 bytes',
  'One or more parameter values were invalid: Aggregated size of all range keys has exceeded the size limit of 1024 bytes':
    'Hash primary key values must be under 2048 bytes, and range primary key values must be under 1024 bytes',
  'Attempting to store more than 38 significant digits in a Number':
    'DynamoDB only supports precision up to 38 digits',
  'Query condition missed key schema element: pk': 'Query condition missed key schema element',
  'One or more parameter values were invalid: Type mismatch for Index Key dueAt Expected: N Actual: S IndexName: due':
    'One or more parameter values were invalid: Type mismatch for Index Key',
  "1 validation error detected: Value at 'requestItems' failed to satisfy constraint: Map value must satisfy constraint: [Member must have length less than or equal to 25, Member must have length greater than or equal to 1]":
    'Too many items requested for the BatchWriteItem call',
};

function inLocalWords(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(inLocalWords);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [
        k,
        k === 'message' && typeof v === 'string' ? (LOCAL_WORDING[v] ?? v) : inLocalWords(v),
      ]),
    );
  }
  return value;
}

/** A call's answer or its error, normalised. */
async function outcome(call: Promise<unknown>): Promise<unknown> {
  try {
    return { ok: normalise(await call) };
  } catch (error) {
    const e = error as Error & Record<string, unknown>;
    return normalise({
      // fauxqs prefixes some codes as the old query protocol did; the SDK names AWS's errors without it.
      error: e.name.replace(/^AWS\.SimpleQueueService\./, ''),
      message: e.message,
      ...(e.Item ? { Item: e.Item } : {}),
      ...(e.CancellationReasons ? { CancellationReasons: e.CancellationReasons } : {}),
    });
  }
}

/** The model's answers of the last {@link same}, in its own words. */
let modelled: unknown;

/** Runs `script` on the emulator, then on the model; expects the same answers; returns the emulator's. */
async function same<T>(script: (side: Side) => Promise<T>): Promise<T> {
  const real = await script(emulator);
  modelled = await script(sim);
  expect(inLocalWords(modelled)).toEqual(real);
  return real;
}

/** Runs `script` on both; returns both answers, for what the emulator does unlike AWS. */
async function both<T>(script: (side: Side) => Promise<T>): Promise<{ real: T; model: T }> {
  return { real: await script(emulator), model: await script(sim) };
}

const tableInput: CreateTableCommandInput = {
  TableName: table,
  BillingMode: 'PAY_PER_REQUEST',
  AttributeDefinitions: [
    { AttributeName: 'pk', AttributeType: 'S' },
    { AttributeName: 'sk', AttributeType: 'S' },
    { AttributeName: 'dueShard', AttributeType: 'S' },
    { AttributeName: 'dueAt', AttributeType: 'N' },
  ],
  KeySchema: [
    { AttributeName: 'pk', KeyType: 'HASH' },
    { AttributeName: 'sk', KeyType: 'RANGE' },
  ],
  GlobalSecondaryIndexes: [
    {
      IndexName: 'due',
      KeySchema: [
        { AttributeName: 'dueShard', KeyType: 'HASH' },
        { AttributeName: 'dueAt', KeyType: 'RANGE' },
      ],
      Projection: { ProjectionType: 'KEYS_ONLY' },
    },
  ],
};

describe('the DynamoDB model answers as DynamoDB Local does', () => {
  beforeAll(async () => {
    for (const side of [emulator, sim]) {
      await side.dynamoDb.send(new CreateTableCommand(tableInput));
      if (side === emulator)
        await waitUntilTableExists({ client: aws.dynamoDb, maxWaitTime: 60 }, { TableName: table });
    }
  });
  afterAll(async () => {
    await aws.dynamoDb.send(new DeleteTableCommand({ TableName: table })).catch(() => undefined);
  });

  const put = (side: Side, Item: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
    outcome(side.dynamo.send(new PutCommand({ TableName: table, Item, ...extra })));

  it('refuses a conditional put on an existing key, returning the old item when asked', async () => {
    const answers = await same(async (side) => [
      await put(side, { pk: 'cond', sk: 'H', n: 1, tags: new Set(['a']) }),
      await put(
        side,
        { pk: 'cond', sk: 'H', n: 2 },
        {
          ConditionExpression: 'attribute_not_exists(pk)',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        },
      ),
      await put(
        side,
        { pk: 'cond', sk: 'H', n: 3 },
        {
          ConditionExpression: 'n = :one OR attribute_not_exists(pk)',
          ExpressionAttributeValues: { ':one': 2 },
        },
      ),
    ]);
    expect(answers[1]).toMatchObject({ error: 'ConditionalCheckFailedException', Item: { n: { N: '1' } } });
    expect(answers[2]).toMatchObject({ error: 'ConditionalCheckFailedException' });
  });

  it('applies update expressions: if_not_exists, ADD to numbers and sets, list_append, REMOVE, DELETE', async () => {
    const key = { pk: 'upd', sk: 'H' };
    const update = (side: Side, input: Record<string, unknown>) =>
      outcome(side.dynamo.send(new UpdateCommand({ TableName: table, Key: key, ...input } as never)));
    const answers = await same(async (side) => [
      await update(side, {
        UpdateExpression:
          'SET a = if_not_exists(a, :zero), l = list_append(if_not_exists(l, :empty), :one) ADD c :two, s :set',
        ExpressionAttributeValues: {
          ':zero': 0,
          ':empty': [],
          ':one': [1],
          ':two': 2,
          ':set': new Set(['x', 'y']),
        },
        ReturnValues: 'ALL_NEW',
      }),
      await update(side, {
        UpdateExpression:
          'SET a = if_not_exists(a, :nine), l = list_append(:front, l), c = c + :half REMOVE gone DELETE s :x',
        ExpressionAttributeValues: { ':nine': 9, ':front': ['f'], ':half': 0.5, ':x': new Set(['x']) },
        ReturnValues: 'UPDATED_NEW',
      }),
      await update(side, {
        UpdateExpression: 'SET #m = :m ADD c :n',
        ExpressionAttributeNames: { '#m': 'map' },
        ExpressionAttributeValues: { ':m': { deep: { er: 'x' } }, ':n': -1 },
        ReturnValues: 'UPDATED_OLD',
      }),
      await update(side, {
        UpdateExpression: 'SET #m.deep.er = :v',
        ExpressionAttributeNames: { '#m': 'map' },
        ExpressionAttributeValues: { ':v': 'y' },
        ReturnValues: 'ALL_OLD',
      }),
      await outcome(side.dynamo.send(new GetCommand({ TableName: table, Key: key, ConsistentRead: true }))),
      // An update of an item that does not exist creates it, even with REMOVE alone.
      await outcome(
        side.dynamo.send(
          new UpdateCommand({
            TableName: table,
            Key: { pk: 'upd', sk: 'new' },
            UpdateExpression: 'REMOVE x',
            ReturnValues: 'ALL_NEW',
          }),
        ),
      ),
      await outcome(
        side.dynamo.send(
          new DeleteCommand({ TableName: table, Key: { pk: 'upd', sk: 'new' }, ReturnValues: 'ALL_OLD' }),
        ),
      ),
    ]);
    expect(answers[4]).toMatchObject({
      ok: { Item: { a: 0, c: 1.5, l: ['f', 1], s: ['y'], map: { deep: { er: 'y' } } } },
    });
    expect(answers[5]).toEqual({ ok: { Attributes: { pk: 'upd', sk: 'new' } } });
  });

  it('refuses what an update may not do: a key attribute, overlapping paths, a wrong type, unused or undefined placeholders, a reserved word', async () => {
    const key = { pk: 'bad', sk: 'H' };
    const update = (side: Side, input: Record<string, unknown>) =>
      outcome(side.dynamo.send(new UpdateCommand({ TableName: table, Key: key, ...input } as never)));
    const answers = await same(async (side) => [
      await update(side, { UpdateExpression: 'SET pk = :v', ExpressionAttributeValues: { ':v': 'x' } }),
      await update(side, {
        UpdateExpression: 'SET a = :v REMOVE a',
        ExpressionAttributeValues: { ':v': 'x' },
      }),
      await update(side, {
        UpdateExpression: 'SET a = :v',
        ExpressionAttributeValues: { ':v': 'x', ':unused': 1 },
      }),
      await update(side, { UpdateExpression: 'SET a = :missing', ExpressionAttributeValues: { ':v': 'x' } }),
      await update(side, { UpdateExpression: 'SET a = :v', ExpressionAttributeValues: { ':v': 'x' } }),
      await update(side, { UpdateExpression: 'ADD a :n', ExpressionAttributeValues: { ':n': 1 } }),
      await update(side, { UpdateExpression: 'SET a = a + :n', ExpressionAttributeValues: { ':n': 1 } }),
      await update(side, { UpdateExpression: 'SET status = :v', ExpressionAttributeValues: { ':v': 'x' } }),
    ]);
    for (const i of [0, 1, 2, 3, 5, 6, 7]) expect(answers[i]).toMatchObject({ error: 'ValidationException' });
    expect(answers[4]).toMatchObject({ ok: {} });
  });

  it('takes an item of exactly 400 KB and refuses one byte more, sized as DynamoDB sizes it', async () => {
    // pk (2 + 4) + sk (2 + 1) + name "v" (1): the rest of 409,600 bytes is the string.
    const room = 400 * 1024 - (2 + 4) - (2 + 1) - 1;
    // A map: its name, 3 bytes, then per element 1 byte, the element's name and value.
    const mapRoom = 400 * 1024 - (2 + 4) - (2 + 1) - 1 - 3 - 1 - 1;
    const answers = await same(async (side) => [
      await put(side, { pk: 'size', sk: 'a', v: 'x'.repeat(room) }),
      await put(side, { pk: 'size', sk: 'b', v: 'x'.repeat(room + 1) }),
      await put(side, { pk: 'size', sk: 'c', v: { w: 'x'.repeat(mapRoom) } }),
      await put(side, { pk: 'size', sk: 'd', v: { w: 'x'.repeat(mapRoom + 1) } }),
      await put(side, { pk: 'size', sk: 'e', v: 'x'.repeat(room - 20), n: 12_345_678_901_234 }),
    ]);
    expect(answers.map((a) => (a as { error?: string }).error)).toEqual([
      undefined,
      'ValidationException',
      undefined,
      'ValidationException',
      undefined,
    ]);
  });

  it('refuses a partition key over 2048 bytes, a sort key over 1024, an empty key string, a 39-digit number', async () => {
    const answers = await same(async (side) => [
      await put(side, { pk: 'p'.repeat(2048), sk: 's' }),
      await put(side, { pk: 'p'.repeat(2049), sk: 's' }),
      await put(side, { pk: 'k', sk: 's'.repeat(1024) }),
      await put(side, { pk: 'k', sk: 's'.repeat(1025) }),
      await put(side, { pk: '', sk: 's' }),
      await put(side, { pk: 'k', sk: 'n', n: NumberValue.from('1.23456789012345678901234567890123456789') }),
      await put(side, { pk: 'k', sk: 'n', n: NumberValue.from('1.2345678901234567890123456789012345678') }),
    ]);
    expect(answers.map((a) => (a as { error?: string }).error)).toEqual([
      undefined,
      'ValidationException',
      undefined,
      'ValidationException',
      'ValidationException',
      'ValidationException',
      undefined,
    ]);
    expect((modelled as { message?: string }[])[1]?.message).toBe(
      'One or more parameter values were invalid: Size of hashkey has exceeded the maximum size limit of2048 bytes',
    );
  });

  it('cancels a whole transaction when one condition fails, with a reason per item', async () => {
    const answers = await same(async (side) => [
      await put(side, { pk: 'tx', sk: 'held', v: 1 }),
      await outcome(
        side.dynamo.send(
          new TransactWriteCommand({
            TransactItems: [
              { Put: { TableName: table, Item: { pk: 'tx', sk: 'new', v: 2 } } },
              {
                Update: {
                  TableName: table,
                  Key: { pk: 'tx', sk: 'held' },
                  UpdateExpression: 'SET v = :v',
                  ConditionExpression: 'attribute_not_exists(pk)',
                  ExpressionAttributeValues: { ':v': 3 },
                  ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
                },
              },
              {
                ConditionCheck: {
                  TableName: table,
                  Key: { pk: 'tx', sk: 'other' },
                  ConditionExpression: 'attribute_not_exists(pk)',
                },
              },
            ],
          }),
        ),
      ),
      await outcome(
        side.dynamo.send(
          new GetCommand({ TableName: table, Key: { pk: 'tx', sk: 'new' }, ConsistentRead: true }),
        ),
      ),
      await outcome(
        side.dynamo.send(
          new TransactWriteCommand({
            TransactItems: [
              { Put: { TableName: table, Item: { pk: 'tx', sk: 'twice' } } },
              { Delete: { TableName: table, Key: { pk: 'tx', sk: 'twice' } } },
            ],
          }),
        ),
      ),
    ]);
    expect(answers[1]).toMatchObject({
      error: 'TransactionCanceledException',
      CancellationReasons: [
        { Code: 'None' },
        { Code: 'ConditionalCheckFailed', Item: { v: { N: '1' } } },
        { Code: 'None' },
      ],
    });
    expect(answers[2]).toEqual({ ok: {} });
    expect(answers[3]).toMatchObject({ error: 'ValidationException' });
  });

  it('pages a query by Limit and LastEvaluatedKey, forwards and backwards, with begins_with, BETWEEN, filters and COUNT', async () => {
    const pages = async (side: Side, input: Omit<QueryCommandInput, 'TableName'>) => {
      const out: unknown[] = [];
      let start: Record<string, unknown> | undefined;
      do {
        const page = await side.dynamo.send(
          new QueryCommand({ TableName: table, ...input, ExclusiveStartKey: start }),
        );
        out.push(normalise(page));
        start = page.LastEvaluatedKey;
      } while (start && out.length < 10);
      return out;
    };
    const answers = await same(async (side) => {
      for (let i = 0; i < 5; i += 1) await put(side, { pk: 'q', sk: `R#${i}`, odd: i % 2 === 1, i });
      await put(side, { pk: 'q', sk: 'S' });
      const values = { ':pk': 'q', ':r': 'R#' };
      return [
        await pages(side, {
          KeyConditionExpression: 'pk = :pk AND begins_with(sk, :r)',
          ExpressionAttributeValues: values,
          Limit: 2,
          ConsistentRead: true,
        }),
        await pages(side, {
          KeyConditionExpression: 'pk = :pk AND sk BETWEEN :a AND :b',
          ExpressionAttributeValues: { ':pk': 'q', ':a': 'R#1', ':b': 'R#3' },
          ScanIndexForward: false,
          Limit: 2,
        }),
        await pages(side, {
          KeyConditionExpression: 'pk = :pk AND sk > :r',
          FilterExpression: 'odd = :t',
          ProjectionExpression: 'i',
          ExpressionAttributeValues: { ...values, ':t': true },
          Limit: 3,
        }),
        await pages(side, {
          KeyConditionExpression: 'pk = :pk',
          ExpressionAttributeValues: { ':pk': 'q' },
          Select: 'COUNT',
        }),
        // A page that ends exactly at the last item still names a LastEvaluatedKey: one more, empty page.
        await pages(side, {
          KeyConditionExpression: 'pk = :pk AND begins_with(sk, :r)',
          ExpressionAttributeValues: values,
          Limit: 5,
          ConsistentRead: true,
        }),
        await outcome(
          side.dynamo.send(
            new QueryCommand({
              TableName: table,
              KeyConditionExpression: 'sk = :r',
              ExpressionAttributeValues: { ':r': 'x' },
            }),
          ),
        ),
        await outcome(
          side.dynamo.send(
            new QueryCommand({
              TableName: table,
              KeyConditionExpression: 'pk = :pk',
              FilterExpression: 'sk = :r',
              ExpressionAttributeValues: values,
            }),
          ),
        ),
      ];
    });
    expect((answers[0] as unknown[]).length).toBe(3);
    expect(answers[3]).toEqual([{ Count: 6, ScannedCount: 6 }]);
    expect(answers[4]).toMatchObject([{ Count: 5 }, { Count: 0, Items: [] }]);
  });

  it('holds in a sparse index only the items with its key attributes, keys only', async () => {
    const answers = await same(async (side) => {
      await put(side, { pk: 'g1', sk: 'H', dueShard: 'shard-x', dueAt: 20, body: 'not projected' });
      await put(side, { pk: 'g2', sk: 'H', dueShard: 'shard-x', dueAt: 10 });
      await put(side, { pk: 'g3', sk: 'H', dueShard: 'shard-x' });
      await put(side, { pk: 'g4', sk: 'H', dueAt: 5 });
      return [
        await outcome(
          side.dynamo.send(
            new QueryCommand({
              TableName: table,
              IndexName: 'due',
              KeyConditionExpression: 'dueShard = :s AND dueAt <= :now',
              ExpressionAttributeValues: { ':s': 'shard-x', ':now': 100 },
            }),
          ),
        ),
        await put(side, { pk: 'g5', sk: 'H', dueShard: 'shard-x', dueAt: 'soon' }),
        await outcome(
          side.dynamo.send(
            new QueryCommand({
              TableName: table,
              IndexName: 'due',
              KeyConditionExpression: 'dueShard = :s',
              ExpressionAttributeValues: { ':s': 'shard-x' },
              ConsistentRead: true,
            }),
          ),
        ),
      ];
    });
    expect(answers[0]).toMatchObject({
      ok: {
        Count: 2,
        Items: [
          { pk: 'g2', sk: 'H', dueShard: 'shard-x', dueAt: 10 },
          { pk: 'g1', sk: 'H', dueShard: 'shard-x', dueAt: 20 },
        ],
      },
    });
    expect(answers[1]).toMatchObject({ error: 'ValidationException' });
    expect(answers[2]).toMatchObject({ error: 'ValidationException' });
  });

  it('refuses a BatchWrite of more than 25 requests', async () => {
    const requests = (n: number) =>
      Array.from({ length: n }, (_, i) => ({ PutRequest: { Item: { pk: 'bw', sk: String(i) } } }));
    const answers = await same(async (side) => [
      await outcome(side.dynamo.send(new BatchWriteCommand({ RequestItems: { [table]: requests(25) } }))),
      await outcome(side.dynamo.send(new BatchWriteCommand({ RequestItems: { [table]: requests(26) } }))),
    ]);
    expect(answers[0]).toEqual({ ok: { UnprocessedItems: {} } });
    expect(answers[1]).toMatchObject({ error: 'ValidationException' });
  });
});

describe('the SQS model answers as fauxqs does', () => {
  const names: string[] = [];
  const queue = async (side: Side, suffix: string, Attributes: Record<string, string> = {}) => {
    const name = `${prefix}-${suffix}`;
    if (side === emulator) names.push(name);
    const { QueueUrl } = await side.sqs.send(new CreateQueueCommand({ QueueName: name, Attributes }));
    return QueueUrl as string;
  };
  afterAll(async () => {
    for (const QueueName of names) {
      const url = await aws.sqs.send(new GetQueueUrlCommand({ QueueName })).catch(() => undefined);
      if (url?.QueueUrl)
        await aws.sqs.send(new DeleteQueueCommand({ QueueUrl: url.QueueUrl })).catch(() => undefined);
    }
  });
  const receive = (side: Side, QueueUrl: string, extra: Record<string, unknown> = {}) =>
    side.sqs.send(
      new ReceiveMessageCommand({
        QueueUrl,
        MaxNumberOfMessages: 10,
        MessageAttributeNames: ['All'],
        MessageSystemAttributeNames: ['ApproximateReceiveCount', 'MessageGroupId'],
        ...extra,
      }),
    );
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  it('hides a received message for its visibility timeout, then delivers it again with a higher receive count', async () => {
    const answers = await same(async (side) => {
      const url = await queue(side, 'vis', { VisibilityTimeout: '1' });
      const sent = normalise(
        await side.sqs.send(
          new SendMessageCommand({
            QueueUrl: url,
            MessageBody: 'once',
            MessageAttributes: { k: { DataType: 'String', StringValue: 'v' } },
          }),
        ),
      );
      const first = await receive(side, url);
      const hidden = await receive(side, url);
      await sleep(1100);
      const again = await receive(side, url);
      const handle = again.Messages?.[0]?.ReceiptHandle;
      const changed = first.Messages?.[0]?.ReceiptHandle !== handle;
      await side.sqs.send(new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: handle }));
      await sleep(1100);
      return [
        sent,
        normalise(first),
        normalise(hidden),
        normalise(again),
        changed,
        normalise(await receive(side, url)),
      ];
    });
    expect(answers[3]).toMatchObject({
      Messages: [{ Body: 'once', Attributes: { ApproximateReceiveCount: '2' } }],
    });
    expect(answers[4]).toBe(true);
    expect(answers[5]).toEqual({});
  });

  it("takes a message of its queue's MaximumMessageSize counting its attributes, refuses one byte more, alone or in a batch", async () => {
    const attributes = { name: { DataType: 'String', StringValue: 'value' } };
    const room = 262_144 - 'name'.length - 'String'.length - 'value'.length;
    const answers = await same(async (side) => {
      const url = await queue(side, 'size', { MaximumMessageSize: '262144' });
      const send = (body: string) =>
        outcome(
          side.sqs.send(
            new SendMessageCommand({ QueueUrl: url, MessageBody: body, MessageAttributes: attributes }),
          ),
        );
      const sendBatch = (bodies: string[]) =>
        outcome(
          side.sqs.send(
            new SendMessageBatchCommand({
              QueueUrl: url,
              Entries: bodies.map((MessageBody, i) => ({ Id: `e${i}`, MessageBody })),
            }),
          ),
        );
      return [
        await send('x'.repeat(room)),
        await send('x'.repeat(room + 1)),
        await sendBatch(['small', 'x'.repeat(262_145)]),
        await sendBatch(Array.from({ length: 5 }, () => 'x'.repeat(250_000))),
      ];
    });
    expect(answers[0]).toMatchObject({ ok: {} });
    expect(answers[1]).toMatchObject({ error: 'InvalidParameterValue' });
    expect(answers[2]).toMatchObject({
      ok: { Successful: [{ Id: 'e0' }], Failed: [{ Id: 'e1', Code: 'InvalidParameterValue' }] },
    });
    // Five entries under the queue's limit, 1.25 MB in all: over SQS's 1 MiB for a batch.
    expect(answers[3]).toMatchObject({ error: 'BatchRequestTooLong' });
  });

  it('takes up to ten message attributes with custom types, as fauxqs does', async () => {
    const answers = await same(async (side) => {
      const url = await queue(side, 'attrs-ok');
      const send = (
        MessageAttributes: Record<
          string,
          { DataType: string; StringValue?: string; BinaryValue?: Uint8Array }
        >,
      ) =>
        outcome(
          side.sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'b', MessageAttributes })),
        );
      return [
        await send(
          Object.fromEntries(
            Array.from({ length: 10 }, (_, i) => [`a${i}`, { DataType: 'String', StringValue: 'v' }]),
          ),
        ),
        await send({
          custom: { DataType: 'Number.int', StringValue: '12' },
          bytes: { DataType: 'Binary', BinaryValue: new Uint8Array([1, 2]) },
        }),
      ];
    });
    // The digests of the attributes agree: SQS's MD5 of names, types and values.
    expect(answers).toMatchObject([{ ok: { MD5OfMessageAttributes: expect.any(String) } }, { ok: {} }]);
  });

  it('refuses the message attributes SQS documents as invalid, which fauxqs accepts', async () => {
    const text = (StringValue: string) => ({ DataType: 'String', StringValue });
    const invalid = [
      Object.fromEntries(Array.from({ length: 11 }, (_, i) => [`a${i}`, text('v')])),
      { 'AWS.reserved': text('v') },
      { 'amazon.reserved': text('v') },
      { 'two..dots': text('v') },
      { '.leading': text('v') },
      { empty: text('') },
      { typed: { DataType: 'Text', StringValue: 'v' } },
      { number: { DataType: 'Number', StringValue: 'twelve' } },
    ];
    const { real, model } = await both(async (side) => {
      const url = await queue(side, 'attrs-bad');
      const answers: unknown[] = [];
      for (const MessageAttributes of invalid) {
        answers.push(
          await outcome(
            side.sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'b', MessageAttributes })),
          ),
        );
      }
      return answers;
    });
    // fauxqs 1.9 does not check message attributes; SQS's developer guide says each of these is refused.
    expect(real.filter((a) => (a as { ok?: unknown }).ok !== undefined)).toHaveLength(invalid.length);
    expect(model.map((a) => (a as { error?: string }).error)).toEqual(
      invalid.map(() => 'InvalidParameterValue'),
    );
    expect(model[0]).toMatchObject({
      message: 'Number of message attributes [11] exceeds the allowed maximum [10].',
    });
  });

  it('drops a FIFO message whose deduplication id was seen, keeps one group in flight at a time, in order', async () => {
    const answers = await same(async (side) => {
      const url = await queue(side, 'dedup.fifo', { FifoQueue: 'true', VisibilityTimeout: '30' });
      const send = (body: string, group: string, dedup?: string) =>
        outcome(
          side.sqs.send(
            new SendMessageCommand({
              QueueUrl: url,
              MessageBody: body,
              MessageGroupId: group,
              ...(dedup ? { MessageDeduplicationId: dedup } : {}),
            }),
          ),
        );
      const sends = [
        await send('1', 'g', 'd1'),
        await send('1 again', 'g', 'd1'),
        await send('2', 'g', 'd2'),
        await send('no id', 'g'),
      ];
      const first = await receive(side, url, { MaxNumberOfMessages: 1 });
      const blocked = await receive(side, url);
      return [sends, normalise(first), normalise(blocked)];
    });
    expect(answers[1]).toMatchObject({ Messages: [{ Body: '1' }] });
    expect(answers[2]).toEqual({});
  });

  it('moves a message to the dead-letter queue after maxReceiveCount receives', async () => {
    const answers = await same(async (side) => {
      const dlq = await queue(side, 'dead');
      const arn = (
        await side.sqs.send(new GetQueueAttributesCommand({ QueueUrl: dlq, AttributeNames: ['QueueArn'] }))
      ).Attributes?.QueueArn;
      const url = await queue(side, 'live', {
        VisibilityTimeout: '1',
        RedrivePolicy: JSON.stringify({ deadLetterTargetArn: arn, maxReceiveCount: 1 }),
      });
      await side.sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'poison' }));
      const first = await receive(side, url);
      await sleep(1100);
      const second = await receive(side, url);
      const dead = await receive(side, dlq);
      return [normalise(first), normalise(second), normalise(dead)];
    });
    expect(answers[1]).toEqual({});
    expect(answers[2]).toMatchObject({ Messages: [{ Body: 'poison' }] });
  });

  it('delivers a delayed message only after its delay', async () => {
    const answers = await same(async (side) => {
      const url = await queue(side, 'delay');
      await side.sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'later', DelaySeconds: 1 }));
      const early = await receive(side, url);
      await sleep(1100);
      return [normalise(early), normalise(await receive(side, url))];
    });
    expect(answers[0]).toEqual({});
    expect(answers[1]).toMatchObject({ Messages: [{ Body: 'later' }] });
  });

  it('changes visibility and deletes in batches entry by entry, and counts visible and in-flight messages', async () => {
    const answers = await same(async (side) => {
      const url = await queue(side, 'batch-ops', { VisibilityTimeout: '30' });
      await side.sqs.send(
        new SendMessageBatchCommand({
          QueueUrl: url,
          Entries: ['a', 'b', 'c'].map((b) => ({ Id: b, MessageBody: b })),
        }),
      );
      const held = (await receive(side, url)).Messages ?? [];
      const handleOf = (body: string) => held.find((m) => m.Body === body)?.ReceiptHandle;
      const counts = async () =>
        normalise(
          await side.sqs.send(
            new GetQueueAttributesCommand({
              QueueUrl: url,
              AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
            }),
          ),
        );
      const inFlight = await counts();
      const changed = await outcome(
        side.sqs.send(
          new ChangeMessageVisibilityBatchCommand({
            QueueUrl: url,
            Entries: [{ Id: 'a', ReceiptHandle: handleOf('a'), VisibilityTimeout: 0 }],
          }),
        ),
      );
      const afterChange = await counts();
      const deleted = await outcome(
        side.sqs.send(
          new DeleteMessageBatchCommand({
            QueueUrl: url,
            Entries: [
              { Id: 'b', ReceiptHandle: handleOf('b') },
              { Id: 'c', ReceiptHandle: handleOf('c') },
            ],
          }),
        ),
      );
      const again = normalise(await receive(side, url));
      return [held.length, inFlight, changed, afterChange, deleted, again, await counts()];
    });
    expect(answers[0]).toBe(3);
    expect(answers[1]).toEqual({
      Attributes: { ApproximateNumberOfMessages: '0', ApproximateNumberOfMessagesNotVisible: '3' },
    });
    expect(answers[3]).toEqual({
      Attributes: { ApproximateNumberOfMessages: '1', ApproximateNumberOfMessagesNotVisible: '2' },
    });
    expect(answers[5]).toMatchObject({
      Messages: [{ Body: 'a', Attributes: { ApproximateReceiveCount: '2' } }],
    });
  });

  it('says a queue that does not exist does not exist', async () => {
    const answers = await same(async (side) => [
      await outcome(side.sqs.send(new GetQueueUrlCommand({ QueueName: `${prefix}-none` }))),
    ]);
    expect(answers[0]).toMatchObject({ error: 'QueueDoesNotExist' });
  });
});

describe('the S3 model answers as fauxqs does', () => {
  const bucket = `${prefix}-b`.slice(0, 63);

  it('stores and returns an object, and says NoSuchKey for a missing one', async () => {
    const answers = await same(async (side) => {
      const s3 = side.s3;
      if (!s3) throw new Error('no S3 client');
      await s3.send(new CreateBucketCommand({ Bucket: bucket }));
      await s3.send(
        new PutObjectCommand({
          Bucket: bucket,
          Key: 'incoming/a',
          Body: 'payload é',
          ContentType: 'application/json',
        }),
      );
      const got = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: 'incoming/a' }));
      const body = await got.Body?.transformToString();
      return [
        body,
        got.ContentLength,
        got.ContentType,
        await outcome(s3.send(new GetObjectCommand({ Bucket: bucket, Key: 'incoming/none' }))),
        await outcome(s3.send(new HeadObjectCommand({ Bucket: bucket, Key: 'incoming/none' }))),
        await outcome(s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: 'incoming/a' }))),
        await outcome(s3.send(new GetObjectCommand({ Bucket: bucket, Key: 'incoming/a' }))),
      ];
    });
    expect(answers[0]).toBe('payload é');
    expect(answers[1]).toBe(Buffer.byteLength('payload é'));
    expect(answers[3]).toMatchObject({ error: 'NoSuchKey' });
  });
});

describe('the EventBridge model answers as moto does', () => {
  const bus = `${prefix}-bus`;
  afterAll(async () => {
    await aws.eventBridge.send(new DeleteEventBusCommand({ Name: bus })).catch(() => undefined);
  });

  it('fails the bad entries of a PutEvents one by one and refuses more than ten', async (context) => {
    if (!(await requireEventBridge(context))) return;
    const entry = (detail?: string) => ({
      EventBusName: bus,
      Source: 'fanin',
      DetailType: 'completed',
      ...(detail !== undefined ? { Detail: detail } : {}),
    });
    const answers = await same(async (side) => {
      const eb = side.eventBridge;
      if (!eb) throw new Error('no EventBridge client');
      await eb.send(new CreateEventBusCommand({ Name: bus }));
      return [
        await outcome(
          eb.send(new PutEventsCommand({ Entries: [entry('{"ok":true}'), entry(), entry('not json')] })),
        ),
        await outcome(
          eb.send(new PutEventsCommand({ Entries: Array.from({ length: 11 }, () => entry('{}')) })),
        ),
      ];
    });
    expect(answers[0]).toMatchObject({ ok: { FailedEntryCount: 2 } });
    expect(answers[1]).toMatchObject({ error: 'ValidationException' });
  });
});
