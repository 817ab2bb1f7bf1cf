import { replyShard } from '../engine/members.ts';
import { describeTopology, type TableSpec } from '../topology/topology.ts';

/**
 * The keys of the state table: every partition key, sort key and index name the DynamoDB state
 * store writes or reads is made here (the item layout is drawn on {@link DynamoStateStore}).
 *
 * | item             | pk                          | sk              |
 * |------------------|-----------------------------|-----------------|
 * | request          | {@link aggregateKey}        | {@link SortKey}.REQUEST |
 * | header/tombstone | {@link aggregateKey}        | {@link SortKey}.HEADER  |
 * | reply            | {@link replyPartitionKey}   | {@link replyKey}        |
 * | reply pack       | {@link replyPartitionKey}   | `packKey` (state-packs.ts) |
 * | held reply       | {@link aggregateKey}        | {@link heldKey}         |
 * | block complete   | {@link aggregateKey}        | {@link blockKey}        |
 * | reply counter    | {@link counterKey}          | {@link SortKey}.COUNTER |
 * | parameters       | {@link parametersKey}       | {@link SortKey}.PARAMETERS |
 */

/** The fixed sort keys, and the prefixes of the others. */
export const SortKey = {
  /** The opening request, written once. */
  REQUEST: 'B',
  /** The header (a tombstone once closed): sorts between the request and the replies. */
  HEADER: 'H',
  /** The completion-trigger counter of a write shard. */
  COUNTER: 'C',
  /** A definition's runtime parameters. */
  PARAMETERS: 'P',
  /** Prefix of a reply pack's sort key (several replies of one batch; state-packs.ts). */
  PACK: 'Q#',
  /** Prefix of a reply's sort key. */
  REPLY: 'R#',
  /** The upper bound of every reply sort key: `H … REPLIES_END` is the header, every pack and every reply. */
  REPLIES_END: 'R$',
  /** Prefix of a held (unknown) reply's sort key. */
  HELD: 'U#',
  /** Prefix of a complete block's sort key. */
  BLOCK: 'K#',
} as const;

/** Spreads the `due` index over this many partition keys so it never becomes one hot key. */
export const DUE_SHARDS = 8;

/**
 * The name of the state table's `due` index (keys `dueShard`, `dueAt`), as the topology declares
 * it: the stack and the local runtime create the index from the same {@link TableSpec}.
 */
export const DUE_INDEX = dueIndexOf(describeTopology({ definitions: [] }).table);

/** The index of a table spec keyed by `dueShard` and `dueAt`. */
export function dueIndexOf(table: Pick<TableSpec, 'indexes'>): string {
  const index = table.indexes.find((i) => i.partitionKey.name === 'dueShard' && i.sortKey.name === 'dueAt');
  if (!index) throw new Error('the state table has no index keyed by dueShard and dueAt');
  return index.name;
}

/** The partition key of an aggregate's items. */
export function aggregateKey(aggregateId: string): string {
  return `A#${aggregateId}`;
}

/** The aggregate id of a partition key made by {@link aggregateKey}. */
export function aggregateIdOf(pk: string): string {
  return pk.slice(2);
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

/** The partition key of a definition's runtime parameters. */
export function parametersKey(definition: string): string {
  return `D#${definition}`;
}

/**
 * The sort key of a reply. Index reply ids (a splitter's or recipient list's `0 … N-1`) are
 * zero-padded, so a range of them is one contiguous range query; any other id keeps its text,
 * behind a `~` when it starts with a digit or `~`, so no two ids share a key.
 */
export function replyKey(replyId: string): string {
  if (/^(0|[1-9]\d{0,9})$/.test(replyId) && replyId.length <= 10)
    return `${SortKey.REPLY}${replyId.padStart(10, '0')}`;
  return /^[0-9~]/.test(replyId) ? `${SortKey.REPLY}~${replyId}` : `${SortKey.REPLY}${replyId}`;
}

/** The sort key of a held reply. */
export function heldKey(replyId: string): string {
  return `${SortKey.HELD}${replyId}`;
}

/** The sort key of a complete block. */
export function blockKey(block: number): string {
  return `${SortKey.BLOCK}${block}`;
}

/** A stable hash of a key onto 0 … shards − 1, so an item always lands in the same shard. */
function shardOf(key: string, shards: number): number {
  let hash = 0;
  for (let i = 0; i < key.length; i += 1) hash = (hash * 31 + key.charCodeAt(i)) | 0;
  return Math.abs(hash) % shards;
}

/** The `due` index shard of a key. */
export function dueShard(key: string): string {
  return dueShardKey(shardOf(key, DUE_SHARDS));
}

/** The `due` index partition key of shard number `shard` (0 … {@link DUE_SHARDS} − 1). */
export function dueShardKey(shard: number): string {
  return `due#${shard}`;
}
