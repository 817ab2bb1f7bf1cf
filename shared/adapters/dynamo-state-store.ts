import {
  type AttributeValue,
  ConditionalCheckFailedException,
  TransactionCanceledException,
} from '@aws-sdk/client-dynamodb';
import {
  BatchWriteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  type QueryCommandInput,
  TransactWriteCommand,
  type TransactWriteCommandInput,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { AggregateStatus, type Outcome } from '../engine/constants.ts';
import type { RuntimeParameters } from '../engine/definition.ts';
import type {
  AggregateHeader,
  DueItem,
  HeldReply,
  PayloadPointer,
  RecordResult,
  ReplyToRecord,
  SelfStartSpec,
  StateStore,
  StoredPayload,
} from '../ports.ts';
import { decodePayload, encodePayload } from './payload-codec.ts';

/**
 * The DynamoDB state store. One table:
 *
 * | item            | pk              | sk          | notes                                                  |
 * |-----------------|-----------------|-------------|--------------------------------------------------------|
 * | header/tombstone| `A#<aggregate>` | `H`         | small and constant in size; `received` is a counter    |
 * | request         | `A#<aggregate>` | `Q`         | the opening request, written once, read at completion  |
 * | reply           | `A#<aggregate>` | `R#<reply>` | one per reply: a reply costs the same at any fan-out;  |
 * |                 |                 |             | its payload compressed when smaller (payload-codec.ts) |
 * | held reply      | `A#<aggregate>` | `U#<reply>` | an unknown reply waiting for its aggregate             |
 * | parameters      | `D#<definition>`| `P`         | runtime parameters of a definition                     |
 *
 * GSI `due` (`dueShard`, `dueAt`): open headers with a deadline, completing headers (their lease)
 * and held replies — what the sweeper must look at. GSI `open` (`openDefinition`, `openedAt`, keys
 * only): open aggregates per definition, for "complete all" and "list active". Its entry is written
 * at open and removed at close; a reply's counter increment does not touch it. Its key is
 * `<definition>#<shard>` (see {@link openIndexKeys}), so one busy definition is not one hot key.
 */
export class DynamoStateStore implements StateStore {
  /** Spreads the `due` index over this many partition keys so it never becomes one hot key. */
  public static readonly DUE_SHARDS = 8;
  private static readonly MAX_TRANSACT_ITEMS = 100;
  private static readonly CONFLICT_RETRIES = 10;
  /**
   * Spreads each definition's entries in the `open` index over this many keys: every aggregate
   * writes its entry twice (open, close), so one key would cap a definition at about 500 aggregates
   * per second on AWS (1,000 write units per second per partition); eight lift that eightfold.
   */
  public static readonly OPEN_SHARDS = 8;
  /** Headers read in parallel when listing the open aggregates of a definition. */
  private static readonly LIST_READERS = 8;

  private readonly client: DynamoDBDocumentClient;
  private readonly tableName: string;

  public constructor(options: { readonly client: DynamoDBDocumentClient; readonly tableName: string }) {
    this.client = options.client;
    this.tableName = options.tableName;
  }

  public async openAggregate(
    header: AggregateHeader,
    request: StoredPayload,
  ): Promise<{ created: boolean; header: AggregateHeader }> {
    const pk = aggregateKey(header.aggregateId);
    try {
      await this.client.send(
        new TransactWriteCommand({
          TransactItems: [
            {
              Put: {
                TableName: this.tableName,
                Item: { pk, sk: 'H', ...headerAttributes(header) },
                ConditionExpression: 'attribute_not_exists(pk)',
                ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
              },
            },
            {
              Put: {
                TableName: this.tableName,
                Item: {
                  pk,
                  sk: 'Q',
                  request: request.payload,
                  ...(request.payloadRef ? { requestRef: request.payloadRef } : {}),
                },
              },
            },
          ],
        }),
      );
      return { created: true, header };
    } catch (error) {
      if (
        !(error instanceof TransactionCanceledException) ||
        error.CancellationReasons?.[0]?.Code !== 'ConditionalCheckFailed'
      ) {
        throw error;
      }
      const existing = await this.getHeader(header.aggregateId);
      if (!existing) throw error;
      return { created: false, header: existing };
    }
  }

  public async markDispatched(aggregateId: string): Promise<void> {
    await this.client.send(
      new UpdateCommand({
        TableName: this.tableName,
        Key: { pk: aggregateKey(aggregateId), sk: 'H' },
        UpdateExpression: 'SET dispatched = :true',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeValues: { ':true': true },
      }),
    );
  }

  public async getHeader(aggregateId: string): Promise<AggregateHeader | undefined> {
    const { Item } = await this.client.send(
      new GetCommand({
        TableName: this.tableName,
        Key: { pk: aggregateKey(aggregateId), sk: 'H' },
        ConsistentRead: true,
      }),
    );
    return Item ? toHeader(Item) : undefined;
  }

  public async getRequest(aggregateId: string): Promise<StoredPayload | undefined> {
    const { Item } = await this.client.send(
      new GetCommand({
        TableName: this.tableName,
        Key: { pk: aggregateKey(aggregateId), sk: 'Q' },
        ConsistentRead: true,
      }),
    );
    if (!Item) return undefined;
    return {
      payload: String(Item.request ?? ''),
      ...(Item.requestRef ? { payloadRef: Item.requestRef as PayloadPointer } : {}),
    };
  }

  public async recordReplies(
    aggregateId: string,
    replies: readonly ReplyToRecord[],
    options: { readonly selfStart?: SelfStartSpec; readonly consume?: readonly string[] } = {},
  ): Promise<RecordResult> {
    // Two copies of one reply in a batch would be two operations on one item, which a
    // transaction refuses: the second copy is a duplicate of the first.
    const unique = new Map<string, ReplyToRecord>();
    const duplicates: string[] = [];
    for (const reply of replies) {
      if (unique.has(reply.replyId)) duplicates.push(reply.replyId);
      else unique.set(reply.replyId, reply);
    }
    const accepted: string[] = [];
    let pending = [...unique.values()];
    let consume = [...(options.consume ?? [])];
    // A transaction holds at most 100 items: the header update plus replies and held deletions.
    while (pending.length > 0 || consume.length > 0) {
      const room = DynamoStateStore.MAX_TRANSACT_ITEMS - 1;
      const chunk = pending.slice(0, room);
      const chunkConsume = consume.slice(0, room - chunk.length);
      const outcome = await this.recordChunk(aggregateId, chunk, chunkConsume, options.selfStart);
      if (outcome.refused) {
        return {
          accepted,
          duplicates: [...duplicates, ...outcome.duplicates],
          missing: !outcome.header,
          ...(outcome.header ? { header: outcome.header } : {}),
        };
      }
      accepted.push(...outcome.accepted);
      duplicates.push(...outcome.duplicates);
      pending = pending.slice(chunk.length);
      consume = consume.slice(chunkConsume.length);
    }
    const header = await this.getHeader(aggregateId);
    return { accepted, duplicates, missing: !header, ...(header ? { header } : {}) };
  }

  /**
   * One transaction: put each reply if absent, delete consumed held replies, and add the count to
   * the header on condition that the aggregate is open. A refused put is a duplicate: it is
   * dropped and the rest retried. A refused header means no aggregate, or one no longer open.
   */
  private async recordChunk(
    aggregateId: string,
    replies: ReplyToRecord[],
    consume: string[],
    selfStart: SelfStartSpec | undefined,
  ): Promise<{ refused: boolean; accepted: string[]; duplicates: string[]; header?: AggregateHeader }> {
    const pk = aggregateKey(aggregateId);
    const duplicates: string[] = [];
    // Compressed once, whatever the retries below.
    const stored = new Map(replies.map((reply) => [reply.replyId, encodePayload(reply.payload)]));
    let remaining = replies;
    for (let attempt = 0; ; attempt += 1) {
      const items: NonNullable<TransactWriteCommandInput['TransactItems']> = [
        ...remaining.map((reply) => ({
          Put: {
            TableName: this.tableName,
            Item: {
              pk,
              sk: `R#${reply.replyId}`,
              replyId: reply.replyId,
              ...stored.get(reply.replyId),
              receivedAt: reply.receivedAt,
              ...(reply.payloadRef ? { payloadRef: reply.payloadRef } : {}),
            },
            ConditionExpression: 'attribute_not_exists(sk)',
          },
        })),
        ...consume.map((replyId) => ({
          Delete: { TableName: this.tableName, Key: { pk, sk: `U#${replyId}` } },
        })),
        { Update: this.headerCountUpdate(aggregateId, remaining.length, selfStart) },
      ];
      try {
        await this.client.send(new TransactWriteCommand({ TransactItems: items }));
        return { refused: false, accepted: remaining.map((r) => r.replyId), duplicates };
      } catch (error) {
        if (!(error instanceof TransactionCanceledException)) throw error;
        const reasons = error.CancellationReasons ?? [];
        const headerReason = reasons[items.length - 1];
        const refusedPuts = remaining.filter((_, i) => reasons[i]?.Code === 'ConditionalCheckFailed');
        if (headerReason?.Code === 'ConditionalCheckFailed') {
          // ALL_OLD is the header as the condition saw it; no item means there was no aggregate at
          // that instant. Some emulators omit the item, so read it then — but an *open* header
          // read now was created after the refusal (a fan-out racing this reply): the reply is
          // unknown, not late, and is consolidated from there.
          const found = headerReason.Item
            ? toHeader(unmarshall(headerReason.Item as Record<string, AttributeValue>))
            : await this.getHeader(aggregateId);
          const old = found?.status === AggregateStatus.OPEN && !headerReason.Item ? undefined : found;
          return {
            refused: true,
            accepted: [],
            duplicates: [...duplicates, ...refusedPuts.map((r) => r.replyId)],
            ...(old ? { header: old } : {}),
          };
        }
        if (refusedPuts.length > 0) {
          duplicates.push(...refusedPuts.map((r) => r.replyId));
          const refused = new Set(refusedPuts);
          remaining = remaining.filter((r) => !refused.has(r));
          if (remaining.length === 0 && consume.length === 0)
            return { refused: false, accepted: [], duplicates };
          continue;
        }
        // Another writer touched the header at the same moment, or the hot aggregate's partition
        // is throttled: back off and try again here, rather than fail the batch back to SQS
        // (which would hold its replies for a whole visibility timeout).
        if (
          reasons.some((r) => r.Code === 'TransactionConflict' || r.Code === 'ThrottlingError') &&
          attempt < DynamoStateStore.CONFLICT_RETRIES
        ) {
          await sleep(jitter(attempt));
          continue;
        }
        throw error;
      }
    }
  }

  private headerCountUpdate(aggregateId: string, count: number, selfStart: SelfStartSpec | undefined) {
    const key = { pk: aggregateKey(aggregateId), sk: 'H' };
    if (!selfStart) {
      return {
        TableName: this.tableName,
        Key: key,
        UpdateExpression: 'ADD received :n',
        ConditionExpression: 'attribute_exists(pk) AND #status = :open',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':n': count, ':open': AggregateStatus.OPEN },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const,
      };
    }
    // The first reply of a self-starting aggregate creates its header; later ones only count.
    const initial = headerAttributes({
      aggregateId,
      definition: selfStart.definition,
      status: AggregateStatus.OPEN,
      received: 0,
      lateCount: 0,
      openedAt: selfStart.openedAt,
      params: selfStart.params,
      dispatched: true,
      openedBy: selfStart.openedBy,
      ...(selfStart.deadline !== undefined ? { deadline: selfStart.deadline } : {}),
    });
    delete initial.received;
    for (const [name, value] of Object.entries(initial)) if (value === undefined) delete initial[name];
    const names: Record<string, string> = {};
    const values: Record<string, unknown> = { ':n': count, ':open': AggregateStatus.OPEN };
    const sets = Object.entries(initial).map(([name, value], i) => {
      names[`#a${i}`] = name;
      values[`:a${i}`] = value;
      return `#a${i} = if_not_exists(#a${i}, :a${i})`;
    });
    names['#status'] = 'status';
    return {
      TableName: this.tableName,
      Key: key,
      UpdateExpression: `SET ${sets.join(', ')} ADD received :n`,
      ConditionExpression: 'attribute_not_exists(pk) OR #status = :open',
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: values,
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const,
    };
  }

  public async listReplies(aggregateId: string): Promise<ReplyToRecord[]> {
    const items = await this.queryAll({
      TableName: this.tableName,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :r)',
      ExpressionAttributeValues: { ':pk': aggregateKey(aggregateId), ':r': 'R#' },
      ConsistentRead: true,
    });
    return items
      .filter((item) => item.closed !== true)
      .map((item) => ({
        replyId: String(item.replyId),
        payload: decodePayload(item),
        receivedAt: Number(item.receivedAt),
        ...(item.payloadRef ? { payloadRef: item.payloadRef as PayloadPointer } : {}),
      }));
  }

  public async beginCompletion(
    aggregateId: string,
    outcome: Outcome,
    at: number,
    leaseUntil: number,
  ): Promise<AggregateHeader | undefined> {
    try {
      const { Attributes } = await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { pk: aggregateKey(aggregateId), sk: 'H' },
          UpdateExpression:
            'SET #status = :completing, outcome = :outcome, completingAt = :at, dueAt = :lease, dueShard = :shard',
          ConditionExpression: '#status = :open',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: {
            ':completing': AggregateStatus.COMPLETING,
            ':open': AggregateStatus.OPEN,
            ':outcome': outcome,
            ':at': at,
            ':lease': leaseUntil,
            ':shard': dueShard(aggregateKey(aggregateId)),
          },
          ReturnValues: 'ALL_NEW',
        }),
      );
      return Attributes ? toHeader(Attributes) : undefined;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return undefined;
      throw error;
    }
  }

  /** Extends the lease of a completing aggregate, so the sweeper does not resume it meanwhile. */
  public async markEmitted(aggregateId: string): Promise<void> {
    await this.client.send(
      new UpdateCommand({
        TableName: this.tableName,
        Key: { pk: aggregateKey(aggregateId), sk: 'H' },
        UpdateExpression: 'SET emitted = :true',
        ConditionExpression: '#status = :completing',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':true': true, ':completing': AggregateStatus.COMPLETING },
      }),
    );
  }

  public async close(aggregateId: string, expiresAt: number, outcome: Outcome): Promise<void> {
    const pk = aggregateKey(aggregateId);
    // Reply and request items first: once the tombstone is written nothing would look at them again.
    // Each reply item shrinks to a marker that expires with the tombstone (the same write units as
    // a delete): a redelivery that comes after the close is still recognised as a duplicate, not
    // reported late.
    const replies = await this.queryAll({
      TableName: this.tableName,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :r)',
      ExpressionAttributeValues: { ':pk': pk, ':r': 'R#' },
      ProjectionExpression: 'pk, sk, replyId',
      ConsistentRead: true,
    });
    await this.batchWrite([
      ...replies.map((item) => ({
        PutRequest: { Item: { pk, sk: String(item.sk), replyId: item.replyId, closed: true, expiresAt } },
      })),
      { DeleteRequest: { Key: { pk, sk: 'Q' } } },
    ]);
    try {
      await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { pk, sk: 'H' },
          UpdateExpression:
            'SET #status = :closed, expiresAt = :exp, outcome = :outcome REMOVE dueAt, dueShard, openDefinition, params',
          ConditionExpression: '#status = :completing',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: {
            ':closed': AggregateStatus.CLOSED,
            ':completing': AggregateStatus.COMPLETING,
            ':exp': expiresAt,
            ':outcome': outcome,
          },
        }),
      );
    } catch (error) {
      // Already closed by a concurrent finisher: closing is idempotent.
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
    }
  }

  public async countLate(aggregateId: string): Promise<void> {
    try {
      await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { pk: aggregateKey(aggregateId), sk: 'H' },
          UpdateExpression: 'ADD lateCount :one',
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeValues: { ':one': 1 },
        }),
      );
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
    }
  }

  public async holdReply(held: HeldReply): Promise<boolean> {
    const pk = aggregateKey(held.aggregateId);
    try {
      await this.client.send(
        new PutCommand({
          TableName: this.tableName,
          Item: {
            pk,
            sk: `U#${held.replyId}`,
            replyId: held.replyId,
            definition: held.definition,
            body: held.body,
            attributes: held.attributes,
            receivedAt: held.receivedAt,
            dueAt: held.dueAt,
            dueShard: dueShard(`${pk}/${held.replyId}`),
          },
          ConditionExpression: 'attribute_not_exists(sk)',
        }),
      );
      return true;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return false;
      throw error;
    }
  }

  public async getHeld(aggregateId: string, replyId: string): Promise<HeldReply | undefined> {
    const { Item } = await this.client.send(
      new GetCommand({
        TableName: this.tableName,
        Key: { pk: aggregateKey(aggregateId), sk: `U#${replyId}` },
        ConsistentRead: true,
      }),
    );
    return Item ? toHeld(aggregateId, Item) : undefined;
  }

  public async listHeld(aggregateId: string): Promise<HeldReply[]> {
    const items = await this.queryAll({
      TableName: this.tableName,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :u)',
      ExpressionAttributeValues: { ':pk': aggregateKey(aggregateId), ':u': 'U#' },
      ConsistentRead: true,
    });
    return items.map((item) => toHeld(aggregateId, item));
  }

  public async deleteHeld(aggregateId: string, replyId: string): Promise<void> {
    await this.deleteKeys([{ pk: aggregateKey(aggregateId), sk: `U#${replyId}` }]);
  }

  public async dueItems(now: number, limit: number): Promise<DueItem[]> {
    const due: DueItem[] = [];
    for (let shard = 0; shard < DynamoStateStore.DUE_SHARDS && due.length < limit; shard += 1) {
      const items = await this.queryAll(
        {
          TableName: this.tableName,
          IndexName: 'due',
          KeyConditionExpression: 'dueShard = :s AND dueAt <= :now',
          ExpressionAttributeValues: { ':s': `due#${shard}`, ':now': now },
        },
        limit - due.length,
      );
      for (const item of items) {
        const aggregateId = String(item.pk).slice(2);
        const sk = String(item.sk);
        const dueAt = Number(item.dueAt);
        if (sk === 'H') due.push({ kind: 'aggregate', aggregateId, dueAt });
        else if (sk.startsWith('U#')) due.push({ kind: 'held', aggregateId, replyId: sk.slice(2), dueAt });
      }
    }
    return due;
  }

  public async listOpen(definition: string): Promise<AggregateHeader[]> {
    // The index holds keys only (oldest first); each header is then read consistently, which also
    // drops one that closed since the index was read (the index is eventually consistent).
    const shards = await Promise.all(
      openIndexKeys(definition).map((key) =>
        this.queryAll({
          TableName: this.tableName,
          IndexName: 'open',
          KeyConditionExpression: 'openDefinition = :d',
          ExpressionAttributeValues: { ':d': key },
        }),
      ),
    );
    const keys = shards.flat().sort((a, b) => Number(a.openedAt) - Number(b.openedAt));
    const headers: (AggregateHeader | undefined)[] = new Array(keys.length);
    let next = 0;
    const reader = async () => {
      for (let i = next++; i < keys.length; i = next++) {
        const { Item } = await this.client.send(
          new GetCommand({
            TableName: this.tableName,
            Key: { pk: keys[i]?.pk, sk: 'H' },
            ConsistentRead: true,
          }),
        );
        headers[i] = Item ? toHeader(Item) : undefined;
      }
    };
    await Promise.all(Array.from({ length: Math.min(DynamoStateStore.LIST_READERS, keys.length) }, reader));
    return headers.filter((h): h is AggregateHeader => h?.status === AggregateStatus.OPEN);
  }

  public async getParameters(definition: string): Promise<RuntimeParameters> {
    const { Item } = await this.client.send(
      new GetCommand({
        TableName: this.tableName,
        Key: { pk: `D#${definition}`, sk: 'P' },
        ConsistentRead: true,
      }),
    );
    return (Item?.parameters as RuntimeParameters | undefined) ?? {};
  }

  public async setParameters(definition: string, parameters: RuntimeParameters): Promise<void> {
    await this.client.send(
      new PutCommand({ TableName: this.tableName, Item: { pk: `D#${definition}`, sk: 'P', parameters } }),
    );
  }

  private async queryAll(
    input: QueryCommandInput,
    limit = Number.POSITIVE_INFINITY,
  ): Promise<Record<string, unknown>[]> {
    const items: Record<string, unknown>[] = [];
    let ExclusiveStartKey: Record<string, unknown> | undefined;
    do {
      const page = await this.client.send(new QueryCommand({ ...input, ExclusiveStartKey }));
      items.push(...(page.Items ?? []));
      ExclusiveStartKey = page.LastEvaluatedKey;
    } while (ExclusiveStartKey && items.length < limit);
    return items.slice(0, limit);
  }

  private async deleteKeys(keys: { pk: string; sk: string }[]): Promise<void> {
    await this.batchWrite(keys.map((Key) => ({ DeleteRequest: { Key } })));
  }

  /** BatchWriteItem in groups of 25, retrying unprocessed items with backoff. */
  private async batchWrite(
    all: (
      | { DeleteRequest: { Key: Record<string, unknown> } }
      | { PutRequest: { Item: Record<string, unknown> } }
    )[],
  ): Promise<void> {
    for (let i = 0; i < all.length; i += 25) {
      let requests = all.slice(i, i + 25);
      for (let attempt = 0; requests.length > 0; attempt += 1) {
        const { UnprocessedItems } = await this.client.send(
          new BatchWriteCommand({ RequestItems: { [this.tableName]: requests } }),
        );
        requests = (UnprocessedItems?.[this.tableName] ?? []) as typeof requests;
        if (requests.length > 0) await sleep(jitter(attempt));
      }
    }
  }
}

/** The partition key of an aggregate's items. */
export function aggregateKey(aggregateId: string): string {
  return `A#${aggregateId}`;
}

/** A stable hash of a key onto 0 … shards − 1, so an item always lands in the same shard. */
function shardOf(key: string, shards: number): number {
  let hash = 0;
  for (let i = 0; i < key.length; i += 1) hash = (hash * 31 + key.charCodeAt(i)) | 0;
  return Math.abs(hash) % shards;
}

/** The `due` index shard of a key. */
export function dueShard(key: string): string {
  return `due#${shardOf(key, DynamoStateStore.DUE_SHARDS)}`;
}

/** The `open` index key of an open aggregate: its definition and a shard of its partition key. */
export function openIndexKey(definition: string, aggregateId: string): string {
  return `${definition}#${shardOf(aggregateKey(aggregateId), DynamoStateStore.OPEN_SHARDS)}`;
}

/** Every `open` index key of a definition: a listing queries each of them. */
export function openIndexKeys(definition: string): string[] {
  return Array.from({ length: DynamoStateStore.OPEN_SHARDS }, (_, shard) => `${definition}#${shard}`);
}

function headerAttributes(header: AggregateHeader): Record<string, unknown> {
  const pk = aggregateKey(header.aggregateId);
  const open = header.status === AggregateStatus.OPEN;
  return {
    kind: 'aggregate',
    aggregateId: header.aggregateId,
    definition: header.definition,
    status: header.status,
    expected: header.expected,
    received: header.received,
    lateCount: header.lateCount,
    openedAt: header.openedAt,
    deadline: header.deadline,
    params: header.params,
    requestId: header.requestId,
    dispatched: header.dispatched,
    openedBy: header.openedBy,
    ...(open ? { openDefinition: openIndexKey(header.definition, header.aggregateId) } : {}),
    ...(open && header.deadline !== undefined ? { dueAt: header.deadline, dueShard: dueShard(pk) } : {}),
  };
}

function toHeader(item: Record<string, unknown>): AggregateHeader & { emitted: boolean } {
  const optionalNumber = (value: unknown) =>
    value === undefined || value === null ? undefined : Number(value);
  const expected = optionalNumber(item.expected);
  const deadline = optionalNumber(item.deadline);
  const completingAt = optionalNumber(item.completingAt);
  const expiresAt = optionalNumber(item.expiresAt);
  return {
    aggregateId: String(item.aggregateId),
    definition: String(item.definition),
    status: item.status as AggregateStatus,
    ...(item.outcome ? { outcome: item.outcome as Outcome } : {}),
    ...(expected !== undefined ? { expected } : {}),
    received: Number(item.received ?? 0),
    lateCount: Number(item.lateCount ?? 0),
    openedAt: Number(item.openedAt),
    ...(deadline !== undefined ? { deadline } : {}),
    params: (item.params as AggregateHeader['params'] | undefined) ?? {},
    ...(item.requestId ? { requestId: String(item.requestId) } : {}),
    dispatched: item.dispatched === true,
    ...(item.openedBy ? { openedBy: String(item.openedBy) } : {}),
    ...(completingAt !== undefined ? { completingAt } : {}),
    ...(expiresAt !== undefined ? { expiresAt } : {}),
    emitted: item.emitted === true,
  };
}

function toHeld(aggregateId: string, item: Record<string, unknown>): HeldReply {
  return {
    aggregateId,
    replyId: String(item.replyId),
    ...(item.definition ? { definition: String(item.definition) } : {}),
    body: String(item.body),
    attributes: (item.attributes as Record<string, string> | undefined) ?? {},
    receivedAt: Number(item.receivedAt),
    dueAt: Number(item.dueAt),
  };
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function jitter(attempt: number): number {
  return Math.random() * Math.min(1000, 20 * 2 ** attempt);
}
