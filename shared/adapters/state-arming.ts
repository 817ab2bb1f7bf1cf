import { DeleteCommand, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { DueItem, DueWindow } from '../ports.ts';
import { toDueItem } from './state-items.ts';
import { aggregateKey, DUE_SHARDS, dueShard, dueShardKey, KEY_SEPARATOR, SortKey } from './state-keys.ts';
import { queryAll, type StateTable, unlessConditionFails } from './state-table.ts';

/**
 * The sweep's arming of timers as their items enter the timers' horizon (timers.ts,
 * `armEntering`): the `due` index read between two times, and the arming watermark — the time
 * before which every due item has had its timer armed — kept on one small item.
 *
 * The watermark's key is the key of aggregate `''` with the separator and `arming` after it
 * (state-keys.ts): under the data-plane roles' `A#*`, and equal to no aggregate's key (none holds
 * the separator) nor to any derived key (those add `s<n>` or `c<n>`). It has no `dueAt`, so it is
 * never in the `due` index, and a TTL, so a deployment that stops sweeping leaves nothing behind.
 *
 * A snapshot due beyond the horizon has an item of its own in the `due` index, so the sweep arms
 * it as it enters the horizon like a deadline: the aggregate's next snapshot (sort key
 * {@link SortKey.SNAPSHOT}, outside the header-to-replies range an aggregate's read takes),
 * replaced each period, deleted by the timer or sweep that finds no snapshot to follow.
 */

/** The watermark item's key. */
export const ARMING_KEY = { pk: `${aggregateKey('')}${KEY_SEPARATOR}arming`, sk: 'W' } as const;

/** How long the watermark item lives after its last move (it moves every sweep that arms). */
const ARMING_LIFE_SECONDS = 30 * 24 * 3600;

export async function dueBetween(
  table: StateTable,
  from: number,
  to: number,
  limit: number,
): Promise<DueWindow> {
  const shards = await Promise.all(
    Array.from({ length: DUE_SHARDS }, (_, shard) =>
      queryAll(
        table,
        {
          TableName: table.tableName,
          IndexName: table.dueIndex,
          KeyConditionExpression: 'dueShard = :s AND dueAt BETWEEN :from AND :to',
          ExpressionAttributeValues: { ':s': dueShardKey(shard), ':from': from, ':to': to },
        },
        limit,
      ),
    ),
  );
  // A shard that had more than `limit`: everything before its last entry read is in hand.
  let next: number | undefined;
  for (const entries of shards) {
    const last = entries.at(-1);
    if (entries.length < limit || last === undefined) continue;
    const at = Number(last.dueAt);
    next = next === undefined ? at : Math.min(next, at);
  }
  // More than `limit` due at the very millisecond `from`: those read are taken, and the window
  // moves on by one millisecond (the rest are left to the sweep at their due time).
  if (next !== undefined && next <= from) next = from + 1;
  const items = shards
    .flat()
    .map(toDueItem)
    .filter((item): item is DueItem => item !== undefined && (next === undefined || item.dueAt < next));
  return { items, ...(next !== undefined ? { next } : {}) };
}

export async function armedUntil(table: StateTable): Promise<number | undefined> {
  const { Item } = await table.client.send(
    new GetCommand({ TableName: table.tableName, Key: ARMING_KEY, ConsistentRead: true }),
  );
  return Item?.armedUntil === undefined ? undefined : Number(Item.armedUntil);
}

export async function markArmedUntil(table: StateTable, to: number, now: number): Promise<void> {
  // A failed condition: a concurrent sweep moved it further already (it never moves back).
  await unlessConditionFails(
    table.client.send(
      new UpdateCommand({
        TableName: table.tableName,
        Key: ARMING_KEY,
        UpdateExpression: 'SET armedUntil = :to, expiresAt = :exp',
        ConditionExpression: 'attribute_not_exists(armedUntil) OR armedUntil < :to',
        ExpressionAttributeValues: {
          ':to': to,
          ':exp': Math.floor(now / 1000) + ARMING_LIFE_SECONDS,
        },
      }),
    ),
  );
}

/**
 * How long a next-snapshot item outlives its due time: the timer or the sweep that acts on it
 * deletes it or replaces it; the TTL only cleans up after a deployment that stopped sweeping.
 */
const SNAPSHOT_ITEM_LIFE_SECONDS = 30 * 24 * 3600;

/** The key of an aggregate's next-snapshot item. */
function snapshotKey(aggregateId: string): { pk: string; sk: string } {
  return { pk: aggregateKey(aggregateId), sk: SortKey.SNAPSHOT };
}

export async function setSnapshotDue(table: StateTable, aggregateId: string, dueAt: number): Promise<void> {
  const key = snapshotKey(aggregateId);
  await table.client.send(
    new PutCommand({
      TableName: table.tableName,
      Item: {
        ...key,
        dueAt,
        dueShard: dueShard(`${key.pk}/${SortKey.SNAPSHOT}`),
        expiresAt: Math.ceil(dueAt / 1000) + SNAPSHOT_ITEM_LIFE_SECONDS,
      },
    }),
  );
}

export async function clearSnapshotDue(table: StateTable, aggregateId: string, dueAt: number): Promise<void> {
  // A failed condition: gone already, or replaced by a later period's (which stays).
  await unlessConditionFails(
    table.client.send(
      new DeleteCommand({
        TableName: table.tableName,
        Key: snapshotKey(aggregateId),
        ConditionExpression: 'dueAt = :at',
        ExpressionAttributeValues: { ':at': dueAt },
      }),
    ),
  );
}
