import {
  type AttributeValue,
  ConditionalCheckFailedException,
  CreateTableCommand,
  DeleteTableCommand,
  type DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  UpdateItemCommand,
  waitUntilTableExists,
} from '@aws-sdk/client-dynamodb';
import { encodePayload } from '../../shared/adapters/payload-codec.ts';
import type { TableShape } from '../measure/capacity.ts';

/** A reply body as fanin stores it (`encodePayload`): Brotli-compressed when that is smaller. */
function stored(body: string): AttributeValue {
  const encoded = encodePayload(body);
  return 'payloadBr' in encoded ? { B: encoded.payloadBr } : { S: encoded.payload };
}

/** The naive baseline: the seed's in-memory aggregator mapped directly onto DynamoDB. */
export class NaiveAggregateStore {
  private readonly client: DynamoDBClient;
  public readonly tableName: string;
  /** Expected replies per aggregate: known to whoever opened it, so not re-read per reply. */
  private readonly expected = new Map<string, number>();

  public constructor(options: { readonly client: DynamoDBClient; readonly tableName: string }) {
    this.client = options.client;
    this.tableName = options.tableName;
  }

  /** The shape the meter needs to cost this table's writes. */
  public get shape(): TableShape {
    return { name: this.tableName, partitionKey: 'pk', sortKey: 'sk', indexes: [] };
  }

  /** Creates the baseline's table (on-demand, keys only). */
  public async createTable(): Promise<void> {
    await this.client.send(
      new CreateTableCommand({
        TableName: this.tableName,
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: [
          { AttributeName: 'pk', AttributeType: 'S' },
          { AttributeName: 'sk', AttributeType: 'S' },
        ],
        KeySchema: [
          { AttributeName: 'pk', KeyType: 'HASH' },
          { AttributeName: 'sk', KeyType: 'RANGE' },
        ],
      }),
    );
    await waitUntilTableExists({ client: this.client, maxWaitTime: 60 }, { TableName: this.tableName });
  }

  /** Deletes the table. */
  public async deleteTable(): Promise<void> {
    await this.client.send(new DeleteTableCommand({ TableName: this.tableName })).catch(() => undefined);
  }

  /** Opens an aggregate: one item with an empty map of replies. */
  public async open(aggregateId: string, expected: number): Promise<void> {
    await this.client.send(
      new PutItemCommand({
        TableName: this.tableName,
        Item: this.item(aggregateId, expected, []),
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
    this.expected.set(aggregateId, expected);
  }

  /**
   * Adds a reply to its aggregate's item. @returns true when this reply completed the aggregate
   * (the caller then completes it); false for any other reply, duplicates included.
   */
  public async record(aggregateId: string, replyId: string, payload: string): Promise<boolean> {
    try {
      const { Attributes } = await this.client.send(
        new UpdateItemCommand({
          TableName: this.tableName,
          Key: { pk: { S: `N#${aggregateId}` }, sk: { S: 'A' } },
          UpdateExpression: 'SET replies.#reply = :payload ADD received :one',
          ConditionExpression: 'attribute_not_exists(replies.#reply) AND #status = :open',
          ExpressionAttributeNames: { '#reply': replyId, '#status': 'status' },
          ExpressionAttributeValues: {
            ':payload': stored(payload),
            ':one': { N: '1' },
            ':open': { S: 'open' },
          },
          // Only the counter comes back: the decision needs nothing else, and returning values is free.
          ReturnValues: 'UPDATED_NEW',
        }),
      );
      const received = Number(Attributes?.received?.N ?? '0');
      return received === (this.expected.get(aggregateId) ?? Number.POSITIVE_INFINITY);
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return false;
      throw error;
    }
  }

  /** Writes an aggregate's item as it stands after `bodies.length` replies, through `client`. */
  public async prime(
    client: DynamoDBClient,
    aggregateId: string,
    expected: number,
    bodies: readonly string[],
  ): Promise<void> {
    await client.send(
      new PutItemCommand({ TableName: this.tableName, Item: this.item(aggregateId, expected, bodies) }),
    );
    this.expected.set(aggregateId, expected);
  }

  /** An aggregate's item, open, holding `bodies` as its first replies. */
  private item(
    aggregateId: string,
    expected: number,
    bodies: readonly string[],
  ): Record<string, AttributeValue> {
    return {
      pk: { S: `N#${aggregateId}` },
      sk: { S: 'A' },
      status: { S: 'open' },
      expected: { N: String(expected) },
      received: { N: String(bodies.length) },
      replies: { M: Object.fromEntries(bodies.map((body, i) => [String(i), stored(body)])) },
    };
  }

  /** Reads every reply (the result is built from them) and closes the item, dropping the replies. */
  public async complete(aggregateId: string): Promise<number> {
    const key = { pk: { S: `N#${aggregateId}` }, sk: { S: 'A' } };
    const { Item } = await this.client.send(
      new GetItemCommand({ TableName: this.tableName, Key: key, ConsistentRead: true }),
    );
    const replies = Object.keys(Item?.replies?.M ?? {}).length;
    await this.client.send(
      new UpdateItemCommand({
        TableName: this.tableName,
        Key: key,
        UpdateExpression: 'SET #status = :closed REMOVE replies',
        ConditionExpression: '#status = :open',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':closed': { S: 'closed' }, ':open': { S: 'open' } },
      }),
    );
    return replies;
  }
}

/** What the baseline is given: the same aggregates and reply bodies as fanin. */
export interface NaiveWorkload {
  readonly aggregates: readonly { readonly id: string; readonly fanOut: number }[];
  readonly body: (aggregateId: string, replyId: string) => string;
  /** Concurrent writers (fanin's reply consumers: partitions × concurrency per partition). */
  readonly concurrency: number;
}

/**
 * Runs a workload through the naive store: opens every aggregate, then records the replies in
 * aggregate order with `concurrency` writers (as fanin's consumers would take them off the queue),
 * completing each aggregate when its last reply lands.
 *
 * @returns replies recorded, aggregates completed and the elapsed wall time.
 */
export async function runNaive(
  store: NaiveAggregateStore,
  workload: NaiveWorkload,
): Promise<{ replies: number; completed: number; elapsedMs: number }> {
  const started = performance.now();
  for (const { id, fanOut } of workload.aggregates) {
    await store.open(id, fanOut);
  }
  const work: { aggregateId: string; replyId: string }[] = [];
  for (const { id, fanOut } of workload.aggregates) {
    for (let i = 0; i < fanOut; i += 1) work.push({ aggregateId: id, replyId: String(i) });
  }
  let next = 0;
  let completed = 0;
  const writer = async (): Promise<void> => {
    while (next < work.length) {
      const item = work[next];
      next += 1;
      if (!item) break;
      const done = await store.record(
        item.aggregateId,
        item.replyId,
        workload.body(item.aggregateId, item.replyId),
      );
      if (done) {
        await store.complete(item.aggregateId);
        completed += 1;
      }
    }
  };
  await Promise.all(Array.from({ length: workload.concurrency }, writer));
  return { replies: work.length, completed, elapsedMs: performance.now() - started };
}

/**
 * The naive baseline at a fan-out too large to replay reply by reply in a benchmark run (at 10,000
 * replies each update rewrites up to ~300 KB, and DynamoDB Local takes many minutes). The cost of
 * reply k depends only on the item as it stands before it, so the item is written in that state
 * (through an unmetered client) and the real update of reply k is measured, at `positions` evenly
 * spaced k including the first and the last; replies in between are interpolated (the cost is a
 * step function of the item's size, which grows linearly). Opening and completing are measured.
 *
 * @param unitsSoFar the meter's running total of the store's write units
 */
export async function sampleNaive(
  store: NaiveAggregateStore,
  setup: DynamoDBClient,
  options: {
    readonly aggregateId: string;
    readonly fanOut: number;
    readonly positions: number;
    readonly body: (aggregateId: string, replyId: string) => string;
    readonly unitsSoFar: () => number;
  },
) {
  const { aggregateId, fanOut, body, unitsSoFar } = options;
  const bodies = Array.from({ length: fanOut }, (_, i) => body(aggregateId, String(i)));
  let mark = unitsSoFar();
  const spent = (): number => {
    const now = unitsSoFar();
    const delta = now - mark;
    mark = now;
    return delta;
  };
  await store.open(`${aggregateId}-open`, fanOut);
  const openUnits = spent();
  const count = Math.max(2, Math.min(options.positions, fanOut));
  const ks = [
    ...new Set(Array.from({ length: count }, (_, i) => Math.round((i * (fanOut - 1)) / (count - 1)))),
  ];
  const measured: { k: number; units: number }[] = [];
  let completeUnits = 0;
  for (const k of ks) {
    await store.prime(setup, aggregateId, fanOut, bodies.slice(0, k));
    mark = unitsSoFar();
    const done = await store.record(aggregateId, String(k), bodies[k] ?? '');
    measured.push({ k, units: spent() });
    if (done) {
      await store.complete(aggregateId);
      completeUnits = spent();
    }
  }
  let recordUnits = 0;
  for (const [i, point] of measured.entries()) {
    const previous = measured[i - 1];
    if (!previous) {
      recordUnits += point.units;
      continue;
    }
    // Replies previous.k+1 .. point.k: linear between the two measured updates.
    for (let k = previous.k + 1; k <= point.k; k += 1) {
      recordUnits +=
        previous.units + ((point.units - previous.units) * (k - previous.k)) / (point.k - previous.k);
    }
  }
  return {
    fanOut,
    /** Reply positions whose update was measured. */
    positions: measured.length,
    /** Write units of opening, of every reply (interpolated between the measured ones) and of completing. */
    openUnits,
    recordUnits,
    completeUnits,
  };
}
