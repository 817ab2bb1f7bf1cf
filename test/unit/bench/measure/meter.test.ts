/**
 * The meter: SDK middleware that counts what fanin's clients do (calls, billed SQS requests, write and read
 * units by DynamoDB's rules) and wrappers that count handler invocations. Driven here through a stand-in
 * middleware stack, so every call's input and output are chosen by the test.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { SQSClient } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import type { TableShape } from '../../../../bench/measure/capacity.ts';
import { Meter } from '../../../../bench/measure/meter.ts';

type Args = { input: Record<string, unknown> };
type Handler = (args: Args) => Promise<{ output: unknown }>;
type Middleware = (next: Handler, context: { commandName?: string }) => Handler;

/** A client whose middleware stack the meter adds to; `send` runs it over a stand-in service. */
function fakeClient<C>() {
  const added: { middleware: Middleware; step: string }[] = [];
  const client = {
    middlewareStack: {
      add: (middleware: Middleware, o: { step: string }) => added.push({ middleware, step: o.step }),
    },
  } as unknown as C;
  const seen: Record<string, unknown>[] = [];
  const send = async (
    operation: string,
    input: Record<string, unknown>,
    service: (input: Record<string, unknown>) => unknown = () => ({}),
  ) => {
    const ordered = [
      ...added.filter((a) => a.step === 'initialize'),
      ...added.filter((a) => a.step === 'build'),
    ];
    const terminal: Handler = async (args) => {
      seen.push(args.input);
      const output = service(args.input);
      if (output instanceof Error) throw output;
      return { output };
    };
    const handler = ordered.reduceRight<Handler>(
      (next, a) => a.middleware(next, { commandName: `${operation}Command` }),
      terminal,
    );
    return (await handler({ input })).output;
  };
  return { client, send, seen };
}

const TABLE: TableShape = { name: 'state', partitionKey: 'pk', sortKey: 'sk', indexes: [] };
const sdkError = (name: string, extra: object = {}) => Object.assign(new Error(name), { name }, extra);

describe("the meter's SQS counts", () => {
  it('counts a send under its role and queue label, one billed request per started 64 KB', async () => {
    const meter = new Meter();
    const { client, send } = fakeClient<SQSClient>();
    meter.instrumentSqs(client, 'clients', (url) => (url.endsWith('reply-0') ? 'reply' : 'queue'));
    await send('SendMessage', { QueueUrl: 'http://q/reply-0', MessageBody: 'x'.repeat(70 * 1024) });
    expect(meter.snapshot()).toEqual({
      'sqs.sent|clients|std': 1,
      'sqs.calls|clients|SendMessage|reply': 1,
      'sqs.billed|clients|std|SendMessage|reply': 2,
    });
  });

  it("counts a message's attribute names, types and values in its billed size", async () => {
    const meter = new Meter();
    const { client, send } = fakeClient<SQSClient>();
    meter.instrumentSqs(client, 'fanin');
    // 65,530 bytes of body and 1 + 6 + 1 of attribute: 65,538 bytes, over one 64 KB chunk.
    await send('SendMessage', {
      QueueUrl: 'q',
      MessageBody: 'x'.repeat(65_530),
      MessageAttributes: { k: { DataType: 'String', StringValue: 'v' } },
    });
    await send('SendMessage', { QueueUrl: 'q', MessageBody: 'x'.repeat(65_530) });
    expect(meter.snapshot()['sqs.billed|fanin|std|SendMessage|queue']).toBe(2 + 1);
  });

  it("counts a batch's entries as messages sent, FIFO apart, and an empty receive apart", async () => {
    const meter = new Meter();
    const { client, send } = fakeClient<SQSClient>();
    meter.instrumentSqs(client, 'esm');
    const entry = { MessageBody: '{}' };
    await send('SendMessageBatch', { QueueUrl: 'q.fifo', Entries: [entry, entry, entry] });
    await send('ReceiveMessage', { QueueUrl: 'q' }, () => ({ Messages: [] }));
    await send('ReceiveMessage', { QueueUrl: 'q' }, () => ({ Messages: [{ Body: 'a' }, { Body: 'b' }] }));
    expect(meter.snapshot()).toEqual({
      'sqs.sent|esm|fifo': 3,
      'sqs.calls|esm|SendMessageBatch|queue': 1,
      'sqs.billed|esm|fifo|SendMessageBatch|queue': 1,
      'sqs.received|esm|std': 2,
      'sqs.calls|esm|ReceiveMessage(empty)|queue': 1,
      'sqs.billed|esm|std|ReceiveMessage(empty)|queue': 1,
      'sqs.calls|esm|ReceiveMessage|queue': 1,
      'sqs.billed|esm|std|ReceiveMessage|queue': 1,
    });
  });
});

describe("the meter's DynamoDB counts", () => {
  const metered = () => {
    const meter = new Meter();
    const fake = fakeClient<DynamoDBClient>();
    meter.instrumentDynamo(fake.client, 'fanin');
    meter.registerTable(TABLE);
    return { meter, ...fake };
  };

  it('asks for the capacity of reads and writes and counts what DynamoDB reports of a single write', async () => {
    const { meter, send, seen } = metered();
    await send('PutItem', { TableName: 'state', Item: { pk: { S: 'a' }, sk: { S: 'A' } } }, () => ({
      ConsumedCapacity: { CapacityUnits: 3, GlobalSecondaryIndexes: { due: { CapacityUnits: 1 } } },
    }));
    expect(seen[0]?.ReturnConsumedCapacity).toBe('INDEXES');
    expect(meter.snapshot()).toEqual({
      'ddb.calls|fanin|PutItem': 1,
      'ddb.wcu_reported|fanin|PutItem': 3,
      'ddb.wcu|fanin|PutItem': 3,
      'ddb.wcu_index|fanin|PutItem': 1,
    });
  });

  it('leaves calls that are neither reads nor writes alone', async () => {
    const { meter, send, seen } = metered();
    await send('DescribeTable', { TableName: 'state' });
    expect(seen[0]).toEqual({ TableName: 'state' });
    expect(meter.snapshot()).toEqual({});
  });

  it("costs a transaction by DynamoDB's rules (two units per started KB), not by what the emulator reports", async () => {
    const { meter, send } = metered();
    // pk (2 + 1) + sk (2 + 1) + body (4 + 2,000): 2,010 bytes, 2 units, doubled in a transaction.
    const put = (pk: string) => ({
      Put: { TableName: 'state', Item: { pk: { S: pk }, sk: { S: 'A' }, body: { S: 'x'.repeat(2_000) } } },
    });
    await send('TransactWriteItems', { TransactItems: [put('a'), put('b')] }, () => ({
      ConsumedCapacity: [{ CapacityUnits: 5 }],
    }));
    const counters = meter.snapshot();
    expect(counters['ddb.wcu_reported|fanin|TransactWriteItems']).toBe(5);
    expect(counters['ddb.wcu|fanin|TransactWriteItems']).toBe(8);
    expect(counters['ddb.tx_actions|fanin']).toBe(2);
    expect(counters['ddb.tx_puts|fanin']).toBe(2);
  });

  it('counts transactional updates of items never seen (assumed 1 KB) and actions on unregistered tables', async () => {
    const { meter, send } = metered();
    await send('TransactWriteItems', {
      TransactItems: [
        {
          Update: {
            TableName: 'state',
            Key: { pk: { S: 'new' }, sk: { S: 'A' } },
            UpdateExpression: 'SET n = :n',
          },
        },
        { Put: { TableName: 'elsewhere', Item: { pk: { S: 'x' } } } },
      ],
    });
    const counters = meter.snapshot();
    expect(counters['ddb.wcu|fanin|TransactWriteItems']).toBe(2);
    expect(counters['ddb.size_unknown|fanin']).toBe(1);
    expect(counters['ddb.unregistered_table']).toBe(1);
  });

  it('costs a failed conditional write at the size of the item last seen, one unit when none was', async () => {
    const { meter, send } = metered();
    const key = { pk: { S: 'a' }, sk: { S: 'A' } };
    // 3 + 3 + 4 + 2,500 bytes: 3 units.
    await send('PutItem', { TableName: 'state', Item: { ...key, body: { S: 'x'.repeat(2_500) } } });
    const failed = () => sdkError('ConditionalCheckFailedException');
    await expect(send('UpdateItem', { TableName: 'state', Key: key }, failed)).rejects.toThrow();
    await expect(
      send('UpdateItem', { TableName: 'state', Key: { pk: { S: 'b' }, sk: { S: 'A' } } }, failed),
    ).rejects.toThrow();
    const counters = meter.snapshot();
    expect(counters['ddb.cond_failed|fanin|UpdateItem']).toBe(2);
    expect(counters['ddb.wcu|fanin|UpdateItem']).toBe(3 + 1);
    expect(counters['ddb.wcu_cond_failed|fanin|UpdateItem']).toBe(3 + 1);
  });

  it('counts a cancelled transaction by its reasons, its units apart at the commit price', async () => {
    const { meter, send } = metered();
    const cancelled = sdkError('TransactionCanceledException', {
      CancellationReasons: [{ Code: 'None' }, { Code: 'ConditionalCheckFailed' }],
    });
    const put = { Put: { TableName: 'state', Item: { pk: { S: 'a' }, sk: { S: 'A' } } } };
    await expect(
      send('TransactWriteItems', { TransactItems: [put, put] }, () => cancelled),
    ).rejects.toThrow();
    const counters = meter.snapshot();
    expect(counters['ddb.tx_cancelled|fanin|ConditionalCheckFailed']).toBe(1);
    expect(counters['ddb.wcu_cancelled|fanin']).toBe(4);
    expect(counters['ddb.wcu|fanin|TransactWriteItems']).toBeUndefined();
  });

  it('counts any other error by operation and name', async () => {
    const { meter, send } = metered();
    await expect(
      send('GetItem', { TableName: 'state' }, () => sdkError('ProvisionedThroughputExceededException')),
    ).rejects.toThrow();
    expect(meter.snapshot()['ddb.errors|fanin|GetItem:ProvisionedThroughputExceededException']).toBe(1);
  });

  it("attributes units to partition keys while asked to: a get's key, a query's :pk, a batch evenly", async () => {
    const { meter, send } = metered();
    const units = (n: number) => () => ({ ConsumedCapacity: { CapacityUnits: n } });
    await send('GetItem', { TableName: 'state', Key: { pk: { S: 'untracked' }, sk: { S: 'A' } } }, units(1));
    meter.trackKeys = true;
    await send('GetItem', { TableName: 'state', Key: { pk: { S: 'a' }, sk: { S: 'A' } } }, units(0.5));
    await send('Query', { TableName: 'state', ExpressionAttributeValues: { ':pk': { S: 'a' } } }, units(2));
    await send(
      'Query',
      { TableName: 'state', IndexName: 'due', ExpressionAttributeValues: { ':pk': { S: 'a' } } },
      units(7),
    );
    const putRequest = (pk: string) => ({ PutRequest: { Item: { pk: { S: pk }, sk: { S: 'A' } } } });
    await send(
      'BatchWriteItem',
      { RequestItems: { state: [putRequest('a'), putRequest('b'), putRequest('b')] } },
      units(6),
    );
    expect(Object.fromEntries(meter.keyReadUnits)).toEqual({ 'table:a': 2.5 });
    expect(Object.fromEntries(meter.keyUnits)).toEqual({ 'table:a': 2, 'table:b': 4 });
  });
});

describe("the meter's handler wrappers", () => {
  it("counts a handler's invocations, records and sequential round trips, its calls under its name", async () => {
    const meter = new Meter();
    const { client, send } = fakeClient<DynamoDBClient>();
    meter.instrumentDynamo(client, 'fanin');
    const get = () => send('GetItem', { TableName: 'state' });
    const handler = meter.wrapHandler('reply', async (_: { Records: unknown[] }) => {
      await Promise.all([get(), get()]);
      await get();
    });
    await handler({ Records: [1, 2, 3] });
    const counters = meter.snapshot();
    expect(counters['lambda.invocations|reply']).toBe(1);
    expect(counters['lambda.records|reply']).toBe(3);
    expect(counters['ddb.round_trips|reply']).toBe(2);
    expect(counters['ddb.calls|fanin:reply|GetItem']).toBe(3);
    expect(counters['lambda.ms|reply']).toBeGreaterThanOrEqual(0);
  });

  it('counts an invocation that threw, and the records it was handed', async () => {
    const meter = new Meter();
    const handler = meter.wrapHandler('timer', async (_: { Records: unknown[] }) => {
      throw new Error('boom');
    });
    await expect(handler({ Records: [1] })).rejects.toThrow('boom');
    expect(meter.snapshot()).toMatchObject({ 'lambda.invocations|timer': 1, 'lambda.records|timer': 1 });
  });

  it('counts a drain that received nothing as the schedule idling, not as an invocation', async () => {
    const meter = new Meter();
    let received = 0;
    const drain = meter.wrapDrain('reply', async () => ({ received }));
    await drain({});
    received = 4;
    await drain({});
    const counters = meter.snapshot();
    expect(counters['lambda.idle_invocations|reply']).toBe(1);
    expect(counters['lambda.invocations|reply']).toBe(1);
    expect(counters['lambda.records|reply']).toBe(4);
  });
});
