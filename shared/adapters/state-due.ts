import { QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { AggregateStatus } from '../engine/constants.ts';
import { BadMessageError } from '../errors.ts';
import type { ActivePage, ActivePageOptions, AggregateHeader, DueItem } from '../ports.ts';
import { getHeader, readAggregate } from './state-aggregates.ts';
import { toDueItem } from './state-items.ts';
import { aggregateKey, DUE_SHARDS, dueShardKey, heldKey, KEY_SEPARATOR, SortKey } from './state-keys.ts';
import { queryAll, type StateTable, unlessConditionFails } from './state-table.ts';

/**
 * What reads the `due` index (`dueShard`, `dueAt`, keys only): the sweeper's due items — open
 * headers at their deadline or allowed life, completing headers at their lease, held replies at
 * their unknown timeout — with a failing item deferred, and the listing of the active aggregates,
 * every one of which has an entry in the index, page by page.
 */

/** Headers read in parallel when listing a page of the active aggregates. */
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
  const sk =
    item.kind === 'aggregate'
      ? SortKey.HEADER
      : item.kind === 'held'
        ? heldKey(item.replyId)
        : SortKey.SNAPSHOT;
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

/** The most index entries one page of the listing reads. */
export const MAX_PAGE_ENTRIES = 1000;
/** The longest cursor a message may carry (a position holds two keys of at most 2 KB and 1 KB). */
export const MAX_CURSOR_LENGTH = 6000;

/**
 * A position in the `due` index, in the order the listing reads it: shard by shard (0 to
 * {@link DUE_SHARDS} − 1), each by `dueAt` then the table's key. `after` is the last entry read
 * (the query's `ExclusiveStartKey`); without it the position is the start of the shard.
 */
interface DuePosition {
  readonly shard: number;
  readonly after?: { readonly dueAt: number; readonly pk: string; readonly sk: string };
}

/** A lone surrogate, which no key DynamoDB returned can hold. */
const LONE_SURROGATE = /\p{Cs}/u;

/** A position as the opaque cursor a page returns and a message carries back. */
function encodeCursor(position: DuePosition): string {
  const { shard, after } = position;
  const parts = after ? [shard, after.dueAt, after.pk, after.sk] : [shard];
  return Buffer.from(JSON.stringify(parts)).toString('base64url');
}

/**
 * The position a cursor names. A cursor comes back in messages (a `list` command, a continuation
 * of `complete` or `purge`): untrusted. Whatever it holds, the query it starts is one shard of the
 * `due` index, from a key of an aggregate's header or held reply under DynamoDB's key limits, so
 * the worst a forged cursor does is start the page somewhere else in the index: what the page
 * then completes or lists is decided by each aggregate's own header.
 *
 * @throws BadMessageError when the cursor is not one a page made
 */
export function decodeCursor(cursor: string): DuePosition {
  const invalid = (why: string) => new BadMessageError(`invalid cursor: ${why}`);
  if (cursor.length > MAX_CURSOR_LENGTH) throw invalid(`over ${MAX_CURSOR_LENGTH} characters`);
  if (!/^[A-Za-z0-9_-]+$/.test(cursor)) throw invalid('not base64url');
  let parts: unknown;
  try {
    parts = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw invalid('not a cursor of this listing');
  }
  if (!Array.isArray(parts) || (parts.length !== 1 && parts.length !== 4))
    throw invalid('not a cursor of this listing');
  const [shard, dueAt, pk, sk] = parts as unknown[];
  if (!Number.isInteger(shard) || (shard as number) < 0 || (shard as number) >= DUE_SHARDS)
    throw invalid(`shard must be 0 to ${DUE_SHARDS - 1}`);
  if (parts.length === 1) return { shard: shard as number };
  if (!Number.isSafeInteger(dueAt) || (dueAt as number) < 0) throw invalid('due time must be a whole number');
  if (
    typeof pk !== 'string' ||
    !pk.startsWith('A#') ||
    pk.length < 3 ||
    // No aggregate id holds the separator: a key with it is a shard's or the arming watermark's.
    pk.includes(KEY_SEPARATOR) ||
    LONE_SURROGATE.test(pk) ||
    Buffer.byteLength(pk) > 2048
  )
    throw invalid("key must be an aggregate's");
  if (
    typeof sk !== 'string' ||
    !(
      sk === SortKey.HEADER ||
      sk === SortKey.SNAPSHOT ||
      (sk.startsWith(SortKey.HELD) && sk.length > SortKey.HELD.length)
    ) ||
    LONE_SURROGATE.test(sk) ||
    Buffer.byteLength(sk) > 1024
  )
    throw invalid("sort key must be a header's, a held reply's or a next snapshot's");
  return { shard: shard as number, after: { dueAt: dueAt as number, pk, sk } };
}

/** One entry of the `due` index, with the cursor of the position just after it. */
interface DueEntry {
  readonly item: DueItem;
  readonly after: string;
}

/**
 * Reads at most `limit` entries of the `due` index from `cursor` on (at most `dueBy` when given),
 * in the index's order: one query per shard it reaches, so at most {@link DUE_SHARDS} + 1 queries.
 * `next` is where the following page starts; absent once every shard is read to its end.
 */
async function duePage(
  table: StateTable,
  limit: number,
  cursor: string | undefined,
  dueBy: number | undefined,
): Promise<{ entries: DueEntry[]; next?: string }> {
  let position = cursor === undefined ? { shard: 0 } : decodeCursor(cursor);
  const entries: DueEntry[] = [];
  for (let queries = 0; entries.length < limit && queries <= DUE_SHARDS; queries += 1) {
    const shard = dueShardKey(position.shard);
    const { Items = [], LastEvaluatedKey } = await table.client.send(
      new QueryCommand({
        TableName: table.tableName,
        IndexName: table.dueIndex,
        KeyConditionExpression: dueBy === undefined ? 'dueShard = :s' : 'dueShard = :s AND dueAt <= :by',
        ExpressionAttributeValues: { ':s': shard, ...(dueBy === undefined ? {} : { ':by': dueBy }) },
        Limit: limit - entries.length,
        ...(position.after ? { ExclusiveStartKey: { dueShard: shard, ...position.after } } : {}),
      }),
    );
    for (const key of Items) {
      const item = toDueItem(key);
      const at = { dueAt: Number(key.dueAt), pk: String(key.pk), sk: String(key.sk) };
      if (item) entries.push({ item, after: encodeCursor({ shard: position.shard, after: at }) });
    }
    if (LastEvaluatedKey) {
      const { dueAt, pk, sk } = LastEvaluatedKey as { dueAt: number; pk: string; sk: string };
      position = { shard: position.shard, after: { dueAt: Number(dueAt), pk: String(pk), sk: String(sk) } };
    } else if (position.shard + 1 < DUE_SHARDS) position = { shard: position.shard + 1 };
    else return { entries };
  }
  return { entries, next: encodeCursor(position) };
}

/**
 * A page of the open and completing aggregates, of one definition or all: the aggregates among at
 * most `limit` entries of the `due` index read from `cursor` on (every open or completing header
 * has an entry there: its deadline, its allowed life or its lease), in the index's order, each
 * read consistently — which also drops one that closed since the index was read. With `replies`,
 * an open one has its replies counted (its whole aggregate read); without, only its header.
 * Each listed aggregate carries the cursor of the position after it; `next` is where the
 * following page starts, absent at the end of the index.
 *
 * The calls of a page are bounded by `limit` alone: at most {@link DUE_SHARDS} + 1 index
 * queries and one read of each entry's aggregate, however many aggregates are open.
 *
 * @throws BadMessageError when `cursor` is not one a page made (see {@link decodeCursor})
 */
export async function listActivePage(table: StateTable, options: ActivePageOptions): Promise<ActivePage> {
  const limit = Math.min(MAX_PAGE_ENTRIES, Math.max(1, Math.floor(options.limit)));
  const { entries, next } = await duePage(table, limit, options.cursor, options.dueBy);
  const aggregates = entries.filter((e) => e.item.kind === 'aggregate');
  const listed: (ActivePage['aggregates'][number] | undefined)[] = new Array(aggregates.length);
  let index = 0;
  const reader = async () => {
    for (let i = index++; i < aggregates.length; i = index++) {
      const { item, after } = aggregates[i] as DueEntry;
      const header = options.replies
        ? await countedHeader(table, item.aggregateId)
        : await getHeader(table, item.aggregateId);
      if (!header || (options.definition !== undefined && header.definition !== options.definition)) continue;
      if (header.status === AggregateStatus.OPEN || header.status === AggregateStatus.COMPLETING)
        listed[i] = { header, after };
    }
  };
  await Promise.all(Array.from({ length: Math.min(LIST_READERS, aggregates.length) }, reader));
  return {
    aggregates: listed.filter((a) => a !== undefined),
    ...(next !== undefined ? { next } : {}),
  };
}

/** An aggregate's header, an open one with its replies counted (no reply writes an open header). */
async function countedHeader(table: StateTable, aggregateId: string): Promise<AggregateHeader | undefined> {
  const { header, replies } = await readAggregate(table, aggregateId);
  if (!header || header.status !== AggregateStatus.OPEN) return header;
  return { ...header, received: replies.filter((r) => !r.late).length };
}

/** Index entries a page reads when a listing reads every page. */
const WHOLE_LISTING_PAGE = 500;

/**
 * Every open and completing aggregate, of one definition or all, oldest first, replies counted:
 * {@link listActivePage} page after page to the end of the index. Its work grows with the number
 * of open aggregates: for tests and local tools; the control bus reads one page at a time.
 */
export async function listActive(table: StateTable, definition?: string): Promise<AggregateHeader[]> {
  const headers: AggregateHeader[] = [];
  let cursor: string | undefined;
  do {
    const page = await listActivePage(table, {
      ...(definition !== undefined ? { definition } : {}),
      limit: WHOLE_LISTING_PAGE,
      replies: true,
      ...(cursor !== undefined ? { cursor } : {}),
    });
    headers.push(...page.aggregates.map((a) => a.header));
    cursor = page.next;
  } while (cursor !== undefined);
  return headers.sort((x, y) => x.openedAt - y.openedAt);
}

export async function listOpen(table: StateTable, definition: string): Promise<AggregateHeader[]> {
  return (await listActive(table, definition)).filter((h) => h.status === AggregateStatus.OPEN);
}
