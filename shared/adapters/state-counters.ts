import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { aggregateKey, blockKey, counterKey, replyKey, replyPartitionKey, SortKey } from './state-keys.ts';
import { packIdsOf, packKey } from './state-packs.ts';
import { queryAll, type StateTable } from './state-table.ts';

/**
 * The completion triggers of large aggregates, so that no reply writes its header: for index reply
 * ids, a range count of a block of ids and a tiny item once the block is all in (`K#<block>`); for
 * other large aggregates, a reply counter per write shard (its own key, {@link counterKey}) that
 * each batch adds its size to.
 */

/**
 * Replies recorded (not late) with index ids from `first` to `last` inclusive: one range read of
 * their own items and one of the packs keyed in the range (a pack never spans two blocks, and is
 * keyed by its smallest member), each reply id counted once.
 */
export async function countRange(
  table: StateTable,
  aggregateId: string,
  first: number,
  last: number,
  shards = 1,
): Promise<number> {
  // A block's ids share a shard (replyShard), so each range is one query.
  const pk = replyPartitionKey(aggregateId, String(first), shards);
  const range = (from: string, to: string, projection: string) =>
    queryAll(table, {
      TableName: table.tableName,
      KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
      ExpressionAttributeValues: { ':pk': pk, ':from': from, ':to': to },
      ProjectionExpression: projection,
      ConsistentRead: true,
    });
  const [own, packs] = await Promise.all([
    range(replyKey(String(first)), replyKey(String(last)), 'replyId, late, receivedAt'),
    range(packKey([String(first)]), packKey([String(last)]), 'packIds'),
  ]);
  const late = new Set<string>();
  const ids = new Set<string>();
  for (const item of own) {
    if (item.late === true) late.add(String(item.replyId));
    else if (item.receivedAt !== undefined) ids.add(String(item.replyId));
  }
  for (const item of packs) for (const id of packIdsOf(item)) ids.add(id);
  let count = 0;
  for (const id of ids) if (!late.has(id) && Number(id) >= first && Number(id) <= last) count += 1;
  return count;
}

export async function markBlockComplete(
  table: StateTable,
  aggregateId: string,
  block: number,
  expiresAt: number,
): Promise<void> {
  await table.client.send(
    new PutCommand({
      TableName: table.tableName,
      Item: { pk: aggregateKey(aggregateId), sk: blockKey(block), expiresAt },
    }),
  );
}

export async function addToCounter(
  table: StateTable,
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
  const { Attributes } = await table.client.send(
    new UpdateCommand({
      TableName: table.tableName,
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
          table.client.send(
            new GetCommand({
              TableName: table.tableName,
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

export async function countCompleteBlocks(table: StateTable, aggregateId: string): Promise<number> {
  const items = await queryAll(table, {
    TableName: table.tableName,
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :k)',
    ExpressionAttributeValues: { ':pk': aggregateKey(aggregateId), ':k': SortKey.BLOCK },
    ProjectionExpression: 'sk',
    ConsistentRead: true,
  });
  return items.length;
}
