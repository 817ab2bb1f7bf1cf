import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { ReceiveMessageCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { S3ClaimCheck } from '../../../shared/adapters/s3-claim-check.ts';
import { queryAll, unlessConditionFails } from '../../../shared/adapters/state-table.ts';
import { itemSize } from '../../../sim/models/dynamodb/size.ts';
import { clientsOver, DynamoDbModel, isWrite, S3Model, SqsModel } from '../../../sim/models/index.ts';

/**
 * What the emulators cannot show deterministically about the simulation's models: reads that
 * are stale, but never more than `staleMs`; TTL that deletes only after expiry, and at its own
 * moment; duplicate deliveries and redeliveries; redrive after maxReceiveCount; delays; and the
 * clients over the models, which the adapters' own checks accept.
 */

const T0 = 1_700_000_000_000;
const TABLE = 'state';

/** A clock the test moves, and a random source that replays `draws` (then repeats the last). */
function world(draws: number[] = [0.5]) {
  let now = T0;
  let i = 0;
  return {
    clock: () => now,
    random: () => draws[Math.min(i++, draws.length - 1)] as number,
    advance: (ms: number) => {
      now += ms;
    },
    replay: (next: number[]) => {
      draws = next;
      i = 0;
    },
  };
}

function dynamo(w: ReturnType<typeof world>, options: { staleMs?: number; staleProbability?: number } = {}) {
  const model = new DynamoDbModel({ clock: w.clock, random: w.random, ...options });
  model.createTable({
    name: TABLE,
    partitionKey: { name: 'pk', type: 'S' },
    sortKey: { name: 'sk', type: 'S' },
    ttlAttribute: 'expiresAt',
    indexes: [
      {
        name: 'due',
        partitionKey: { name: 'dueShard', type: 'S' },
        sortKey: { name: 'dueAt', type: 'N' },
        projection: 'KEYS_ONLY',
      },
    ],
  });
  return model;
}

const get = (model: DynamoDbModel, consistent: boolean) =>
  model.handle('GetCommand', { TableName: TABLE, Key: { pk: 'a', sk: 'H' }, ConsistentRead: consistent }).Item
    ?.v;

describe('the DynamoDB model', () => {
  it('returns a version up to staleMs old to an eventually consistent read, never to a consistent one', () => {
    const w = world();
    const model = dynamo(w, { staleMs: 1000, staleProbability: 1 });
    model.handle('PutCommand', { TableName: TABLE, Item: { pk: 'a', sk: 'H', v: 1 } });
    w.advance(600);
    model.handle('PutCommand', { TableName: TABLE, Item: { pk: 'a', sk: 'H', v: 2 } });
    w.advance(100);
    // Stale by 0.65 × 1000 ms: the read sees the world 650 ms ago, when v was 1.
    w.replay([0, 0.65]);
    expect(get(model, false)).toBe(1);
    w.replay([0, 0.65]);
    expect(get(model, true)).toBe(2);
    // 900 ms ago the item was not written yet: an eventually consistent read may miss a new item.
    w.replay([0, 0.9]);
    expect(get(model, false)).toBeUndefined();
    // 50 ms ago v was already 2.
    w.replay([0, 0.05]);
    expect(get(model, false)).toBe(2);
  });

  it('never returns a version older than staleMs, nor an item deleted more than staleMs ago', () => {
    const w = world();
    const model = dynamo(w, { staleMs: 1000, staleProbability: 1 });
    model.handle('PutCommand', { TableName: TABLE, Item: { pk: 'a', sk: 'H', v: 1 } });
    w.advance(100);
    model.handle('PutCommand', { TableName: TABLE, Item: { pk: 'a', sk: 'H', v: 2 } });
    w.advance(1100);
    w.replay([0, 0.999]);
    expect(get(model, false)).toBe(2);
    model.handle('DeleteCommand', { TableName: TABLE, Key: { pk: 'a', sk: 'H' } });
    w.advance(500);
    w.replay([0, 0.9]);
    expect(get(model, false)).toBe(2);
    w.advance(600);
    w.replay([0, 0.999]);
    expect(get(model, false)).toBeUndefined();
  });

  it('may show a stale index to a query on a GSI, which cannot read consistently', () => {
    const w = world();
    const model = dynamo(w, { staleMs: 1000, staleProbability: 1 });
    model.handle('PutCommand', { TableName: TABLE, Item: { pk: 'a', sk: 'H', dueShard: 's', dueAt: 5 } });
    w.advance(500);
    model.handle('UpdateCommand', {
      TableName: TABLE,
      Key: { pk: 'a', sk: 'H' },
      UpdateExpression: 'REMOVE dueShard',
    });
    const due = () =>
      model.handle('QueryCommand', {
        TableName: TABLE,
        IndexName: 'due',
        KeyConditionExpression: 'dueShard = :s',
        ExpressionAttributeValues: { ':s': 's' },
      }).Count;
    w.replay([0, 0.3]);
    expect(due()).toBe(1);
    w.replay([0.99]);
    expect(due()).toBe(0);
  });

  it('deletes by TTL only items whose expiry has passed, each at its own moment, and reads them until then', () => {
    const w = world([0.99]);
    const model = dynamo(w);
    const seconds = T0 / 1000;
    model.handle('PutCommand', { TableName: TABLE, Item: { pk: 'a', sk: 'H', expiresAt: seconds + 10 } });
    model.handle('PutCommand', { TableName: TABLE, Item: { pk: 'b', sk: 'H', expiresAt: seconds - 1 } });
    model.handle('PutCommand', { TableName: TABLE, Item: { pk: 'c', sk: 'H' } });
    // Expired, but this sweep's draw spares it: still read, as on AWS.
    expect(model.expireSome()).toBe(0);
    expect(
      model.handle('GetCommand', { TableName: TABLE, Key: { pk: 'b', sk: 'H' }, ConsistentRead: true }).Item,
    ).toBeDefined();
    w.replay([0.1]);
    expect(model.expireSome()).toBe(1);
    expect(
      model
        .items(TABLE)
        .map((i) => i.pk)
        .sort(),
    ).toEqual(['a', 'c']);
    expect(model.expireAll(T0 + 9_000)).toBe(0);
    expect(model.expireAll(T0 + 10_000)).toBe(1);
    expect(model.items(TABLE).map((i) => i.pk)).toEqual(['c']);
  });

  it('sizes numbers, maps and lists as DynamoDB does', () => {
    // name 1 + number of 5 significant digits (ceil(5 / 2) + 1 = 4); name 1 + map 3 + (1 + 1 + S 2); name 1 + list 3 + (1 + BOOL 1).
    expect(itemSize({ n: { N: '12300.45' }, m: { M: { k: { S: 'ab' } } }, l: { L: [{ BOOL: true }] } })).toBe(
      1 + 5 + 1 + 3 + 1 + 1 + 2 + 1 + 3 + 1 + 1,
    );
  });

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
});

function sqs(
  w: ReturnType<typeof world>,
  options: { duplicateProbability?: number; staleDeleteIgnoredProbability?: number } = {},
) {
  return new SqsModel({
    clock: w.clock,
    random: w.random,
    duplicateProbability: 0,
    shortReceiveProbability: 0,
    ...options,
  });
}

const receive = (model: SqsModel, QueueUrl: string, extra: Record<string, unknown> = {}) =>
  (model.handle('ReceiveMessageCommand', {
    QueueUrl,
    MaxNumberOfMessages: 10,
    MessageSystemAttributeNames: ['All'],
    ...extra,
  }).Messages ?? []) as { Body: string; ReceiptHandle: string; Attributes: Record<string, string> }[];

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

describe('the S3 model', () => {
  it('gives a body the claim check reads as a stream, once, and expires objects only after their lifecycle days', async () => {
    const w = world([0.99]);
    const s3 = new S3Model({ ...w, expireAfterDays: { '': 2 } });
    s3.handle('CreateBucketCommand', { Bucket: 'b' });
    const clients = clientsOver({ dynamodb: new DynamoDbModel(w), sqs: new SqsModel(w), s3 });
    const claimCheck = new S3ClaimCheck({ s3: clients.s3 as NonNullable<typeof clients.s3>, bucket: 'b' });
    const payload = 'é'.repeat(100_000);
    const pointer = await claimCheck.put('incoming/p', payload);
    const body = JSON.stringify(['software.amazon.payloadoffloading.PayloadS3Pointer', pointer]);
    expect(await claimCheck.decode(body, { ExtendedPayloadSize: String(Buffer.byteLength(payload)) })).toBe(
      payload,
    );
    const { Body } = s3.handle('GetObjectCommand', { Bucket: 'b', Key: 'incoming/p' });
    await Body.transformToString();
    await expect(Body.transformToString()).rejects.toThrow('already been transformed');
    // Due at the midnight UTC after two days; a sweep may spare it, a full one deletes it.
    const day = 24 * 3600 * 1000;
    const due = Math.ceil((T0 + 2 * day) / day) * day;
    expect(s3.expireAll(due - 1)).toBe(0);
    expect(s3.expireSome(due)).toBe(0);
    expect(s3.expireAll(due)).toBe(1);
    expect(s3.keys('b')).toEqual([]);
  });
});
