import { brotliCompressSync, brotliDecompressSync, constants } from 'node:zlib';
import { decodeMembers, encodeMembers, REPLY_BLOCK_SIZE } from '../engine/members.ts';
import type { AggregateHeader, ReplyToRecord, StoredReply } from '../ports.ts';
import { replyExtras, replyExtrasOf } from './state-items.ts';
import { replyKey, replyPartitionKey, SortKey } from './state-keys.ts';

/**
 * Reply packs: the replies of one aggregate that arrive in one batch, recorded as one item.
 *
 * DynamoDB bills a put by the item's size in 1 KB units, rounded up, so ten 1 KB replies in ten
 * items cost ten units, and ten small replies cost ten units too. Put together and compressed as
 * one text, ten 1 KB replies of one aggregate take about 4 KB (4 units), ten small ones one unit.
 * A pack is written once (a conditional put, never updated) and read back by the same consistent
 * query as the replies' own items, which it sorts among (`Q#…` lies between the header and `R$`).
 *
 * A reply may then be recorded twice: in a pack, and — redelivered alone, or in a batch grouped
 * differently — in its own item or another pack. The read counts a reply id once ({@link resolveCopies}),
 * and the seal fixes which copy each member's body is taken from (`sources`), so every later build
 * of the result reads the same bodies (docs/data-plane.md, "Packs").
 */

/** Raw JSON bytes of the replies in one pack at most: far below DynamoDB's 400 KB item limit. */
export const PACK_MAX_BYTES = 64 * 1024;

/** The sort key of a pack: its smallest member's reply key under the pack prefix. */
export function packKey(replyIds: readonly string[]): string {
  const smallest = [...replyIds].map(replyKey).sort()[0] as string;
  return `${SortKey.PACK}${smallest.slice(SortKey.REPLY.length)}`;
}

/** What one batch writes for an aggregate: a reply alone in its own item, or several in a pack. */
export type ReplyWrite =
  | { readonly kind: 'single'; readonly reply: ReplyToRecord }
  | { readonly kind: 'pack'; readonly pk: string; readonly replies: readonly ReplyToRecord[] };

/**
 * The writes of a batch's replies to one aggregate. Replies share a pack only when they share a
 * partition key (write shards) and, for index ids, a completion block (a block's range read then
 * finds every member of its packs, see countRange). A reply id twice in the batch is written once.
 */
export function planWrites(
  aggregateId: string,
  replies: readonly ReplyToRecord[],
  shards: number,
): ReplyWrite[] {
  const seen = new Set<string>();
  const groups = new Map<string, { pk: string; replies: ReplyToRecord[] }>();
  for (const reply of replies) {
    if (seen.has(reply.replyId)) continue;
    seen.add(reply.replyId);
    const pk = replyPartitionKey(aggregateId, reply.replyId, shards);
    const key = `${pk}\u0000${blockOf(reply.replyId)}`;
    const group = groups.get(key) ?? { pk, replies: [] };
    group.replies.push(reply);
    groups.set(key, group);
  }
  const writes: ReplyWrite[] = [];
  for (const { pk, replies: group } of groups.values()) {
    let chunk: ReplyToRecord[] = [];
    let bytes = 0;
    const flush = () => {
      if (chunk.length === 1) writes.push({ kind: 'single', reply: chunk[0] as ReplyToRecord });
      else if (chunk.length > 1) writes.push({ kind: 'pack', pk, replies: chunk });
      chunk = [];
      bytes = 0;
    };
    for (const reply of group) {
      const size = Buffer.byteLength(JSON.stringify(packed(reply)));
      if (chunk.length > 0 && bytes + size > PACK_MAX_BYTES) flush();
      chunk.push(reply);
      bytes += size;
    }
    flush();
  }
  return writes;
}

/** The block of an index reply id; every other id shares one group. */
function blockOf(replyId: string): string {
  return /^(0|[1-9]\d{0,9})$/.test(replyId) ? String(Math.floor(Number(replyId) / REPLY_BLOCK_SIZE)) : '*';
}

/** A member as the pack's text holds it (the pack's own attributes carry what the read filters on). */
function packed(reply: ReplyToRecord): Record<string, unknown> {
  return {
    replyId: reply.replyId,
    payload: reply.payload,
    receivedAt: reply.receivedAt,
    expiresAt: reply.expiresAt,
    ...replyExtras(reply),
  };
}

/**
 * The item of a pack: its members' ids in plain text (`packIds`, read by range counts and by a
 * conflicting put), the members compressed together (`packBr`), and TTL beyond the longest member's.
 */
export function packItem(pk: string, replies: readonly ReplyToRecord[]): Record<string, unknown> {
  const ids = replies.map((r) => r.replyId);
  const text = JSON.stringify(replies.map(packed));
  const compressed = brotliCompressSync(text, {
    params: {
      [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
      [constants.BROTLI_PARAM_QUALITY]: 5,
      [constants.BROTLI_PARAM_SIZE_HINT]: Buffer.byteLength(text),
    },
  });
  return {
    pk,
    sk: packKey(ids),
    packIds: encodeMembers(ids),
    packBr: new Uint8Array(compressed),
    receivedAt: Math.min(...replies.map((r) => r.receivedAt)),
    expiresAt: Math.max(...replies.map((r) => r.expiresAt)),
  };
}

/** The ids a pack item holds (from its plain `packIds`, without decompressing it). */
export function packIdsOf(item: Record<string, unknown>): string[] {
  return typeof item.packIds === 'string' ? decodeMembers(item.packIds) : [];
}

/** The replies of a pack item, each marked with the pack it was read from. */
export function expandPack(item: Record<string, unknown>): StoredReply[] {
  const body = item.packBr;
  if (!(body instanceof Uint8Array)) return [];
  const members = JSON.parse(brotliDecompressSync(body).toString('utf8')) as Record<string, unknown>[];
  const pack = String(item.sk);
  return members.map((m) => ({
    replyId: String(m.replyId),
    payload: String(m.payload ?? ''),
    receivedAt: Number(m.receivedAt),
    expiresAt: Number(m.expiresAt ?? item.expiresAt ?? 0),
    ...replyExtrasOf(m),
    pack,
  }));
}

/**
 * One copy per reply id, and which one:
 * - after the seal, a member's copy is the one the seal fixed: the pack its `sources` name, or
 *   else its own item (which a conditional put makes unique) — so copies written after the seal
 *   never change a result built again;
 * - before the seal, the earliest recorded (first wins, as a conditional put would have it),
 *   then its own item, then the pack with the smallest key.
 * A reply is late when any of its copies, or a late mark under its own key, says so.
 */
export function resolveCopies(
  header: AggregateHeader | undefined,
  copies: readonly StoredReply[],
  lateIds: ReadonlySet<string>,
): StoredReply[] {
  const byId = new Map<string, StoredReply[]>();
  for (const copy of copies) {
    const list = byId.get(copy.replyId) ?? [];
    list.push(copy);
    byId.set(copy.replyId, list);
  }
  const fixed = new Map<string, string>();
  for (const [pack, ids] of Object.entries(header?.sources ?? {})) for (const id of ids) fixed.set(id, pack);
  const members = header?.members ? new Set(header.members) : undefined;
  const chosen: StoredReply[] = [];
  for (const [replyId, list] of byId) {
    let pick: StoredReply | undefined;
    const source = fixed.get(replyId);
    if (source !== undefined) pick = list.find((c) => c.pack === source);
    else if (members?.has(replyId)) pick = list.find((c) => c.pack === undefined);
    pick ??= [...list].sort(byRecording)[0] as StoredReply;
    const late = lateIds.has(replyId) || list.some((c) => c.late);
    chosen.push(late && !pick.late ? { ...pick, late: true } : pick);
  }
  return chosen;
}

function byRecording(a: StoredReply, b: StoredReply): number {
  if (a.receivedAt !== b.receivedAt) return a.receivedAt - b.receivedAt;
  if ((a.pack === undefined) !== (b.pack === undefined)) return a.pack === undefined ? -1 : 1;
  return (a.pack ?? '') < (b.pack ?? '') ? -1 : (a.pack ?? '') > (b.pack ?? '') ? 1 : 0;
}
