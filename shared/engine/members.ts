/**
 * The member set of a sealed aggregate — the reply ids its result is built from — in a compact
 * text form for the header: runs of consecutive canonical integers (a splitter's or recipient
 * list's reply ids `0..N-1`) become `[first, last]` pairs, anything else is listed as it is. A
 * fan-out of 10,000 is then `[[0,9999]]`, a few bytes, so sealing and closing cost the same at any
 * fan-out.
 *
 * @example
 * encodeMembers(['0', '1', '2', 'bank-a']); // '[[0,2],"bank-a"]'
 * decodeMembers('[[0,2],"bank-a"]');         // ['0', '1', '2', 'bank-a']
 */
export function encodeMembers(ids: Iterable<string>): string {
  const numbers: number[] = [];
  const others: string[] = [];
  for (const id of new Set(ids)) {
    if (/^(0|[1-9]\d{0,14})$/.test(id)) numbers.push(Number(id));
    else others.push(id);
  }
  numbers.sort((a, b) => a - b);
  const parts: (string | [number, number])[] = [];
  for (const n of numbers) {
    const last = parts[parts.length - 1];
    if (Array.isArray(last) && last[1] === n - 1) last[1] = n;
    else parts.push([n, n]);
  }
  return JSON.stringify([...parts, ...others.sort()]);
}

/** The ids of an encoded member set (see {@link encodeMembers}). */
export function decodeMembers(text: string): string[] {
  const parts = JSON.parse(text) as (string | [number, number])[];
  const ids: string[] = [];
  for (const part of parts) {
    if (typeof part === 'string') ids.push(part);
    else for (let n = part[0]; n <= part[1]; n += 1) ids.push(String(n));
  }
  return ids;
}

/** Index reply ids per block of a large fan-out (see `blocksComplete`, use-cases/completion-trigger.ts). */
export const REPLY_BLOCK_SIZE = 32;

/**
 * The write shard of a reply, for an aggregate spread over `shards` partition keys: index ids by
 * their block (so a block stays one range read), other ids by a stable hash.
 */
export function replyShard(replyId: string, shards: number): number {
  if (shards <= 1) return 0;
  if (/^(0|[1-9]\d{0,9})$/.test(replyId)) return Math.floor(Number(replyId) / REPLY_BLOCK_SIZE) % shards;
  let hash = 0;
  for (let i = 0; i < replyId.length; i += 1) hash = (hash * 31 + replyId.charCodeAt(i)) | 0;
  return Math.abs(hash) % shards;
}

/**
 * Whether `replyId` is the reply id of one of `expected` recipients of a splitter or recipient
 * list: the index `0` to `expected - 1` as the fan-out writes it (no sign, no leading zero, no
 * exponent), so that `01` or `-1` names no recipient and never becomes a key of its own.
 *
 * @example
 * isRecipientIndex('2', 3); // true
 * isRecipientIndex('02', 3); // false
 */
export function isRecipientIndex(replyId: string, expected: number): boolean {
  return /^(0|[1-9]\d{0,9})$/.test(replyId) && Number(replyId) < expected;
}
