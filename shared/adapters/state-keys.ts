import { replyShard } from '../engine/members.ts';

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
 * | next snapshot    | {@link aggregateKey}        | {@link SortKey}.SNAPSHOT |
 * | block complete   | {@link aggregateKey}        | {@link blockKey}        |
 * | reply counter    | {@link counterKey}          | {@link SortKey}.COUNTER |
 * | parameters       | {@link parametersKey}       | {@link SortKey}.PARAMETERS |
 *
 * **No two of these keys are equal, whatever ids messages choose** (docs/data-plane.md, "Keys").
 * An id is written into a key through {@link keyText}, whose text never holds {@link KEY_SEPARATOR}
 * and is always well-formed Unicode; a key that adds anything to an aggregate's own key (a write
 * shard, a counter) adds it after that separator. So an aggregate key (no separator) never equals
 * a derived key (one separator), and two derived keys split at their separator into the same id
 * and the same suffix only when they are the same key.
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
  /** An aggregate's next snapshot when it is due beyond the timers' horizon (state-arming.ts). */
  SNAPSHOT: 'S',
} as const;

/** Spreads the `due` index over this many partition keys so it never becomes one hot key. */
export const DUE_SHARDS = 8;

/**
 * The name of the state table's `due` index (keys `dueShard`, `dueAt`): the one the topology
 * declares (shared/topology/topology.ts), from which the stack and the local runtime create it;
 * the unit test of this module checks that the two agree.
 */
export const DUE_INDEX = 'due';

/**
 * Separates an id's text from what a derived key adds to it. U+FFFF is a noncharacter: SQS refuses
 * it in a message attribute, and {@link keyText} escapes it wherever else it comes from.
 */
export const KEY_SEPARATOR = '\uffff';
/** Starts an escape in {@link keyText}: itself, the separator and lone surrogates are escaped. */
export const KEY_ESCAPE = '\ufffe';
/** A lone surrogate U+D800 + n is escaped as KEY_ESCAPE and U+E000 + n (one code unit each). */
const SURROGATE_ESCAPE_BASE = 0xe000;

/**
 * An id as it is written into a key: unchanged, unless it holds {@link KEY_ESCAPE},
 * {@link KEY_SEPARATOR} or a lone surrogate (which UTF-8 cannot carry: two different ones would
 * reach DynamoDB as the same replacement character). Each of those becomes KEY_ESCAPE and one
 * code unit that says which, so the text is injective, well-formed and free of the separator.
 * Ids of well-formed text without U+FFFE and U+FFFF (every id an SQS attribute can carry) keep
 * the key they had before this encoding.
 */
export function keyText(id: string): string {
  if (!/[\ufffe\uffff\ud800-\udfff]/.test(id)) return id;
  let text = '';
  for (let i = 0; i < id.length; i += 1) {
    const unit = id.charCodeAt(i);
    const next = id.charCodeAt(i + 1);
    if (unit >= 0xd800 && unit <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
      text += id.slice(i, i + 2);
      i += 1;
    } else if (unit >= 0xd800 && unit <= 0xdfff)
      text += KEY_ESCAPE + String.fromCharCode(SURROGATE_ESCAPE_BASE + unit - 0xd800);
    else if (unit === 0xfffe) text += `${KEY_ESCAPE}0`;
    else if (unit === 0xffff) text += `${KEY_ESCAPE}1`;
    else text += id[i];
  }
  return text;
}

/** The id whose {@link keyText} this is. */
export function idOfKeyText(text: string): string {
  if (!text.includes(KEY_ESCAPE)) return text;
  let id = '';
  for (let i = 0; i < text.length; i += 1) {
    if (text[i] !== KEY_ESCAPE) {
      id += text[i];
      continue;
    }
    i += 1;
    const code = text.charCodeAt(i);
    if (text[i] === '0') id += '\ufffe';
    else if (text[i] === '1') id += '\uffff';
    else id += String.fromCharCode(0xd800 + code - SURROGATE_ESCAPE_BASE);
  }
  return id;
}

/** The prefix of every aggregate's partition keys (the data-plane roles' `dynamodb:LeadingKeys`). */
const AGGREGATE_PREFIX = 'A#';

/** The partition key of an aggregate's items. */
export function aggregateKey(aggregateId: string): string {
  return `${AGGREGATE_PREFIX}${keyText(aggregateId)}`;
}

/** The aggregate id of a partition key made by {@link aggregateKey}. */
export function aggregateIdOf(pk: string): string {
  return idOfKeyText(pk.slice(AGGREGATE_PREFIX.length));
}

/**
 * The partition key of write shard `shard` of an aggregate (shard 0 is the aggregate's own key):
 * the aggregate's key, the separator, `s` and the shard. (Before this layout it was
 * `A#<id>#<shard>`, which is also the key of the aggregate `<id>#<shard>`.)
 */
export function shardKey(aggregateId: string, shard: number): string {
  return shard === 0 ? aggregateKey(aggregateId) : `${aggregateKey(aggregateId)}${KEY_SEPARATOR}s${shard}`;
}

/** The partition key of an aggregate's completion-trigger counter for write shard `shard`. */
export function counterKey(aggregateId: string, shard: number): string {
  return `${aggregateKey(aggregateId)}${KEY_SEPARATOR}c${shard}`;
}

/** The partition key a reply of an aggregate spread over `shards` keys is written under. */
export function replyPartitionKey(aggregateId: string, replyId: string, shards: number): string {
  return shardKey(aggregateId, replyShard(replyId, shards));
}

/** The partition key of a definition's runtime parameters. */
export function parametersKey(definition: string): string {
  return `D#${keyText(definition)}`;
}

/**
 * The sort key of a reply. Index reply ids (a splitter's or recipient list's `0 … N-1`) are
 * zero-padded, so a range of them is one contiguous range query; any other id keeps its
 * {@link keyText}, behind a `~` when it starts with a digit or `~`, so no two ids share a key.
 */
export function replyKey(replyId: string): string {
  if (/^(0|[1-9]\d{0,9})$/.test(replyId) && replyId.length <= 10)
    return `${SortKey.REPLY}${replyId.padStart(10, '0')}`;
  const text = keyText(replyId);
  return /^[0-9~]/.test(text) ? `${SortKey.REPLY}~${text}` : `${SortKey.REPLY}${text}`;
}

/** The sort key of a held reply. */
export function heldKey(replyId: string): string {
  return `${SortKey.HELD}${keyText(replyId)}`;
}

/** The reply id of a held reply's sort key made by {@link heldKey}. */
export function heldReplyIdOf(sk: string): string {
  return idOfKeyText(sk.slice(SortKey.HELD.length));
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
