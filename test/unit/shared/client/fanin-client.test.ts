import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { FaninClient, type ReceivedSubRequest } from '../../../../shared/client/fanin-client.ts';
import type { PartitionedDestination } from '../../../../shared/partitions/destination.ts';
import { clientsOver, DynamoDbModel, SqsModel } from '../../../../sim/models/index.ts';
import { world } from '../adapters/support.ts';

/**
 * The producers' and responders' client over the wire contract (docs/wire-contract.md): a request
 * on the ingress queue with its definition and request id, sub-requests received with their
 * payloads and `fanin-*` attributes, a reply or a failure copying those attributes to the reply-to
 * partition or, when it is unavailable, to the partition affinity routing picks, and the ack. The
 * module's own fast test over the SQS model, with a stand-in reply destination.
 */

function setup() {
  const w = world();
  const url = (name: string) =>
    w.models.sqs.handle('CreateQueueCommand', { QueueName: name }).QueueUrl as string;
  const ingress = w.storage.queueUrls.ingress;
  const attributesOf = (queue: string) =>
    w.models.sqs
      .messages(queue)
      .map((m) =>
        Object.fromEntries(
          Object.entries(m.attributes as unknown as Record<string, { StringValue?: string }>).map(
            ([k, v]) => [k, v.StringValue],
          ),
        ),
      );
  return { w, url, ingress, attributesOf };
}

/** A reply destination of two partitions, the first available or not; records what it was asked. */
function destination(p0: string, p1: string, p0Available: boolean) {
  const chosen: unknown[] = [];
  const statuses = [
    { index: 0, queueUrl: p0, available: p0Available },
    { index: 1, queueUrl: p1, available: true },
  ];
  const replies = {
    status: async () => statuses,
    choose: async (policy: unknown) => {
      chosen.push(policy);
      return statuses[1];
    },
  } as unknown as PartitionedDestination;
  return { replies, chosen };
}

async function subRequestOn(
  client: FaninClient,
  w: ReturnType<typeof world>,
  queue: string,
  replyTo: string,
) {
  w.models.sqs.handle('SendMessageCommand', {
    QueueUrl: queue,
    MessageBody: '{"amount":1000}',
    MessageAttributes: {
      'fanin-aggregate-id': { DataType: 'String', StringValue: 'a-1' },
      'fanin-reply-id': { DataType: 'String', StringValue: 'bank-1' },
      'fanin-reply-to': { DataType: 'String', StringValue: replyTo },
      'fanin-definition': { DataType: 'String', StringValue: 'loan' },
      other: { DataType: 'String', StringValue: 'not copied' },
    },
  });
  const [sub] = await client.receive(queue);
  return sub as ReceivedSubRequest;
}

describe('FaninClient', () => {
  it('sends a request to the ingress queue with its definition and a request id, which it returns', async () => {
    // Prepare
    const { w, ingress, attributesOf } = setup();
    const client = new FaninClient({ sqs: w.clients.sqs, ingressQueueUrl: ingress });

    // Act
    const generated = await client.sendRequest('loan', { amount: 1 });
    const given = await client.sendRequest('loan', { amount: 2 }, { requestId: 'r-2', aggregateId: 'a-2' });

    // Assess
    expect(generated).toMatch(/^[0-9a-f-]{36}$/);
    expect(given).toBe('r-2');
    expect(attributesOf(ingress)).toEqual([
      { 'fanin-definition': 'loan', 'fanin-request-id': generated },
      { 'fanin-definition': 'loan', 'fanin-request-id': 'r-2', 'fanin-aggregate-id': 'a-2' },
    ]);
    expect(w.models.sqs.messages(ingress).map((m) => JSON.parse(m.body))).toEqual([
      { amount: 1 },
      { amount: 2 },
    ]);
  });

  it('refuses to send a request without an ingress queue', async () => {
    // Act / Assess
    await expect(new FaninClient({ sqs: world().clients.sqs }).sendRequest('loan', {})).rejects.toThrow(
      'no ingressQueueUrl',
    );
  });

  it('receives a sub-request with its payload parsed and only its fanin attributes', async () => {
    // Prepare
    const { w, url } = setup();
    const client = new FaninClient({ sqs: w.clients.sqs });

    // Act
    const sub = await subRequestOn(client, w, url('bank-1'), url('reply-x'));

    // Assess
    expect(sub).toMatchObject({
      body: { amount: 1000 },
      aggregateId: 'a-1',
      replyId: 'bank-1',
      definition: 'loan',
    });
    expect(Object.keys(sub.faninAttributes).sort()).toEqual([
      'fanin-aggregate-id',
      'fanin-definition',
      'fanin-reply-id',
      'fanin-reply-to',
    ]);
  });

  it('replies to the reply-to queue with the fanin attributes copied, and acks the sub-request', async () => {
    // Prepare
    const { w, url, attributesOf } = setup();
    const client = new FaninClient({ sqs: w.clients.sqs });
    const bank = url('bank-1');
    const replyTo = url('reply-x');
    const sub = await subRequestOn(client, w, bank, replyTo);

    // Act
    const sent = await client.reply(sub, { rate: 3.1 });
    await client.ack(sub);

    // Assess
    expect(sent).toEqual({ queueUrl: replyTo });
    expect(w.models.sqs.messages(replyTo).map((m) => JSON.parse(m.body))).toEqual([{ rate: 3.1 }]);
    expect(attributesOf(replyTo)[0]).toEqual(sub.faninAttributes);
    expect(w.models.sqs.messages(bank)).toEqual([]);
  });

  it('answers a failure with the fanin-failure attribute, "failed" when the error is blank', async () => {
    // Prepare
    const { w, url, attributesOf } = setup();
    const client = new FaninClient({ sqs: w.clients.sqs });
    const replyTo = url('reply-x');
    const sub = await subRequestOn(client, w, url('bank-1'), replyTo);

    // Act
    await client.fail(sub, 'no quote today', { code: 7 });
    await client.fail(sub, '  ');

    // Assess
    expect(attributesOf(replyTo).map((a) => a['fanin-failure'])).toEqual(['no quote today', 'failed']);
    expect(w.models.sqs.messages(replyTo).map((m) => m.body)).toEqual(['{"code":7}', 'null']);
  });

  it('replies to its own partition while available, else to the partition affinity routing picks for the aggregate', async () => {
    // Prepare
    const { w, url } = setup();
    const p0 = url('reply-0');
    const p1 = url('reply-1');
    const up = destination(p0, p1, true);
    const down = destination(p0, p1, false);
    const probe = new FaninClient({ sqs: w.clients.sqs });
    const sub = await subRequestOn(probe, w, url('bank-1'), p0);

    // Act
    const own = await new FaninClient({ sqs: w.clients.sqs, replies: up.replies }).reply(sub, 1);
    const routed = await new FaninClient({ sqs: w.clients.sqs, replies: down.replies }).reply(sub, 2);

    // Assess
    expect(own).toEqual({ queueUrl: p0, partition: 0 });
    expect(up.chosen).toEqual([]);
    expect(routed).toEqual({ queueUrl: p1, partition: 1 });
    expect(down.chosen).toEqual([{ kind: 'affinity', key: 'a-1' }]);
  });

  it('refuses to reply to a sub-request that names no reply-to queue and has no destination', async () => {
    // Prepare
    const client = new FaninClient({ sqs: world().clients.sqs });
    const sub: ReceivedSubRequest = {
      queueUrl: 'q',
      receiptHandle: 'h',
      messageId: 'm-1',
      body: {},
      faninAttributes: {},
    };

    // Act / Assess
    await expect(client.reply(sub, {})).rejects.toThrow('m-1 has no fanin-reply-to');
  });
});

/** A responder's queue over the SQS model, without duplicates or short receives. */
function aQueue() {
  const w = { clock: () => 1_800_000_000_000, random: () => 0.5 };
  const sqs = new SqsModel({ ...w, duplicateProbability: 0, shortReceiveProbability: 0 });
  const { QueueUrl } = sqs.handle('CreateQueueCommand', { QueueName: 'bank-a' }) as { QueueUrl: string };
  const clients = clientsOver({ dynamodb: new DynamoDbModel(w), sqs });
  return { url: QueueUrl, sqs: clients.sqs, client: new FaninClient({ sqs: clients.sqs }) };
}
const attributes = (values: Record<string, string>) =>
  Object.fromEntries(Object.entries(values).map(([k, v]) => [k, { DataType: 'String', StringValue: v }]));

describe('FaninClient.receive of a cancellation notice', () => {
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

describe('FaninClient for a definition that looks after its responders', () => {
  it('sends a heartbeat where the reply would go: the fanin attributes and fanin-heartbeat, never a reply body', async () => {
    // Prepare
    const { w, url, attributesOf } = setup();
    const client = new FaninClient({ sqs: w.clients.sqs });
    const replyTo = url('reply-x');
    const sub = await subRequestOn(client, w, url('bank-1'), replyTo);

    // Act
    await client.heartbeat(sub);

    // Assess
    expect(attributesOf(replyTo)).toEqual([{ ...sub.faninAttributes, 'fanin-heartbeat': '1' }]);
    expect(w.models.sqs.messages(replyTo).map((m) => m.body)).toEqual(['{}']);
  });

  it('says which attempt a retried sub-request is, and none for the first send', async () => {
    const { url, sqs, client } = aQueue();
    const base = {
      'fanin-aggregate-id': 'loan-7',
      'fanin-reply-id': '0',
      'fanin-reply-to': 'http://replies/0',
    };
    await sqs.send(
      new SendMessageCommand({ QueueUrl: url, MessageBody: '{}', MessageAttributes: attributes(base) }),
    );
    await sqs.send(
      new SendMessageCommand({
        QueueUrl: url,
        MessageBody: '{}',
        MessageAttributes: attributes({ ...base, 'fanin-attempt': '2' }),
      }),
    );
    const [first, retry] = await client.receive(url, { max: 10 });
    expect(first?.attempt).toBeUndefined();
    expect(retry?.attempt).toBe(2);
    expect(retry?.faninAttributes['fanin-attempt']).toBe('2');
  });
});
