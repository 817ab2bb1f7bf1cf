import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import {
  DeleteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  type QueryCommandInput,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { type CompletedBy, openDueAt } from '../engine/completion.ts';
import { AggregateStatus, type Outcome } from '../engine/constants.ts';
import type { RuntimeParameters } from '../engine/definition.ts';
import { decodeMembers, encodeMembers, replyShard } from '../engine/members.ts';
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
import { decodePayload, encodePayload } from './payload-codec.ts';

/**
 * The DynamoDB state store. One table:
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
 * GSI `due` (`dueShard`, `dueAt`, keys only): open headers (their deadline, or `closeBy`),
 * completing headers (their lease) and held replies — what the sweeper must look at, and, since
 * every open aggregate has an allowed life, also what a listing of active aggregates reads. One
 * index, so an aggregate's whole life costs two index writes besides its lease.
 */
export class DynamoStateStore implements StateStore {
  /** Spreads the `due` index over this many partition keys so it never becomes one hot key. */
  public static readonly DUE_SHARDS = 8;
  /** Retries of a throttled reply put beyond the SDK's own, with jittered back-off. */
  private static readonly THROTTLE_RETRIES = 10;
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
              sk: 'B',
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
          Item: { pk, sk: 'H', ...headerAttributes(header) },
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
          Key: { pk: aggregateKey(aggregateId), sk: 'H' },
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
        Key: { pk: aggregateKey(aggregateId), sk: 'H' },
        ConsistentRead: options.consistent ?? true,
      }),
    );
    return Item ? toHeader(Item) : undefined;
  }

  public async getRequest(aggregateId: string): Promise<StoredPayload | undefined> {
    const { Item } = await this.client.send(
      new GetCommand({
        TableName: this.tableName,
        Key: { pk: aggregateKey(aggregateId), sk: 'B' },
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
      Item: {
        pk: replyPartitionKey(aggregateId, reply.replyId, shards),
        sk: replyKey(reply.replyId),
        replyId: reply.replyId,
        ...encodePayload(reply.payload),
        receivedAt: reply.receivedAt,
        expiresAt: reply.expiresAt,
        ...(reply.payloadRef ? { payloadRef: reply.payloadRef } : {}),
        ...(reply.definition ? { definition: reply.definition } : {}),
        ...(reply.score !== undefined ? { score: reply.score } : {}),
        ...(reply.failure !== undefined ? { failure: reply.failure } : {}),
        ...(reply.messageId ? { messageId: reply.messageId } : {}),
      },
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
        Item: { pk: aggregateKey(aggregateId), sk: `K#${block}`, expiresAt },
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
        Key: { pk: counterKey(aggregateId, shard), sk: 'C' },
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
                Key: { pk: counterKey(aggregateId, s), sk: 'C' },
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
      ExpressionAttributeValues: { ':pk': aggregateKey(aggregateId), ':k': 'K#' },
      ProjectionExpression: 'sk',
      ConsistentRead: true,
    });
    return items.length;
  }

  public async readAggregate(aggregateId: string): Promise<AggregateSnapshot> {
    const items = await this.queryAll({
      TableName: this.tableName,
      KeyConditionExpression: 'pk = :pk AND sk BETWEEN :h AND :r',
      ExpressionAttributeValues: { ':pk': aggregateKey(aggregateId), ':h': 'H', ':r': 'R$' },
      ConsistentRead: true,
    });
    let header: AggregateHeader | undefined;
    const replies: StoredReply[] = [];
    const collect = (rows: Record<string, unknown>[]) => {
      for (const item of rows) {
        if (item.sk === 'H') header = toHeader(item);
        else if (String(item.sk).startsWith('R#') && item.receivedAt !== undefined)
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
            ExpressionAttributeValues: { ':pk': shardKey(aggregateId, i + 1), ':r': 'R#' },
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
          Key: { pk, sk: 'H' },
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
          Key: { pk, sk: 'H' },
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
          Key: { pk, sk: 'H' },
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
          Key: { pk, sk: 'H' },
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
          Key: { pk: aggregateKey(aggregateId), sk: 'H' },
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
          Key: { pk: aggregateKey(aggregateId), sk: 'H' },
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
          Key: { pk, sk: 'H' },
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
            ...(held.bodyRef ? { bodyRef: held.bodyRef } : {}),
            attributes: held.attributes,
            messageId: held.messageId,
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

  public async claimHeld(aggregateId: string, replyId: string, claim: HeldClaim): Promise<boolean> {
    try {
      await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { pk: aggregateKey(aggregateId), sk: `U#${replyId}` },
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
        Key: { pk: aggregateKey(aggregateId), sk: `U#${replyId}` },
      }),
    );
  }

  public async dueItems(now: number, limit: number): Promise<DueItem[]> {
    // Every shard gets its share, so items that keep failing in one shard (they are deferred, see
    // deferDue) can never starve the others.
    const share = Math.max(1, Math.ceil(limit / DynamoStateStore.DUE_SHARDS));
    const shards = await Promise.all(
      Array.from({ length: DynamoStateStore.DUE_SHARDS }, (_, shard) =>
        this.queryAll(
          {
            TableName: this.tableName,
            IndexName: 'due',
            KeyConditionExpression: 'dueShard = :s AND dueAt <= :now',
            ExpressionAttributeValues: { ':s': `due#${shard}`, ':now': now },
          },
          share,
        ),
      ),
    );
    const due: DueItem[] = [];
    for (const item of shards.flat()) {
      const aggregateId = String(item.pk).slice(2);
      const sk = String(item.sk);
      const dueAt = Number(item.dueAt);
      if (sk === 'H') due.push({ kind: 'aggregate', aggregateId, dueAt });
      else if (sk.startsWith('U#')) due.push({ kind: 'held', aggregateId, replyId: sk.slice(2), dueAt });
    }
    return due.sort((a, b) => a.dueAt - b.dueAt).slice(0, limit);
  }

  public async deferDue(item: DueItem, until: number): Promise<void> {
    const sk = item.kind === 'aggregate' ? 'H' : `U#${item.replyId}`;
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
      Array.from({ length: DynamoStateStore.DUE_SHARDS }, (_, shard) =>
        this.queryAll({
          TableName: this.tableName,
          IndexName: 'due',
          KeyConditionExpression: 'dueShard = :s',
          ExpressionAttributeValues: { ':s': `due#${shard}` },
        }),
      ),
    );
    const ids = [
      ...new Set(
        shards
          .flat()
          .filter((k) => k.sk === 'H')
          .map((k) => String(k.pk).slice(2)),
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
      const page = await this.client.send(
        new QueryCommand({
          ...input,
          ExclusiveStartKey,
          ...(Number.isFinite(limit) ? { Limit: limit - items.length } : {}),
        }),
      );
      items.push(...(page.Items ?? []));
      ExclusiveStartKey = page.LastEvaluatedKey;
    } while (ExclusiveStartKey && items.length < limit);
    return items.slice(0, limit);
  }
}

/** The partition key of an aggregate's items. */
export function aggregateKey(aggregateId: string): string {
  return `A#${aggregateId}`;
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

/** The partition key of write shard `shard` of an aggregate (shard 0 is the aggregate's own key). */
export function shardKey(aggregateId: string, shard: number): string {
  return shard === 0 ? aggregateKey(aggregateId) : `A#${aggregateId}#${shard}`;
}

/** The partition key of an aggregate's completion-trigger counter for write shard `shard`. */
export function counterKey(aggregateId: string, shard: number): string {
  return `A#${aggregateId}#c${shard}`;
}

/** The partition key a reply of an aggregate spread over `shards` keys is written under. */
export function replyPartitionKey(aggregateId: string, replyId: string, shards: number): string {
  return shardKey(aggregateId, replyShard(replyId, shards));
}

/**
 * The sort key of a reply. Index reply ids (a splitter's or recipient list's `0 … N-1`) are
 * zero-padded, so a range of them is one contiguous range query; any other id keeps its text,
 * behind a `~` when it starts with a digit or `~`, so no two ids share a key.
 */
export function replyKey(replyId: string): string {
  if (/^(0|[1-9]\d{0,9})$/.test(replyId) && replyId.length <= 10) return `R#${replyId.padStart(10, '0')}`;
  return /^[0-9~]/.test(replyId) ? `R#~${replyId}` : `R#${replyId}`;
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

function headerAttributes(header: AggregateHeader): Record<string, unknown> {
  const pk = aggregateKey(header.aggregateId);
  const due = openDueAt(header);
  const attributes: Record<string, unknown> = {
    kind: 'aggregate',
    aggregateId: header.aggregateId,
    definition: header.definition,
    status: header.status,
    expected: header.expected,
    lateCount: 0,
    openedAt: header.openedAt,
    deadline: header.deadline,
    closeBy: header.closeBy,
    params: header.params,
    requestId: header.requestId,
    openedBy: header.openedBy,
    ...(header.shards !== undefined && header.shards > 1 ? { shards: header.shards } : {}),
    ...(due !== undefined ? { dueAt: due, dueShard: dueShard(pk) } : {}),
  };
  for (const [name, value] of Object.entries(attributes)) if (value === undefined) delete attributes[name];
  return attributes;
}

function optionalNumber(value: unknown): number | undefined {
  return value === undefined || value === null ? undefined : Number(value);
}

function toHeader(item: Record<string, unknown>): AggregateHeader {
  const numbers = {
    expected: optionalNumber(item.expected),
    deadline: optionalNumber(item.deadline),
    closeBy: optionalNumber(item.closeBy),
    dispatchedUpTo: optionalNumber(item.dispatchedUpTo),
    shards: optionalNumber(item.shards),
    completingAt: optionalNumber(item.completingAt),
    leaseUntil: optionalNumber(item.leaseUntil),
    expiresAt: optionalNumber(item.expiresAt),
  };
  const defined = Object.fromEntries(Object.entries(numbers).filter(([, v]) => v !== undefined));
  return {
    aggregateId: String(item.aggregateId),
    definition: String(item.definition),
    status: item.status as AggregateStatus,
    ...(item.outcome ? { outcome: item.outcome as Outcome } : {}),
    ...(item.reason !== undefined ? { reason: String(item.reason) } : {}),
    ...(item.completedBy !== undefined ? { completedBy: item.completedBy as CompletedBy } : {}),
    received: Number(item.received ?? 0),
    lateCount: Number(item.lateCount ?? 0),
    openedAt: Number(item.openedAt),
    params: (item.params as AggregateHeader['params'] | undefined) ?? {},
    ...(item.requestId ? { requestId: String(item.requestId) } : {}),
    ...(item.openedBy ? { openedBy: String(item.openedBy) } : {}),
    ...(typeof item.members === 'string' ? { members: decodeMembers(item.members) } : {}),
    ...(item.lease ? { lease: String(item.lease) } : {}),
    ...(Array.isArray(item.emitted) ? { emitted: item.emitted as OutputChannel[] } : {}),
    ...defined,
  };
}

function toReply(item: Record<string, unknown>): StoredReply {
  return {
    replyId: String(item.replyId),
    payload: decodePayload(item),
    receivedAt: Number(item.receivedAt),
    expiresAt: Number(item.expiresAt ?? 0),
    ...(item.payloadRef ? { payloadRef: item.payloadRef as PayloadPointer } : {}),
    ...(item.definition ? { definition: String(item.definition) } : {}),
    ...(item.score !== undefined ? { score: Number(item.score) } : {}),
    ...(item.failure !== undefined ? { failure: String(item.failure) } : {}),
    ...(item.messageId ? { messageId: String(item.messageId) } : {}),
    ...(item.late === true ? { late: true } : {}),
  };
}

function toHeld(aggregateId: string, item: Record<string, unknown>): HeldReply {
  return {
    aggregateId,
    replyId: String(item.replyId),
    ...(item.definition ? { definition: String(item.definition) } : {}),
    body: String(item.body ?? ''),
    ...(item.bodyRef ? { bodyRef: item.bodyRef as PayloadPointer } : {}),
    attributes: (item.attributes as Record<string, string> | undefined) ?? {},
    messageId: String(item.messageId ?? `held/${String(item.replyId)}`),
    receivedAt: Number(item.receivedAt),
    dueAt: Number(item.dueAt),
    ...(item.claimed ? { claimed: item.claimed as HeldClaim } : {}),
  };
}

/** `ALL_OLD` items come back in the low-level shape from a document client's exception. */
function unmarshallLoose(item: Record<string, unknown>): Record<string, unknown> {
  const first = Object.values(item)[0];
  const lowLevel =
    first !== null &&
    typeof first === 'object' &&
    Object.keys(first).length === 1 &&
    ['S', 'N', 'BOOL', 'M', 'L', 'NULL', 'SS', 'NS'].includes(Object.keys(first)[0] ?? '');
  // biome-ignore lint/suspicious/noExplicitAny: util-dynamodb's types are for AttributeValue maps
  return lowLevel ? (unmarshall(item as any) as Record<string, unknown>) : item;
}
