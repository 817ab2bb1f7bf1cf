import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { aggregateKey, blockKey, counterKey, replyKey, replyPartitionKey, SortKey } from './state-keys.ts';
import { queryAll, type StateTable } from './state-table.ts';

/**
 * The completion triggers of large aggregates, so that no reply writes its header: for index reply
 * ids, a range count of a block of ids and a tiny item once the block is all in (`K#<block>`); for
 * other large aggregates, a reply counter per write shard (its own key, {@link counterKey}) that
 * each batch adds its size to.
 */

/** Replies recorded (not late) with index ids from `first` to `last` inclusive: one range query. */
export async function countRange(
  table: StateTable,
  aggregateId: string,
  first: number,
  last: number,
  shards = 1,
): Promise<number> {
  const items = await queryAll(table, {
    TableName: table.tableName,
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
