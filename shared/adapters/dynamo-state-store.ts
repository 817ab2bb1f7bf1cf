import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import {
  DeleteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  paginateQuery,
  type QueryCommandInput,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { AggregateStatus } from '../engine/constants.ts';
import type { RuntimeParameters } from '../engine/definition.ts';
import { encodeMembers } from '../engine/members.ts';
import type {
  AggregateHeader,
  AggregateSnapshot,
  DueItem,
  HeldClaim,
  HeldReply,
  OutputChannel,
  PayloadPointer,
  ReplyToRecord,
  Seal,
  StateStore,
  StoredPayload,
  StoredReply,
} from '../ports.ts';
import {
  headerAttributes,
  heldItem,
  replyItem,
  toDueItem,
  toHeader,
  toHeld,
  toReply,
  unmarshallLoose,
} from './state-items.ts';
import {
  aggregateKey,
  blockKey,
  counterKey,
  DUE_INDEX,
  DUE_SHARDS,
  dueShard,
  dueShardKey,
  heldKey,
  parametersKey,
  replyKey,
  replyPartitionKey,
  SortKey,
  shardKey,
} from './state-keys.ts';

// The key functions the tests and benchmarks know this module by.
export { aggregateKey, counterKey, dueShard, replyKey, replyPartitionKey, shardKey } from './state-keys.ts';

/**
 * The DynamoDB state store. One table; its keys are made in state-keys.ts, its items mapped to
 * and from the port's types in state-items.ts:
 *
 * | item            | pk              | sk          | notes                                                   |
 * |-----------------|-----------------|-------------|---------------------------------------------------------|
 * | request         | `A#<aggregate>` | `B`         | the opening request, written once with a TTL            |
 * | header/tombstone| `A#<aggregate>` | `H`         | small; written at open, seal and close — never per reply|
 * | reply           | `A#<aggregate>` | `R#<reply>` | one conditional put per reply, with a TTL; its payload  |
 * |                 |                 |             | (index ids zero-padded, see {@link replyKey})           |
 * |                 |                 |             | compressed when smaller (payload-codec.ts)              |
 * | held reply      | `A#<aggregate>` | `U#<reply>` | an unknown reply waiting for its aggregate              |
 * | block complete  | `A#<aggregate>` | `K#<block>` | large fan-outs: a block of reply ids all in (tiny)      |
 * | reply counter   | `A#<aggregate>` | `C`         | other large aggregates: a completion trigger per batch  |
 * | parameters      | `D#<definition>`| `P`         | runtime parameters of a definition                      |
 *
 * The header sorts between the request and the replies, so one consistent query over
 * `H … R$` reads an aggregate's header and every reply, and nothing else.
 *
 * GSI `due` (`dueShard`, `dueAt`, keys only; its name from the topology): open headers (their deadline, or `closeBy`),
 * completing headers (their lease) and held replies — what the sweeper must look at, and, since
 * every open aggregate has an allowed life, also what a listing of active aggregates reads. One
 * index, so an aggregate's whole life costs two index writes besides its lease.
 */
export class DynamoStateStore implements StateStore {
  /** Spreads the `due` index over this many partition keys (state-keys.ts). */
  public static readonly DUE_SHARDS = DUE_SHARDS;
  /** Retries of a throttled reply put beyond the SDK's own, with jittered back-off. */
  private static readonly THROTTLE_RETRIES = 10;
  /** Headers read in parallel when listing the open aggregates of a definition. */
  private static readonly LIST_READERS = 8;

  private readonly client: DynamoDBDocumentClient;
  private readonly tableName: string;
  private readonly dueIndex: string;

  /**
   * @param options.dueIndex the name of the table's `due` index; @default the topology's
   *   ({@link DUE_INDEX})
   */
  public constructor(options: {
    readonly client: DynamoDBDocumentClient;
    readonly tableName: string;
    readonly dueIndex?: string;
  }) {
    this.client = options.client;
    this.tableName = options.tableName;
    this.dueIndex = options.dueIndex ?? DUE_INDEX;
  }

  public async openAggregate(
    header: AggregateHeader,
    request?: StoredPayload & { readonly expiresAt: number },
  ): Promise<{ created: boolean; header: AggregateHeader }> {
    const pk = aggregateKey(header.aggregateId);
    // The request first, then the header: a reader that finds the header always finds its
    // request. Two requests racing for one id may both write it; the header decides which one
    // owns the aggregate, and the request item names its request id, so the loser's is ignored.
    if (request) {
      await this.client
        .send(
          new PutCommand({
            TableName: this.tableName,
            Item: {
              pk,
              sk: SortKey.REQUEST,
              requestId: header.requestId,
              request: request.payload,
              ...(request.payloadRef ? { requestRef: request.payloadRef } : {}),
              expiresAt: request.expiresAt,
            },
            ConditionExpression: 'attribute_not_exists(sk) OR requestId = :rid',
            ExpressionAttributeValues: { ':rid': header.requestId ?? null },
          }),
        )
        .catch((error: unknown) => {
          // Another request wrote it first: the header below tells who owns the id.
          if (!(error instanceof ConditionalCheckFailedException)) throw error;
        });
    }
    try {
      await this.client.send(
        new PutCommand({
          TableName: this.tableName,
          Item: { pk, sk: SortKey.HEADER, ...headerAttributes(header) },
          ConditionExpression: 'attribute_not_exists(pk)',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return { created: true, header };
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
      const existing = error.Item
        ? toHeader(unmarshallLoose(error.Item))
        : await this.getHeader(header.aggregateId);
      if (!existing) throw error;
      return { created: false, header: existing };
    }
  }

  public async markDispatched(aggregateId: string, upTo: number): Promise<void> {
    await this.client
      .send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { pk: aggregateKey(aggregateId), sk: SortKey.HEADER },
          UpdateExpression: 'SET dispatchedUpTo = :n',
          ConditionExpression:
            'attribute_exists(pk) AND (attribute_not_exists(dispatchedUpTo) OR dispatchedUpTo < :n)',
          ExpressionAttributeValues: { ':n': upTo },
        }),
      )
      .catch((error: unknown) => {
        // Another attempt recorded more progress already.
        if (!(error instanceof ConditionalCheckFailedException)) throw error;
      });
  }

  public async getHeader(
    aggregateId: string,
    options: { readonly consistent?: boolean } = {},
  ): Promise<AggregateHeader | undefined> {
    const { Item } = await this.client.send(
      new GetCommand({
        TableName: this.tableName,
        Key: { pk: aggregateKey(aggregateId), sk: SortKey.HEADER },
        ConsistentRead: options.consistent ?? true,
      }),
    );
    return Item ? toHeader(Item) : undefined;
  }

  public async getRequest(aggregateId: string): Promise<StoredPayload | undefined> {
    const { Item } = await this.client.send(
      new GetCommand({
        TableName: this.tableName,
        Key: { pk: aggregateKey(aggregateId), sk: SortKey.REQUEST },
        ConsistentRead: true,
      }),
    );
    if (!Item) return undefined;
    return {
      payload: String(Item.request ?? ''),
      ...(Item.requestRef ? { payloadRef: Item.requestRef as PayloadPointer } : {}),
    };
  }

  /**
   * One conditional put: the reply's own item, nothing shared. A reply is 1 write unit when its
   * stored form is at most 1 KB, and never contends with the other replies of its aggregate.
   */
  public async putReply(
    aggregateId: string,
    reply: ReplyToRecord,
    shards = 1,
  ): Promise<'recorded' | 'duplicate'> {
    const put = new PutCommand({
      TableName: this.tableName,
      Item: replyItem(aggregateId, reply, shards),
      ConditionExpression: 'attribute_not_exists(sk)',
    });
    for (let attempt = 0; ; attempt += 1) {
      try {
        await this.client.send(put);
        return 'recorded';
      } catch (error) {
        if (error instanceof ConditionalCheckFailedException) return 'duplicate';
        // A hot aggregate's partition is throttled: wait for it here, past the SDK's own few
        // retries, rather than fail the batch back to SQS for a whole visibility timeout.
        if (!isThrottled(error) || attempt >= DynamoStateStore.THROTTLE_RETRIES) throw error;
        await sleep(Math.random() * Math.min(1000, 20 * 2 ** attempt));
      }
    }
  }

  /** Replies recorded (not late) with index ids from `first` to `last` inclusive: one range query. */
  public async countRange(aggregateId: string, first: number, last: number, shards = 1): Promise<number> {
    const items = await this.queryAll({
      TableName: this.tableName,
      KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
      ExpressionAttributeValues: {
        // A block's ids share a shard (replyShard), so the range is one query.
        ':pk': replyPartitionKey(aggregateId, String(first), shards),
        ':from': replyKey(String(first)),
        ':to': replyKey(String(last)),
      },
      ProjectionExpression: 'late, receivedAt',
      ConsistentRead: true,
    });
    return items.filter((item) => item.late !== true && item.receivedAt !== undefined).length;
  }

  public async markBlockComplete(aggregateId: string, block: number, expiresAt: number): Promise<void> {
    await this.client.send(
      new PutCommand({
        TableName: this.tableName,
        Item: { pk: aggregateKey(aggregateId), sk: blockKey(block), expiresAt },
      }),
    );
  }

  public async addToCounter(
    aggregateId: string,
    count: number,
    expiresAt: number,
    options: { readonly shard?: number; readonly shards?: number } = {},
  ): Promise<number> {
    const shard = options.shard ?? 0;
    const shards = options.shards ?? 1;
    // One counter per write shard, so a hot sharded aggregate's triggers spread like its replies,
    // each under a key of its own (counterKey): the busiest key of a hot aggregate then takes its
    // reply puts and nothing per batch.
    const { Attributes } = await this.client.send(
      new UpdateCommand({
        TableName: this.tableName,
        Key: { pk: counterKey(aggregateId, shard), sk: SortKey.COUNTER },
        UpdateExpression: 'ADD replies :n SET expiresAt = if_not_exists(expiresAt, :exp)',
        ExpressionAttributeValues: { ':n': count, ':exp': expiresAt },
        ReturnValues: 'UPDATED_NEW',
      }),
    );
    let total = Number(Attributes?.replies ?? count);
    if (shards > 1) {
      const others = await Promise.all(
        Array.from({ length: shards }, (_, s) => s)
          .filter((s) => s !== shard)
          .map((s) =>
            this.client.send(
              new GetCommand({
                TableName: this.tableName,
                Key: { pk: counterKey(aggregateId, s), sk: SortKey.COUNTER },
                ConsistentRead: true,
              }),
            ),
          ),
      );
      for (const { Item } of others) total += Number(Item?.replies ?? 0);
    }
    return total;
  }

  public async countCompleteBlocks(aggregateId: string): Promise<number> {
    const items = await this.queryAll({
      TableName: this.tableName,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :k)',
      ExpressionAttributeValues: { ':pk': aggregateKey(aggregateId), ':k': SortKey.BLOCK },
      ProjectionExpression: 'sk',
      ConsistentRead: true,
    });
    return items.length;
  }

  public async readAggregate(aggregateId: string): Promise<AggregateSnapshot> {
    const items = await this.queryAll({
      TableName: this.tableName,
      KeyConditionExpression: 'pk = :pk AND sk BETWEEN :h AND :r',
      ExpressionAttributeValues: {
        ':pk': aggregateKey(aggregateId),
        ':h': SortKey.HEADER,
        ':r': SortKey.REPLIES_END,
      },
      ConsistentRead: true,
    });
    let header: AggregateHeader | undefined;
    const replies: StoredReply[] = [];
    const collect = (rows: Record<string, unknown>[]) => {
      for (const item of rows) {
        if (item.sk === SortKey.HEADER) header = toHeader(item);
        else if (String(item.sk).startsWith(SortKey.REPLY) && item.receivedAt !== undefined)
          replies.push(toReply(item));
      }
    };
    collect(items);
    const shards = header?.shards ?? 1;
    if (shards > 1) {
      // Shard 0 shares the header's key; the others are read alongside, each consistently.
      const others = await Promise.all(
        Array.from({ length: shards - 1 }, (_, i) =>
          this.queryAll({
            TableName: this.tableName,
            KeyConditionExpression: 'pk = :pk AND begins_with(sk, :r)',
            ExpressionAttributeValues: { ':pk': shardKey(aggregateId, i + 1), ':r': SortKey.REPLY },
            ConsistentRead: true,
          }),
        ),
      );
      for (const rows of others) collect(rows);
    }
    return { ...(header ? { header } : {}), replies };
  }

  /*
   * The seal. Its condition is the whole of "exactly one completion": only an open header can be
   * sealed, and the member set and outcome written here are what every later attempt publishes.
   *
   *   reply handler:  put R#x ──► read H … R$ ──► open? its reply is in any later seal's set
   *   completer:      read H … R$ ──► build ──► seal(members) ──► read R# again: any reply not a
   *                   member was recorded after the read, and is routed late
   */
  public async seal(aggregateId: string, seal: Seal): Promise<AggregateHeader | undefined> {
    const pk = aggregateKey(aggregateId);
    try {
      const { Attributes } = await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { pk, sk: SortKey.HEADER },
          UpdateExpression:
            'SET #status = :completing, outcome = :outcome, members = :members, received = :received, ' +
            // The due entry stays where the open put it (the deadline, or the end of the allowed
            // life): moving it would rewrite the index entry, 2 of the aggregate's write units.
            // A crashed completer is finished by the redelivery of the message that made it
            // complete (every consumed queue's visibility timeout outlasts the lease); a
            // completer that fails brings the entry forward with recoverAt. if_not_exists only
            // gives an entry to a header that has none.
            'completingAt = :at, lease = :lease, leaseUntil = :until, ' +
            'dueAt = if_not_exists(dueAt, :until), dueShard = if_not_exists(dueShard, :shard)' +
            (seal.reason !== undefined ? ', reason = :reason' : '') +
            (seal.completedBy !== undefined ? ', completedBy = :completedBy' : ''),
          ConditionExpression: '#status = :open',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: {
            ':completing': AggregateStatus.COMPLETING,
            ':open': AggregateStatus.OPEN,
            ':outcome': seal.outcome,
            ':members': encodeMembers(seal.members),
            ':received': seal.members.length,
            ':at': seal.at,
            ':lease': seal.lease,
            ':until': seal.leaseUntil,
            ':shard': dueShard(pk),
            ...(seal.reason !== undefined ? { ':reason': seal.reason } : {}),
            ...(seal.completedBy !== undefined ? { ':completedBy': seal.completedBy } : {}),
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

  public async takeOver(
    aggregateId: string,
    from: string,
    lease: string,
    leaseUntil: number,
  ): Promise<AggregateHeader | undefined> {
    const pk = aggregateKey(aggregateId);
    try {
      const { Attributes } = await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { pk, sk: SortKey.HEADER },
          UpdateExpression: 'SET lease = :lease, leaseUntil = :until, dueAt = :until',
          ConditionExpression: '#status = :completing AND lease = :from',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: {
            ':completing': AggregateStatus.COMPLETING,
            ':from': from,
            ':lease': lease,
            ':until': leaseUntil,
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

  public async recoverAt(aggregateId: string, lease: string, at: number): Promise<void> {
    const pk = aggregateKey(aggregateId);
    await this.client
      .send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { pk, sk: SortKey.HEADER },
          UpdateExpression: 'SET dueAt = :at, dueShard = :shard',
          // Only earlier, and only while this lease still holds it: a due entry already sooner,
          // a lease taken over or an aggregate closed meanwhile are left as they are.
          ConditionExpression:
            '#status = :completing AND lease = :held AND (attribute_not_exists(dueAt) OR dueAt > :at)',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: {
            ':at': at,
            ':shard': dueShard(pk),
            ':completing': AggregateStatus.COMPLETING,
            ':held': lease,
          },
        }),
      )
      .catch((error: unknown) => {
        if (!(error instanceof ConditionalCheckFailedException)) throw error;
      });
  }

  public async moveDeadline(aggregateId: string, from: number, to: number): Promise<boolean> {
    const pk = aggregateKey(aggregateId);
    try {
      await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { pk, sk: SortKey.HEADER },
          UpdateExpression: 'SET deadline = :to, dueAt = :to, dueShard = if_not_exists(dueShard, :shard)',
          ConditionExpression: '#status = :open AND deadline = :from',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: {
            ':open': AggregateStatus.OPEN,
            ':from': from,
            ':to': to,
            ':shard': dueShard(pk),
          },
        }),
      );
      return true;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return false;
      throw error;
    }
  }

  public async markSnapshot(
    aggregateId: string,
    period: number,
  ): Promise<'marked' | 'already' | 'passed' | 'closed'> {
    try {
      await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { pk: aggregateKey(aggregateId), sk: SortKey.HEADER },
          UpdateExpression: 'SET lastSnapshot = :n',
          ConditionExpression:
            '#status = :open AND (attribute_not_exists(lastSnapshot) OR lastSnapshot < :n)',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: { ':open': AggregateStatus.OPEN, ':n': period },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return 'marked';
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
      const old = error.Item ? unmarshallLoose(error.Item) : undefined;
      if (old?.status !== AggregateStatus.OPEN) return 'closed';
      return Number(old.lastSnapshot) === period ? 'already' : 'passed';
    }
  }

  public async markEmitted(
    aggregateId: string,
    lease: string,
    channels: readonly OutputChannel[],
  ): Promise<boolean> {
    return this.underLease(aggregateId, lease, {
      UpdateExpression: 'SET emitted = :channels',
      ExpressionAttributeValues: { ':channels': [...channels] },
    });
  }

  public async close(aggregateId: string, lease: string, expiresAt: number): Promise<boolean> {
    return this.underLease(aggregateId, lease, {
      UpdateExpression:
        'SET #status = :closed, expiresAt = :exp REMOVE dueAt, dueShard, params, lease, leaseUntil, emitted',
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: { ':closed': AggregateStatus.CLOSED, ':exp': expiresAt },
    });
  }

  /** An update that only the holder of the current lease may make. */
  private async underLease(
    aggregateId: string,
    lease: string,
    update: {
      UpdateExpression: string;
      ExpressionAttributeNames?: Record<string, string>;
      ExpressionAttributeValues: Record<string, unknown>;
    },
  ): Promise<boolean> {
    try {
      await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { pk: aggregateKey(aggregateId), sk: SortKey.HEADER },
          UpdateExpression: update.UpdateExpression,
          ConditionExpression: '#status = :completing AND lease = :held',
          ExpressionAttributeNames: { '#status': 'status', ...update.ExpressionAttributeNames },
          ExpressionAttributeValues: {
            ...update.ExpressionAttributeValues,
            ':completing': AggregateStatus.COMPLETING,
            ':held': lease,
          },
        }),
      );
      return true;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return false;
      throw error;
    }
  }

  public async markLate(
    aggregateId: string,
    replyId: string,
    expiresAt: number,
    shards = 1,
  ): Promise<boolean> {
    const pk = aggregateKey(aggregateId);
    try {
      await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { pk: replyPartitionKey(aggregateId, replyId, shards), sk: replyKey(replyId) },
          UpdateExpression: 'SET late = :true, replyId = :id, expiresAt = if_not_exists(expiresAt, :exp)',
          ConditionExpression: 'attribute_not_exists(late)',
          ExpressionAttributeValues: { ':true': true, ':id': replyId, ':exp': expiresAt },
        }),
      );
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return false;
      throw error;
    }
    // Counted once per late reply: only the invocation that marked it adds it.
    await this.client
      .send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { pk, sk: SortKey.HEADER },
          UpdateExpression: 'ADD lateCount :one',
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeValues: { ':one': 1 },
        }),
      )
      .catch((error: unknown) => {
        if (!(error instanceof ConditionalCheckFailedException)) throw error;
      });
    return true;
  }

  public async holdReply(held: HeldReply): Promise<boolean> {
    try {
      await this.client.send(
        new PutCommand({
          TableName: this.tableName,
          Item: heldItem(held),
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
        Key: { pk: aggregateKey(aggregateId), sk: heldKey(replyId) },
        ConsistentRead: true,
      }),
    );
    return Item ? toHeld(aggregateId, Item) : undefined;
  }

  public async listHeld(aggregateId: string): Promise<HeldReply[]> {
    const items = await this.queryAll({
      TableName: this.tableName,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :u)',
      ExpressionAttributeValues: { ':pk': aggregateKey(aggregateId), ':u': SortKey.HELD },
      ConsistentRead: true,
    });
    return items.map((item) => toHeld(aggregateId, item));
  }

  public async claimHeld(aggregateId: string, replyId: string, claim: HeldClaim): Promise<boolean> {
    try {
      await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { pk: aggregateKey(aggregateId), sk: heldKey(replyId) },
          UpdateExpression: 'SET claimed = :claim',
          ConditionExpression: 'attribute_exists(sk) AND (attribute_not_exists(claimed) OR claimed = :claim)',
          ExpressionAttributeValues: { ':claim': claim },
        }),
      );
      return true;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return false;
      throw error;
    }
  }

  public async deleteHeld(aggregateId: string, replyId: string): Promise<void> {
    await this.client.send(
      new DeleteCommand({
        TableName: this.tableName,
        Key: { pk: aggregateKey(aggregateId), sk: heldKey(replyId) },
      }),
    );
  }

  public async dueItems(now: number, limit: number): Promise<DueItem[]> {
    // Every shard gets its share, so items that keep failing in one shard (they are deferred, see
    // deferDue) can never starve the others.
    const share = Math.max(1, Math.ceil(limit / DUE_SHARDS));
    const shards = await Promise.all(
      Array.from({ length: DUE_SHARDS }, (_, shard) =>
        this.queryAll(
          {
            TableName: this.tableName,
            IndexName: this.dueIndex,
            KeyConditionExpression: 'dueShard = :s AND dueAt <= :now',
            ExpressionAttributeValues: { ':s': dueShardKey(shard), ':now': now },
          },
          share,
        ),
      ),
    );
    const due = shards
      .flat()
      .map(toDueItem)
      .filter((item): item is DueItem => item !== undefined);
    return due.sort((a, b) => a.dueAt - b.dueAt).slice(0, limit);
  }

  public async deferDue(item: DueItem, until: number): Promise<void> {
    const sk = item.kind === 'aggregate' ? SortKey.HEADER : heldKey(item.replyId);
    await this.client
      .send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { pk: aggregateKey(item.aggregateId), sk },
          UpdateExpression: 'SET dueAt = :until ADD dueFailures :one',
          // Only if nothing moved it meanwhile (a completion, a consolidation).
          ConditionExpression: 'dueAt = :was',
          ExpressionAttributeValues: { ':until': until, ':was': item.dueAt, ':one': 1 },
        }),
      )
      .catch((error: unknown) => {
        if (!(error instanceof ConditionalCheckFailedException)) throw error;
      });
  }

  /**
   * The open and completing aggregates, of one definition or all, oldest first, each with its
   * replies counted. Every such header is in the `due` index (its deadline, its allowed life or its
   * lease), so the listing reads the index's keys (cheap, keys only), then each aggregate
   * consistently — which also drops one that closed since the index was read.
   */
  public async listActive(definition?: string): Promise<AggregateHeader[]> {
    const shards = await Promise.all(
      Array.from({ length: DUE_SHARDS }, (_, shard) =>
        this.queryAll({
          TableName: this.tableName,
          IndexName: this.dueIndex,
          KeyConditionExpression: 'dueShard = :s',
          ExpressionAttributeValues: { ':s': dueShardKey(shard) },
        }),
      ),
    );
    const ids = [
      ...new Set(
        shards
          .flat()
          .map(toDueItem)
          .filter((k) => k?.kind === 'aggregate')
          .map((k) => (k as DueItem).aggregateId),
      ),
    ];
    const headers: (AggregateHeader | undefined)[] = new Array(ids.length);
    let next = 0;
    const reader = async () => {
      for (let i = next++; i < ids.length; i = next++) {
        const { header, replies } = await this.readAggregate(ids[i] as string);
        if (!header || (definition !== undefined && header.definition !== definition)) continue;
        // An open header counts nothing (no reply writes it); a sealed one has its member count.
        headers[i] =
          header.status === AggregateStatus.OPEN
            ? { ...header, received: replies.filter((r) => !r.late).length }
            : header;
      }
    };
    await Promise.all(Array.from({ length: Math.min(DynamoStateStore.LIST_READERS, ids.length) }, reader));
    return headers
      .filter(
        (h): h is AggregateHeader =>
          h?.status === AggregateStatus.OPEN || h?.status === AggregateStatus.COMPLETING,
      )
      .sort((x, y) => x.openedAt - y.openedAt);
  }

  public async listOpen(definition: string): Promise<AggregateHeader[]> {
    return (await this.listActive(definition)).filter((h) => h.status === AggregateStatus.OPEN);
  }

  public async getParameters(definition: string): Promise<RuntimeParameters> {
    const { Item } = await this.client.send(
      new GetCommand({
        TableName: this.tableName,
        Key: { pk: parametersKey(definition), sk: SortKey.PARAMETERS },
        ConsistentRead: true,
      }),
    );
    return (Item?.parameters as RuntimeParameters | undefined) ?? {};
  }

  public async setParameters(definition: string, parameters: RuntimeParameters): Promise<void> {
    await this.client.send(
      new PutCommand({
        TableName: this.tableName,
        Item: { pk: parametersKey(definition), sk: SortKey.PARAMETERS, parameters },
      }),
    );
  }

  /** Every item a query matches (up to `limit`), page by page with the SDK's paginator. */
  private async queryAll(
    input: QueryCommandInput,
    limit = Number.POSITIVE_INFINITY,
  ): Promise<Record<string, unknown>[]> {
    const items: Record<string, unknown>[] = [];
    const pages = paginateQuery(
      { client: this.client, ...(Number.isFinite(limit) ? { pageSize: limit } : {}) },
      input,
    );
    for await (const page of pages) {
      items.push(...(page.Items ?? []));
      if (items.length >= limit) break;
    }
    return items.slice(0, limit);
  }
}

function isThrottled(error: unknown): boolean {
  const name = (error as { name?: unknown } | undefined)?.name;
  return (
    name === 'ProvisionedThroughputExceededException' ||
    name === 'ThrottlingException' ||
    name === 'RequestLimitExceeded'
  );
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
