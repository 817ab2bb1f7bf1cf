import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { AggregateStatus } from '../engine/constants.ts';
import type { AggregateHeader, DueItem } from '../ports.ts';
import { readAggregate } from './state-aggregates.ts';
import { toDueItem } from './state-items.ts';
import { aggregateKey, DUE_SHARDS, dueShardKey, heldKey, SortKey } from './state-keys.ts';
import { queryAll, type StateTable, unlessConditionFails } from './state-table.ts';

/**
 * What reads the `due` index (`dueShard`, `dueAt`, keys only): the sweeper's due items — open
 * headers at their deadline or allowed life, completing headers at their lease, held replies at
 * their unknown timeout — with a failing item deferred, and the listing of the active aggregates,
 * every one of which has an entry in the index.
 */

/** Headers read in parallel when listing the open aggregates of a definition. */
const LIST_READERS = 8;

export async function dueItems(table: StateTable, now: number, limit: number): Promise<DueItem[]> {
  // Every shard gets its share, so items that keep failing in one shard (they are deferred, see
  // deferDue) can never starve the others.
  const share = Math.max(1, Math.ceil(limit / DUE_SHARDS));
  const shards = await Promise.all(
    Array.from({ length: DUE_SHARDS }, (_, shard) =>
      queryAll(
        table,
        {
          TableName: table.tableName,
          IndexName: table.dueIndex,
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

export async function deferDue(table: StateTable, item: DueItem, until: number): Promise<void> {
  const sk = item.kind === 'aggregate' ? SortKey.HEADER : heldKey(item.replyId);
  await unlessConditionFails(
    table.client.send(
      new UpdateCommand({
        TableName: table.tableName,
        Key: { pk: aggregateKey(item.aggregateId), sk },
        UpdateExpression: 'SET dueAt = :until ADD dueFailures :one',
        // Only if nothing moved it meanwhile (a completion, a consolidation).
        ConditionExpression: 'dueAt = :was',
        ExpressionAttributeValues: { ':until': until, ':was': item.dueAt, ':one': 1 },
      }),
    ),
  );
}

/**
 * The open and completing aggregates, of one definition or all, oldest first, each with its
 * replies counted. Every such header is in the `due` index (its deadline, its allowed life or its
 * lease), so the listing reads the index's keys (cheap, keys only), then each aggregate
 * consistently — which also drops one that closed since the index was read.
 */
export async function listActive(table: StateTable, definition?: string): Promise<AggregateHeader[]> {
  const shards = await Promise.all(
    Array.from({ length: DUE_SHARDS }, (_, shard) =>
      queryAll(table, {
        TableName: table.tableName,
        IndexName: table.dueIndex,
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
      const { header, replies } = await readAggregate(table, ids[i] as string);
      if (!header || (definition !== undefined && header.definition !== definition)) continue;
      // An open header counts nothing (no reply writes it); a sealed one has its member count.
      headers[i] =
        header.status === AggregateStatus.OPEN
          ? { ...header, received: replies.filter((r) => !r.late).length }
          : header;
    }
  };
  await Promise.all(Array.from({ length: Math.min(LIST_READERS, ids.length) }, reader));
  return headers
    .filter(
      (h): h is AggregateHeader =>
        h?.status === AggregateStatus.OPEN || h?.status === AggregateStatus.COMPLETING,
    )
    .sort((x, y) => x.openedAt - y.openedAt);
}

export async function listOpen(table: StateTable, definition: string): Promise<AggregateHeader[]> {
  return (await listActive(table, definition)).filter((h) => h.status === AggregateStatus.OPEN);
}
