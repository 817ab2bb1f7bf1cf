import { GetObjectCommand } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { describeTopology, QueueRole } from '../../../shared/topology/topology.ts';
import { Random } from '../../../sim/random.ts';
import { createModels, eventRecordOf, modelClients, Storage } from '../../../sim/storage.ts';

/**
 * The world's own access to the models: provisioning the topology (every queue with its DLQ and
 * redrive, the table, the bucket with its lifecycle, the bus), the producers' sends (by claim
 * check when asked) and the pollers' receives past ten messages, the leftovers and dead letters
 * the invariants read, the next due item, and the SQS event record a handler is given. The seeds
 * run all of it; this pins each piece.
 */

const START = Date.UTC(2026, 0, 1);
const DAY = 24 * 3600 * 1000;

function world(options: { bucket?: boolean; bus?: boolean } = {}) {
  let now = START;
  const topology = describeTopology({
    prefix: 'sim',
    definitions: [
      { name: 'd', fanOut: { type: 'none' }, completion: { strategy: 'all' }, timeoutSeconds: 60 },
    ],
  });
  const models = createModels(() => now, new Random(1), topology);
  const storage = new Storage(models, topology, options.bucket ?? true, options.bus ?? true, ['bank']);
  return { models, topology, storage, advance: (ms: number) => (now += ms), now: () => now };
}

describe('Storage', () => {
  it('creates every queue of the topology with its dead-letter queue and redrive, and the target queues', () => {
    const { models, topology, storage } = world();
    for (const [role, spec] of Object.entries(topology.queues)) {
      const url = storage.queueUrls[role as keyof typeof storage.queueUrls];
      expect(url.endsWith(`/${spec.name}`)).toBe(true);
      const attributes = models.sqs.handle('GetQueueAttributesCommand', {
        QueueUrl: url,
        AttributeNames: ['All'],
      }).Attributes as Record<string, string>;
      expect(attributes.VisibilityTimeout).toBe(String(spec.visibilityTimeoutSeconds));
      expect(JSON.parse(attributes.RedrivePolicy as string)).toEqual({
        deadLetterTargetArn: `arn:aws:sqs:us-east-1:000000000000:${spec.dlqName}`,
        maxReceiveCount: spec.maxReceiveCount,
      });
    }
    expect(storage.replyQueueUrls).toHaveLength(topology.replyPartitions.length);
    expect(storage.urlOf('bank').endsWith('/bank')).toBe(true);
    expect(() => storage.urlOf('nope')).toThrow('no queue nope');
  });

  it('sends a body by claim check into the bucket, and resolves the pointer back to it', () => {
    const { models, topology, storage } = world();
    const url = storage.queueUrls[QueueRole.INGRESS];
    const body = JSON.stringify({ big: 'é'.repeat(10) });
    storage.send(url, body, { kind: 'request' }, true);
    const [message] = models.sqs.messages(url);
    expect(message?.body).not.toBe(body);
    const [tag, pointer] = JSON.parse(message?.body as string);
    expect(tag).toBe('software.amazon.payloadoffloading.PayloadS3Pointer');
    expect(pointer.s3BucketName).toBe(topology.bucketName);
    expect(message?.attributes.ExtendedPayloadSize?.StringValue).toBe(String(Buffer.byteLength(body)));
    expect(message?.attributes.kind?.StringValue).toBe('request');
    expect(storage.resolve(message?.body as string, message?.attributes)).toBe(body);
    expect(storage.resolve('plain', undefined)).toBe('plain');
  });

  it('sends the body itself when there is no bucket, even when asked for a claim check', () => {
    const { models, storage } = world({ bucket: false });
    const url = storage.queueUrls[QueueRole.INGRESS];
    storage.send(url, 'inline', {}, true);
    expect(models.sqs.messages(url).map((m) => m.body)).toEqual(['inline']);
  });

  it('receives past ten messages in one poll, with their receive counts, attributes and sent times', () => {
    const { storage, now } = world();
    const url = storage.urlOf('bank');
    for (let i = 0; i < 25; i += 1) storage.send(url, `m${i}`, { n: String(i) }, false);
    const got = storage.receive(url, 25, undefined);
    expect(got.map((m) => m.Body).sort()).toEqual(Array.from({ length: 25 }, (_, i) => `m${i}`).sort());
    expect(got.every((m) => m.ReceiveCount === 1 && m.SentAt === now())).toBe(true);
    expect(got.find((m) => m.Body === 'm3')?.MessageAttributes).toEqual({ n: '3' });
    expect(storage.depth(url)).toBe(25);
    for (const m of got) storage.remove(url, m.ReceiptHandle);
    expect(storage.depth(url)).toBe(0);
  });

  it('lists the input queues that still hold messages, and the messages in dead-letter queues', () => {
    const { storage, topology, advance } = world();
    const ingress = storage.queueUrls[QueueRole.INGRESS];
    storage.send(ingress, 'left', { 'fanin-aggregate-id': 'a1' }, false);
    expect(storage.leftover()).toEqual([{ queue: topology.queues[QueueRole.INGRESS].name, count: 1 }]);
    const spec = topology.queues[QueueRole.INGRESS];
    for (let i = 0; i <= spec.maxReceiveCount; i += 1) {
      storage.receive(ingress, 10, spec);
      advance(spec.visibilityTimeoutSeconds * 1000);
    }
    expect(storage.leftover()).toEqual([]);
    expect(storage.deadLetters()).toEqual([
      { queue: spec.dlqName, body: 'left', attributes: { 'fanin-aggregate-id': 'a1' } },
    ]);
  });

  it('finds the earliest item of the due index and its aggregate', () => {
    const { models, topology, storage } = world();
    expect(storage.nextDue()).toBeUndefined();
    const put = (pk: string, dueAt: number) =>
      models.dynamodb.handle('PutCommand', {
        TableName: topology.tableName,
        Item: { pk, sk: 'H', dueShard: '0', dueAt },
      });
    put('A#late', 2000);
    put('A#soon', 1000);
    models.dynamodb.handle('PutCommand', {
      TableName: topology.tableName,
      Item: { pk: 'A#none', sk: 'H', dueAt: 10 },
    });
    expect(storage.nextDue()).toEqual({ dueAt: 1000, aggregateId: 'soon' });
  });
});

describe('createModels', () => {
  it('gives the bucket the lifecycle the stack sets: the longest state life in whole days, plus a day', async () => {
    const { models, topology, advance } = world();
    const days = Math.ceil(topology.stateLifeSeconds / (24 * 3600)) + 1;
    models.s3.handle('PutObjectCommand', { Bucket: topology.bucketName, Key: 'incoming/x', Body: 'x' });
    // S3 expires at the midnight UTC after creation plus the days; START is a midnight.
    advance(days * DAY - 1);
    expect(models.s3.expireAll()).toBe(0);
    advance(1);
    expect(models.s3.expireAll()).toBe(1);
  });
});

describe('modelClients', () => {
  it('gives an S3 client only with a bucket, whose GetObject body is also a stream', async () => {
    const { models, topology } = world();
    const pass = (_s: string, _c: string, _i: unknown, call: () => unknown) => call();
    expect(modelClients(models, pass, false).s3).toBeUndefined();
    const clients = modelClients(models, pass, true);
    models.s3.handle('PutObjectCommand', { Bucket: topology.bucketName, Key: 'k', Body: 'streamed' });
    const { Body } = await (clients.s3 as NonNullable<typeof clients.s3>).send(
      new GetObjectCommand({ Bucket: topology.bucketName, Key: 'k' }),
    );
    const chunks: Uint8Array[] = [];
    for await (const chunk of Body as AsyncIterable<Uint8Array>) chunks.push(chunk);
    expect(Buffer.concat(chunks).toString()).toBe('streamed');
  });
});

describe('eventRecordOf', () => {
  it('hands a received message over as the SQS event source does', () => {
    const record = eventRecordOf(
      {
        MessageId: 'id',
        ReceiptHandle: 'rh',
        Body: 'b',
        MessageAttributes: { k: 'v' },
        ReceiveCount: 2,
        SentAt: 5,
      },
      'sim-ingress',
      'producer',
    );
    expect(record).toMatchObject({
      messageId: 'id',
      receiptHandle: 'rh',
      body: 'b',
      attributes: { ApproximateReceiveCount: '2', SentTimestamp: '5', SenderId: 'producer' },
      messageAttributes: { k: { stringValue: 'v', dataType: 'String' } },
      eventSource: 'aws:sqs',
      eventSourceARN: 'arn:aws:sqs:us-east-1:000000000000:sim-ingress',
    });
  });
});
