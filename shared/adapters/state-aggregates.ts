import { ConditionalCheckFailedException, TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { AggregateStatus } from '../engine/constants.ts';
import { quoted } from '../engine/limits.ts';
import { BadMessageError } from '../errors.ts';
import type {
  AggregateHeader,
  AggregateSnapshot,
  LateMark,
  PayloadPointer,
  ReplyFate,
  ReplyToRecord,
  StoredPayload,
  StoredReply,
} from '../ports.ts';
import {
  headerAttributes,
  MEMBER_CHUNK_PREFIX,
  type MemberSetRef,
  memberChunkKey,
  memberSetOf,
  memberSetRefOf,
  replyItem,
  toHeader,
  toReply,
  unmarshallLoose,
} from './state-items.ts';
import { aggregateKey, replyKey, replyPartitionKey, SortKey, shardKey } from './state-keys.ts';
import { expandPack, packIdsOf, packItem, planWrites, resolveCopies } from './state-packs.ts';
import { queryAll, type StateTable, unlessConditionFails } from './state-table.ts';

/**
 * An aggregate's own items in the state table (the layout is drawn on `DynamoStateStore`,
 * dynamo-state-store.ts): the request and the header written at its open, its dispatch progress,
 * one item per reply or one pack of a batch's replies (state-packs.ts), a reply marked late — and
 * the one consistent read of the header with every reply. The header's later transitions (seal,
 * lease, deadline, close) are in state-completion.ts.
 */

/** Retries of a throttled reply put beyond the SDK's own, with jittered back-off. */
const THROTTLE_RETRIES = 10;

/**
 * The attribute of a late mark that a reply reported unknown has ({@link markUnknown}): `unknown`
 * while it owes the unknown output, `sent` once that output was sent ({@link markUnknownSent}).
 */
const OWES = 'owes';
const OWES_UNKNOWN = 'unknown' as const;
const UNKNOWN_SENT = 'sent';
/**
 * The same attribute on a late mark the completer writes ({@link markLate} with `owes`): `late`
 * while its late output is owed, `late-sent` once sent ({@link markLateSent}). Not `sent`: a mark
 * without a body owing `sent` is a reply reported unknown whose output was sent ({@link markLate}
 * answers `reported` for it).
 */
const OWES_LATE = 'late' as const;
const LATE_SENT = 'late-sent';

export async function openAggregate(
  table: StateTable,
  header: AggregateHeader,
  request?: StoredPayload & { readonly expiresAt: number },
): Promise<{ created: boolean; header: AggregateHeader }> {
  const pk = aggregateKey(header.aggregateId);
  // The request first, then the header: a reader that finds the header always finds its
  // request. Of two requests racing for one id, the first to write its request item claims the
  // id: the other must not write the header, or the aggregate it opened would read the first
  // one's request (the first one's retry opens it, or has).
  if (request) {
    const stored = await unlessConditionFails(
      table.client.send(
        new PutCommand({
          TableName: table.tableName,
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
      ),
    );
    if (stored === undefined) {
      // Another request's item: its header, if written, says who owns the aggregate.
      const existing = await getHeader(table, header.aggregateId);
      if (existing) return { created: false, header: existing };
      throw new BadMessageError(
        `aggregate id ${quoted(header.aggregateId)} is already in use by another request`,
      );
    }
  }
  try {
    await table.client.send(
      new PutCommand({
        TableName: table.tableName,
        Item: {
          pk,
          sk: SortKey.HEADER,
          ...headerAttributes(header),
          ...(header.askedUpTo !== undefined ? { askedUpTo: header.askedUpTo } : {}),
        },
        ConditionExpression: 'attribute_not_exists(pk)',
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
    return { created: true, header };
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
    const existing = error.Item
      ? await headerOf(table, unmarshallLoose(error.Item))
      : await getHeader(table, header.aggregateId);
    if (!existing) throw error;
    return { created: false, header: existing };
  }
}

export async function markDispatched(table: StateTable, aggregateId: string, upTo: number): Promise<void> {
  // A failed condition: another attempt recorded more progress already.
  await unlessConditionFails(
    table.client.send(
      new UpdateCommand({
        TableName: table.tableName,
        Key: { pk: aggregateKey(aggregateId), sk: SortKey.HEADER },
        UpdateExpression: 'SET dispatchedUpTo = :n',
        ConditionExpression:
          'attribute_exists(pk) AND (attribute_not_exists(dispatchedUpTo) OR dispatchedUpTo < :n)',
        ExpressionAttributeValues: { ':n': upTo },
      }),
    ),
  );
}

/** Raises `askedUpTo` to `upTo` (before those sub-requests are sent) while open; never lowers it. */
export async function markAsked(table: StateTable, aggregateId: string, upTo: number): Promise<void> {
  // A failed condition: another attempt raised it as far already.
  await unlessConditionFails(
    table.client.send(
      new UpdateCommand({
        TableName: table.tableName,
        Key: { pk: aggregateKey(aggregateId), sk: SortKey.HEADER },
        UpdateExpression: 'SET askedUpTo = :n',
        // Only while open: a sealed result's never-asked list is fixed with its header.
        ConditionExpression: '#status = :open AND (attribute_not_exists(askedUpTo) OR askedUpTo < :n)',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':n': upTo, ':open': AggregateStatus.OPEN },
      }),
    ),
  );
}

export async function getHeader(
  table: StateTable,
  aggregateId: string,
  options: { readonly consistent?: boolean } = {},
): Promise<AggregateHeader | undefined> {
  const { Item } = await table.client.send(
    new GetCommand({
      TableName: table.tableName,
      Key: { pk: aggregateKey(aggregateId), sk: SortKey.HEADER },
      ConsistentRead: options.consistent ?? true,
    }),
  );
  return Item ? headerOf(table, Item) : undefined;
}

/**
 * A header item as the port's header, its member set read from its chunks when the seal put it
 * there (state-items.ts): from `chunks` when the caller's query read them already, else by one
 * consistent query of them (they were written before the seal, and never change). A member set
 * whose chunks cannot all be read is an error — except on a tombstone, whose chunks expire no
 * sooner than it does: it is past its life, and carries no member set.
 */
export async function headerOf(
  table: StateTable,
  item: Record<string, unknown>,
  chunks?: readonly Record<string, unknown>[],
): Promise<AggregateHeader> {
  // How far a fan-out may have sent its sub-requests: written by this module alone (open, markAsked).
  const asked = typeof item.askedUpTo === 'number' ? { askedUpTo: item.askedUpTo } : {};
  const ref = memberSetRefOf(item);
  if (!ref) return { ...toHeader(item), ...asked };
  const set =
    (chunks && memberSetOf(ref, chunks)) ??
    memberSetOf(ref, await readMemberChunks(table, String(item.pk), ref));
  if (set) return { ...toHeader(item, set), ...asked };
  if (item.status === AggregateStatus.CLOSED) return { ...toHeader(item, 'gone'), ...asked };
  throw new Error(`aggregate ${String(item.aggregateId)}: its sealed member set is missing chunks`);
}

/** The chunks of one sealed member set, in one consistent query. */
async function readMemberChunks(
  table: StateTable,
  pk: string,
  ref: MemberSetRef,
): Promise<Record<string, unknown>[]> {
  return queryAll(table, {
    TableName: table.tableName,
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
    ExpressionAttributeValues: { ':pk': pk, ':prefix': memberChunkKey(ref.key, 0).slice(0, -5) },
    ConsistentRead: true,
  });
}

export async function getRequest(table: StateTable, aggregateId: string): Promise<StoredPayload | undefined> {
  const { Item } = await table.client.send(
    new GetCommand({
      TableName: table.tableName,
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
 *
 * A put that finds the mark {@link markUnknown} left under the reply's key (no reply recorded,
 * `owes: unknown`) is `unknown`: the reply was reported unknown before its aggregate opened, so it
 * is never counted, and it owes the unknown output (whose send may have failed: simulation seed
 * 98), not nothing as a duplicate does.
 */
export async function putReply(
  table: StateTable,
  aggregateId: string,
  reply: ReplyToRecord,
  shards = 1,
): Promise<ReplyFate> {
  const written = await putOnce(table, replyItem(aggregateId, reply, shards), true);
  if (written === true) return 'recorded';
  return owesUnknown(written) ? 'unknown' : 'duplicate';
}

/** Whether an item under a reply's key is the mark of a reply reported unknown (no reply recorded) that still owes its output. */
function owesUnknown(item: Record<string, unknown> | undefined): boolean {
  return item?.[OWES] === OWES_UNKNOWN && item.receivedAt === undefined;
}

/** Whether it is the mark of a reply reported unknown whose unknown output was sent. */
function sentUnknown(item: Record<string, unknown> | undefined): boolean {
  return item?.[OWES] === UNKNOWN_SENT && item.receivedAt === undefined;
}

/**
 * The replies of one batch to one aggregate: a pack where several share a partition key
 * (state-packs.ts), a lone reply in its own item. A pack whose key is taken already (the batch
 * redelivered, or grouped differently) leaves its members that pack holds as duplicates, and
 * records the others one by one (a reply reported unknown is `unknown`, as {@link putReply} says).
 */
export async function putReplies(
  table: StateTable,
  aggregateId: string,
  replies: readonly ReplyToRecord[],
  shards = 1,
): Promise<ReplyFate[]> {
  const fates = new Map<string, ReplyFate>();
  await Promise.all(
    planWrites(aggregateId, replies, shards).map(async (write) => {
      if (write.kind === 'single') {
        fates.set(write.reply.replyId, await putReply(table, aggregateId, write.reply, shards));
        return;
      }
      const written = await putOnce(table, packItem(write.pk, write.replies), true);
      if (written === true) {
        for (const reply of write.replies) fates.set(reply.replyId, 'recorded');
        return;
      }
      const held = new Set(written ? packIdsOf(written) : []);
      await Promise.all(
        write.replies.map(async (reply) =>
          fates.set(
            reply.replyId,
            held.has(reply.replyId) ? 'duplicate' : await putReply(table, aggregateId, reply, shards),
          ),
        ),
      );
    }),
  );
  // A reply id twice in the batch: its first occurrence has the fate, the others are duplicates.
  const seen = new Set<string>();
  return replies.map((reply) => {
    if (seen.has(reply.replyId)) return 'duplicate';
    seen.add(reply.replyId);
    return fates.get(reply.replyId) ?? 'duplicate';
  });
}

/**
 * Puts an item unless its key exists: true when written, else the item already there (undefined
 * when it could not be told). A throttled partition (a hot aggregate) is waited for here, past the
 * SDK's own few retries, rather than failing the batch back to SQS for a whole visibility timeout.
 */
async function putOnce(
  table: StateTable,
  item: Record<string, unknown>,
  returnOld: boolean,
): Promise<true | Record<string, unknown> | undefined> {
  const put = new PutCommand({
    TableName: table.tableName,
    Item: item,
    ConditionExpression: 'attribute_not_exists(sk)',
    ...(returnOld ? { ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const } : {}),
  });
  for (let attempt = 0; ; attempt += 1) {
    try {
      await table.client.send(put);
      return true;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException)
        return error.Item ? unmarshallLoose(error.Item) : undefined;
      if (!isThrottled(error) || attempt >= THROTTLE_RETRIES) throw error;
      await sleep(Math.random() * Math.min(1000, 20 * 2 ** attempt));
    }
  }
}

export async function readAggregate(table: StateTable, aggregateId: string): Promise<AggregateSnapshot> {
  const items = await queryAll(table, {
    TableName: table.tableName,
    KeyConditionExpression: 'pk = :pk AND sk BETWEEN :h AND :r',
    ExpressionAttributeValues: {
      ':pk': aggregateKey(aggregateId),
      ':h': SortKey.HEADER,
      ':r': SortKey.REPLIES_END,
    },
    ConsistentRead: true,
  });
  let headerItem: Record<string, unknown> | undefined;
  // A member set the seal put in chunks sorts between the header and the packs: read here too.
  const chunks: Record<string, unknown>[] = [];
  const copies: StoredReply[] = [];
  const lateIds = new Set<string>();
  const owedIds = new Set<string>();
  const owedLateIds = new Set<string>();
  const collect = (rows: Record<string, unknown>[]) => {
    for (const item of rows) {
      const sk = String(item.sk);
      if (sk === SortKey.HEADER) headerItem = item;
      else if (sk.startsWith(MEMBER_CHUNK_PREFIX)) chunks.push(item);
      else if (sk.startsWith(SortKey.PACK)) copies.push(...expandPack(item));
      else if (sk.startsWith(SortKey.REPLY)) {
        // A late mark alone (a reply recorded only in a pack, then found late) has no body.
        if (item.receivedAt !== undefined) copies.push(toReply(item));
        else if (item.late === true && item.replyId !== undefined) lateIds.add(String(item.replyId));
        // A reply reported unknown, and recorded in a pack since its aggregate opened (putReply
        // finds the mark, a pack put does not): it owes the unknown output.
        if (owesUnknown(item) && item.replyId !== undefined) owedIds.add(String(item.replyId));
        // Routed late by a completer whose late output is not known sent (markLate with owes).
        else if (item[OWES] === OWES_LATE && item.replyId !== undefined)
          owedLateIds.add(String(item.replyId));
      }
    }
  };
  collect(items);
  const header = headerItem ? await headerOf(table, headerItem, chunks) : undefined;
  collect(await readWriteShards(table, aggregateId, header?.shards ?? 1));
  const replies = resolveCopies(header, copies, lateIds).map((r) =>
    owedIds.has(r.replyId)
      ? { ...r, late: true, owes: OWES_UNKNOWN }
      : owedLateIds.has(r.replyId)
        ? { ...r, late: true, owes: OWES_LATE }
        : r,
  );
  return { ...(header ? { header } : {}), replies };
}

/**
 * Marks a reply late, once: `marked` the first time (and counted on the header), `late` when it was
 * marked late before (`owed` when that mark still owes its late output); when its mark is the one
 * {@link markUnknown} left (the reply was reported unknown, so never late), `unknown` while it owes
 * the unknown output, `reported` once it was sent. With `owes`, the mark it writes says its late
 * output is owed (`owes: late`, in the same update): the completer's, whose reply's message was
 * acknowledged long before, so a resumed completer is the only one left to send it.
 */
export async function markLate(
  table: StateTable,
  aggregateId: string,
  replyId: string,
  expiresAt: number,
  shards = 1,
  owes = false,
): Promise<LateMark> {
  const pk = aggregateKey(aggregateId);
  try {
    await table.client.send(
      new UpdateCommand({
        TableName: table.tableName,
        Key: { pk: replyPartitionKey(aggregateId, replyId, shards), sk: replyKey(replyId) },
        UpdateExpression: `SET late = :true, replyId = :id, ${owes ? '#owes = :late, ' : ''}expiresAt = if_not_exists(expiresAt, :exp)`,
        ConditionExpression: 'attribute_not_exists(late)',
        ...(owes ? { ExpressionAttributeNames: { '#owes': OWES } } : {}),
        ExpressionAttributeValues: {
          ':true': true,
          ':id': replyId,
          ':exp': expiresAt,
          ...(owes ? { ':late': OWES_LATE } : {}),
        },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
    const old = error.Item ? unmarshallLoose(error.Item) : undefined;
    if (owesUnknown(old)) return 'unknown';
    if (sentUnknown(old)) return 'reported';
    return old?.[OWES] === OWES_LATE ? 'owed' : 'late';
  }
  // Counted once per late reply: only the invocation that marked it adds it.
  await unlessConditionFails(
    table.client.send(
      new UpdateCommand({
        TableName: table.tableName,
        Key: { pk, sk: SortKey.HEADER },
        UpdateExpression: 'ADD lateCount :one',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeValues: { ':one': 1 },
      }),
    ),
  );
  return 'marked';
}

/**
 * Fixes the fate of a reply reported unknown: a late mark under its own key (under each write-shard
 * layout in `shards`), written only while its aggregate has no header, in one transaction with that
 * check; the mark says it owes the unknown output (`owes`), which a copy of the reply put after the
 * open learns from it ({@link putReply}, {@link markLate}). Once written, an aggregate opened later never counts the reply (its seal reads after the
 * open, so after the mark); when the header exists already, nothing is written and the reply is
 * one of that aggregate's, to record like any other.
 *
 * The check is a `Delete` of the header conditioned on its absence (a no-op when it holds): it is
 * authorized as the `DeleteItem` the handlers that report unknown replies have, where a
 * `ConditionCheck` would need `ConditionCheckItem`, which no handler is granted (docs/security.md).
 *
 * @returns false when the aggregate exists (nothing was written)
 */
export async function markUnknown(
  table: StateTable,
  aggregateId: string,
  replyId: string,
  expiresAt: number,
  shards: readonly number[],
): Promise<boolean> {
  const keys = new Map<string, { pk: string; sk: string }>();
  for (const count of shards.length > 0 ? shards : [1]) {
    const key = { pk: replyPartitionKey(aggregateId, replyId, count), sk: replyKey(replyId) };
    keys.set(`${key.pk}\u0000${key.sk}`, key);
  }
  try {
    await table.client.send(
      new TransactWriteCommand({
        TransactItems: [
          {
            Delete: {
              TableName: table.tableName,
              Key: { pk: aggregateKey(aggregateId), sk: SortKey.HEADER },
              ConditionExpression: 'attribute_not_exists(pk)',
            },
          },
          ...[...keys.values()].map((Key) => ({
            Update: {
              TableName: table.tableName,
              Key,
              UpdateExpression:
                'SET late = :true, replyId = :id, #owes = :unknown, expiresAt = if_not_exists(expiresAt, :exp)',
              ExpressionAttributeNames: { '#owes': OWES },
              ExpressionAttributeValues: {
                ':true': true,
                ':id': replyId,
                ':unknown': OWES_UNKNOWN,
                ':exp': expiresAt,
              },
            },
          })),
        ],
      }),
    );
    return true;
  } catch (error) {
    if (
      error instanceof TransactionCanceledException &&
      error.CancellationReasons?.[0]?.Code === 'ConditionalCheckFailed'
    )
      return false;
    throw error;
  }
}

/**
 * Records that the unknown output of a reply {@link markUnknown} marked was sent (under each
 * write-shard layout in `shards`): a copy of the reply put afterwards is a duplicate, and sends it
 * no more. Only a mark still owing it changes; no item is created.
 */
export async function markUnknownSent(
  table: StateTable,
  aggregateId: string,
  replyId: string,
  shards: readonly number[],
): Promise<void> {
  const pks = new Set(
    (shards.length > 0 ? shards : [1]).map((n) => replyPartitionKey(aggregateId, replyId, n)),
  );
  await Promise.all([...pks].map((pk) => settleOwed(table, pk, replyId, OWES_UNKNOWN, UNKNOWN_SENT)));
}

/**
 * Records that the late output a late mark owes ({@link markLate} with `owes`) was sent: a resumed
 * completer sends it no more. Only a mark still owing it changes; no item is created.
 */
export async function markLateSent(
  table: StateTable,
  aggregateId: string,
  replyId: string,
  shards = 1,
): Promise<void> {
  await settleOwed(table, replyPartitionKey(aggregateId, replyId, shards), replyId, OWES_LATE, LATE_SENT);
}

/** Moves a reply's mark from owing an output (`owes`) to having sent it; no other item changes. */
async function settleOwed(
  table: StateTable,
  pk: string,
  replyId: string,
  owed: string,
  sent: string,
): Promise<void> {
  await unlessConditionFails(
    table.client.send(
      new UpdateCommand({
        TableName: table.tableName,
        Key: { pk, sk: replyKey(replyId) },
        UpdateExpression: 'SET #owes = :sent',
        ConditionExpression: '#owes = :owed',
        ExpressionAttributeNames: { '#owes': OWES },
        ExpressionAttributeValues: { ':sent': sent, ':owed': owed },
      }),
    ),
  );
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

/**
 * The packs and replies of an aggregate's write shards but the first, each shard read
 * consistently, all alongside: shard 0 shares the header's key and is read with it, so with one
 * shard this reads nothing. The reply path's whole read and the history's both take them here.
 */
export async function readWriteShards(
  table: StateTable,
  aggregateId: string,
  shards: number,
): Promise<Record<string, unknown>[]> {
  const others = await Promise.all(
    Array.from({ length: Math.max(0, shards - 1) }, (_, i) =>
      queryAll(table, {
        TableName: table.tableName,
        KeyConditionExpression: 'pk = :pk AND sk BETWEEN :p AND :r',
        ExpressionAttributeValues: {
          ':pk': shardKey(aggregateId, i + 1),
          ':p': SortKey.PACK,
          ':r': SortKey.REPLIES_END,
        },
        ConsistentRead: true,
      }),
    ),
  );
  return others.flat();
}
