import { createHash } from 'node:crypto';
import { brotliCompressSync, brotliDecompressSync, constants } from 'node:zlib';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { nextDueAt } from '../engine/completion/deadline.ts';
import type { CompletedBy } from '../engine/completion/decision.ts';
import type { AggregateStatus, Outcome, OutputChannel } from '../engine/constants.ts';
import { decodeMembers, encodeMembers } from '../engine/members.ts';
import { BadMessageError } from '../errors.ts';
import type {
  AggregateHeader,
  DueItem,
  HeldClaim,
  HeldReply,
  PayloadPointer,
  ReplyToRecord,
  StoredReply,
} from '../ports.ts';
import { decodePayload, encodePayload } from './payload-codec.ts';
import {
  aggregateIdOf,
  aggregateKey,
  dueShard,
  heldKey,
  replyKey,
  replyPartitionKey,
  SortKey,
} from './state-keys.ts';

/**
 * The items of the state table and the port's types, both ways: what the DynamoDB state store
 * writes for a header, a reply or a held reply, and how it reads them back.
 */

/** The attributes of a new header item (its keys aside): its `due` entry when it has a deadline or an allowed life. */
export function headerAttributes(header: AggregateHeader): Record<string, unknown> {
  const pk = aggregateKey(header.aggregateId);
  const due = nextDueAt(header);
  const attributes: Record<string, unknown> = {
    kind: 'aggregate',
    aggregateId: header.aggregateId,
    definition: header.definition,
    status: header.status,
    expected: header.expected,
    lateCount: 0,
    openedAt: header.openedAt,
    deadline: header.deadline,
    closeBy: header.closeBy,
    recipientsDue: header.recipientsDue,
    replyTo: header.replyTo,
    // The map heartbeats are kept in exists from the open (an update cannot create it and a key in it at once).
    ...(header.params.heartbeatSeconds !== undefined ? { beats: header.beats ?? {} } : {}),
    // The same for the failures kept for a retry (responders.retry.failedReplies).
    ...(header.params.retry?.failedReplies === true ? { failedAttempts: header.failedAttempts ?? {} } : {}),
    params: header.params,
    requestId: header.requestId,
    openedBy: header.openedBy,
    ...(header.shards !== undefined && header.shards > 1 ? { shards: header.shards } : {}),
    ...(due !== undefined ? { dueAt: due, dueShard: dueShard(pk) } : {}),
  };
  for (const [name, value] of Object.entries(attributes)) if (value === undefined) delete attributes[name];
  return attributes;
}

/** The item of a reply of an aggregate spread over `shards` keys; its payload compressed when smaller. */
export function replyItem(
  aggregateId: string,
  reply: ReplyToRecord,
  shards: number,
): Record<string, unknown> {
  return {
    pk: replyPartitionKey(aggregateId, reply.replyId, shards),
    sk: replyKey(reply.replyId),
    replyId: reply.replyId,
    ...encodePayload(reply.payload),
    receivedAt: reply.receivedAt,
    expiresAt: reply.expiresAt,
    ...replyExtras(reply),
  };
}

/** A reply's optional attributes, as its own item or a pack's member holds them. */
export function replyExtras(reply: ReplyToRecord): Record<string, unknown> {
  return {
    ...(reply.payloadRef ? { payloadRef: reply.payloadRef } : {}),
    ...(reply.definition ? { definition: reply.definition } : {}),
    ...(reply.score !== undefined ? { score: reply.score } : {}),
    ...(reply.failure !== undefined ? { failure: reply.failure } : {}),
    ...(reply.messageId ? { messageId: reply.messageId } : {}),
  };
}

/** The optional attributes of a reply item or a pack's member, as the port's. */
export function replyExtrasOf(
  item: Record<string, unknown>,
): Pick<StoredReply, 'payloadRef' | 'definition' | 'score' | 'failure' | 'messageId'> {
  return {
    ...(item.payloadRef ? { payloadRef: item.payloadRef as PayloadPointer } : {}),
    ...(item.definition ? { definition: String(item.definition) } : {}),
    ...(item.score !== undefined ? { score: Number(item.score) } : {}),
    ...(item.failure !== undefined ? { failure: String(item.failure) } : {}),
    ...(item.messageId ? { messageId: String(item.messageId) } : {}),
  };
}

/**
 * The most bytes a held reply's item may take: DynamoDB's 400 KB less room for what its size
 * estimate leaves out. A held reply keeps its message whole (body and attributes, to route it
 * as it came), and SQS carries up to 1 MiB of them.
 */
export const HELD_ITEM_MAX_BYTES = 400 * 1024 - 8 * 1024;

/**
 * The item of a held reply, in the `due` index at its unknown timeout. A message whose body and
 * attributes together are too large for an item is bad input here (its body alone was within
 * the inline bound): refused with the reason, never retried into the dead-letter queue.
 */
export function heldItem(held: HeldReply): Record<string, unknown> {
  const item = heldItemOf(held);
  const bytes = itemBytes(item);
  if (bytes > HELD_ITEM_MAX_BYTES)
    throw new BadMessageError(
      `the held reply's body and attributes are ${bytes} bytes; an item holds at most ${HELD_ITEM_MAX_BYTES}`,
    );
  return item;
}

/** A DynamoDB item's size as DynamoDB counts it, to within a few bytes a number: names and values. */
export function itemBytes(item: Readonly<Record<string, unknown>>): number {
  const size = (value: unknown): number => {
    if (value === null || value === undefined || typeof value === 'boolean') return 1;
    if (typeof value === 'string') return Buffer.byteLength(value);
    if (typeof value === 'number') return 21;
    if (value instanceof Uint8Array) return value.length;
    if (Array.isArray(value)) return 3 + value.reduce((sum: number, v) => sum + 1 + size(v), 0);
    return (
      3 +
      Object.entries(value as Record<string, unknown>).reduce(
        (sum, [name, v]) => sum + 1 + Buffer.byteLength(name) + size(v),
        0,
      )
    );
  };
  return Object.entries(item).reduce((sum, [name, value]) => sum + Buffer.byteLength(name) + size(value), 0);
}

function heldItemOf(held: HeldReply): Record<string, unknown> {
  const pk = aggregateKey(held.aggregateId);
  return {
    pk,
    sk: heldKey(held.replyId),
    replyId: held.replyId,
    definition: held.definition,
    body: held.body,
    ...(held.bodyRef ? { bodyRef: held.bodyRef } : {}),
    attributes: held.attributes,
    messageId: held.messageId,
    receivedAt: held.receivedAt,
    dueAt: held.dueAt,
    dueShard: dueShard(`${pk}/${held.replyId}`),
  };
}

function optionalNumber(value: unknown): number | undefined {
  return value === undefined || value === null ? undefined : Number(value);
}

/**
 * A sealed member set too large for its header is kept in chunks beside it: items keyed
 * `H#<seal key>#<n>` (between the header and the packs, so the one query over `H … R$` that reads
 * an aggregate reads them too), written before the seal under a key of the sealing attempt's own
 * (its lease), and named by the seal ({@link MemberSetRef}). A losing or crashed attempt's chunks
 * are never named, so never read as a member set, and expire.
 */
export const MEMBER_CHUNK_PREFIX = 'H#';

/**
 * The most bytes of member set (the encoded member ids and pack sources, and a failed outcome's
 * reason) a seal writes on the header itself; a larger set goes to chunks. A splitter's fan-out of 10,000 (`[[0,9999]]`) and
 * its packs' sources (about 30 KB in packs of ten) stay inline, in today's single write; 2,000
 * reply ids of 256 characters (over 500 KB) do not.
 */
export const MEMBERS_INLINE_MAX_BYTES = 64 * 1024;

/** The compressed bytes of a member set one chunk holds: a chunk item stays far below 400 KB. */
export const MEMBER_CHUNK_BYTES = 300 * 1024;

/** What a seal names when its member set is in chunks: the seal's key, how many, their digest, their TTL. */
export interface MemberSetRef {
  /** The sealing attempt's own key (its lease when it sealed): its chunks are `H#<key>#<n>`. */
  readonly key: string;
  readonly chunks: number;
  /** SHA-256 (hex) of the chunks' bytes joined in order: a reader checks it got exactly these. */
  readonly digest: string;
  /** Epoch seconds of the chunks' TTL: at least the tombstone's (the close extends them first). */
  readonly until: number;
}

/**
 * A member set as the seal fixed it: the member ids, the packs members are read from, and the
 * failed outcome's reason when that is long too (a custom expression's error can quote data).
 */
export interface MemberSet {
  readonly members: readonly string[];
  readonly sources?: Readonly<Record<string, readonly string[]>>;
  readonly reason?: string;
}

/** The sort key of chunk `n` of the member set sealed under `key`. */
export function memberChunkKey(key: string, n: number): string {
  return `${MEMBER_CHUNK_PREFIX}${key}#${String(n).padStart(5, '0')}`;
}

/** The member set's chunk reference of a header item, if its set is in chunks. */
export function memberSetRefOf(item: Record<string, unknown>): MemberSetRef | undefined {
  const ref = item.memberSet as Record<string, unknown> | undefined;
  if (!ref || typeof ref !== 'object') return undefined;
  return {
    key: String(ref.key),
    chunks: Number(ref.chunks),
    digest: String(ref.digest),
    until: Number(ref.until),
  };
}

/**
 * The bytes of a member set in chunks: its encoded members (the header's text form), each pack
 * source as the positions of its members in that set (runs of positions, not the ids again:
 * 10,000 ids of 256 characters with their sources take 1.5 MB instead of 2.8 MB) and the reason,
 * Brotli-compressed, then cut into pieces of {@link MEMBER_CHUNK_BYTES}.
 */
export function memberSetChunks(
  membersText: string,
  sources: Readonly<Record<string, readonly string[]>> | undefined,
  reason?: string,
): { chunks: Uint8Array[]; digest: string } {
  const position = new Map(decodeMembers(membersText).map((id, i) => [id, String(i)]));
  const byPosition = Object.values(sources ?? {}).every((ids) => ids.every((id) => position.has(id)));
  const encoded =
    sources &&
    Object.fromEntries(
      Object.entries(sources).map(([pack, ids]) => [
        pack,
        encodeMembers(byPosition ? ids.map((id) => position.get(id) as string) : ids),
      ]),
    );
  const text = JSON.stringify({
    members: membersText,
    ...(encoded ? { [byPosition ? 'sourcePositions' : 'sources']: encoded } : {}),
    ...(reason !== undefined ? { reason } : {}),
  });
  const bytes = brotliCompressSync(text, {
    params: {
      [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
      [constants.BROTLI_PARAM_QUALITY]: 5,
      [constants.BROTLI_PARAM_SIZE_HINT]: Buffer.byteLength(text),
    },
  });
  const chunks: Uint8Array[] = [];
  for (let at = 0; at < bytes.length; at += MEMBER_CHUNK_BYTES)
    chunks.push(new Uint8Array(bytes.subarray(at, at + MEMBER_CHUNK_BYTES)));
  return { chunks, digest: createHash('sha256').update(bytes).digest('hex') };
}

/**
 * The member set a reference names, from chunk items read under the aggregate's key (any
 * attempt's: only the named ones are taken); undefined when one is missing or the bytes are not
 * exactly the sealed ones.
 */
export function memberSetOf(
  ref: MemberSetRef,
  items: readonly Record<string, unknown>[],
): MemberSet | undefined {
  const byKey = new Map(items.map((item) => [String(item.sk), item.part]));
  const parts: Uint8Array[] = [];
  for (let n = 0; n < ref.chunks; n += 1) {
    const part = byKey.get(memberChunkKey(ref.key, n));
    if (!(part instanceof Uint8Array)) return undefined;
    parts.push(part);
  }
  const bytes = Buffer.concat(parts);
  if (createHash('sha256').update(bytes).digest('hex') !== ref.digest) return undefined;
  const set = JSON.parse(brotliDecompressSync(bytes).toString('utf8')) as {
    members: string;
    sources?: Record<string, string>;
    sourcePositions?: Record<string, string>;
    reason?: string;
  };
  const members = decodeMembers(set.members);
  const positions = set.sourcePositions && decodeSources(set.sourcePositions);
  return {
    members,
    ...(set.sources ? { sources: decodeSources(set.sources) } : {}),
    ...(positions
      ? {
          sources: Object.fromEntries(
            Object.entries(positions).map(([pack, at]) => [
              pack,
              at.map((i) => members[Number(i)] as string),
            ]),
          ),
        }
      : {}),
    ...(set.reason !== undefined ? { reason: set.reason } : {}),
  };
}

/**
 * A header item as the port's header. A header whose member set is in chunks needs that set,
 * read by the caller ({@link memberSetOf}), or `'gone'` for a tombstone past its life whose chunks
 * have expired (it then carries no member set); without it the header is refused, so no reader
 * can take a sealed aggregate for one with no members.
 */
export function toHeader(item: Record<string, unknown>, chunked?: MemberSet | 'gone'): AggregateHeader {
  const ref = memberSetRefOf(item);
  if (ref && chunked === undefined)
    throw new Error(
      `the member set of aggregate ${String(item.aggregateId)} is in chunks that were not read`,
    );
  const set = ref && chunked !== 'gone' ? chunked : undefined;
  const numbers = {
    expected: optionalNumber(item.expected),
    deadline: optionalNumber(item.deadline),
    closeBy: optionalNumber(item.closeBy),
    recipientsDue: optionalNumber(item.recipientsDue),
    retryRound: optionalNumber(item.retryRound),
    dispatchedUpTo: optionalNumber(item.dispatchedUpTo),
    shards: optionalNumber(item.shards),
    completingAt: optionalNumber(item.completingAt),
    leaseUntil: optionalNumber(item.leaseUntil),
    expiresAt: optionalNumber(item.expiresAt),
  };
  const defined = Object.fromEntries(Object.entries(numbers).filter(([, v]) => v !== undefined));
  return {
    aggregateId: String(item.aggregateId),
    definition: String(item.definition),
    status: item.status as AggregateStatus,
    ...(item.outcome ? { outcome: item.outcome as Outcome } : {}),
    ...(item.reason !== undefined ? { reason: String(item.reason) } : {}),
    ...(item.completedBy !== undefined ? { completedBy: item.completedBy as CompletedBy } : {}),
    received: Number(item.received ?? 0),
    lateCount: Number(item.lateCount ?? 0),
    openedAt: Number(item.openedAt),
    params: (item.params as AggregateHeader['params'] | undefined) ?? {},
    ...(item.requestId ? { requestId: String(item.requestId) } : {}),
    ...(item.openedBy ? { openedBy: String(item.openedBy) } : {}),
    ...(typeof item.replyTo === 'string' ? { replyTo: item.replyTo } : {}),
    ...(typeof item.members === 'string' ? { members: decodeMembers(item.members) } : {}),
    ...(item.sources && typeof item.sources === 'object' ? { sources: decodeSources(item.sources) } : {}),
    ...(set
      ? {
          members: set.members,
          ...(set.sources ? { sources: set.sources } : {}),
          ...(set.reason !== undefined ? { reason: set.reason } : {}),
        }
      : {}),
    ...(item.lease ? { lease: String(item.lease) } : {}),
    ...(item.beats && typeof item.beats === 'object' ? { beats: numbersById(item.beats) } : {}),
    ...(item.retried && typeof item.retried === 'object' ? { retried: numbersById(item.retried) } : {}),
    ...(item.failedAttempts && typeof item.failedAttempts === 'object'
      ? { failedAttempts: numbersById(item.failedAttempts) }
      : {}),
    ...(Array.isArray(item.emitted) ? { emitted: item.emitted as OutputChannel[] } : {}),
    ...defined,
  };
}

/** A map of reply id to a number (the kept heartbeats, epoch ms; the retry counts; the failed attempts kept), numbers only. */
function numbersById(value: object): Record<string, number> {
  return Object.fromEntries(
    Object.entries(value as Record<string, unknown>).flatMap(([id, at]) =>
      typeof at === 'number' ? [[id, at]] : [],
    ),
  );
}

/** The seal's `sources` map (pack key → encoded member ids) as the header's. */
function decodeSources(value: object): Record<string, string[]> {
  return Object.fromEntries(
    Object.entries(value as Record<string, unknown>).map(([pack, ids]) => [pack, decodeMembers(String(ids))]),
  );
}

/** A reply item as the port's stored reply. */
export function toReply(item: Record<string, unknown>): StoredReply {
  return {
    replyId: String(item.replyId),
    payload: decodePayload(item),
    receivedAt: Number(item.receivedAt),
    expiresAt: Number(item.expiresAt ?? 0),
    ...replyExtrasOf(item),
    ...(item.late === true ? { late: true } : {}),
  };
}

/** A held reply item as the port's held reply. */
export function toHeld(aggregateId: string, item: Record<string, unknown>): HeldReply {
  return {
    aggregateId,
    replyId: String(item.replyId),
    ...(item.definition ? { definition: String(item.definition) } : {}),
    body: String(item.body ?? ''),
    ...(item.bodyRef ? { bodyRef: item.bodyRef as PayloadPointer } : {}),
    attributes: (item.attributes as Record<string, string> | undefined) ?? {},
    messageId: String(item.messageId ?? `held/${String(item.replyId)}`),
    receivedAt: Number(item.receivedAt),
    dueAt: Number(item.dueAt),
    ...(item.claimed ? { claimed: item.claimed as HeldClaim } : {}),
  };
}

/** A `due` index entry (keys and `dueAt`) as a due item; undefined for an item of no known kind. */
export function toDueItem(key: Record<string, unknown>): DueItem | undefined {
  const aggregateId = aggregateIdOf(String(key.pk));
  const sk = String(key.sk);
  const dueAt = Number(key.dueAt);
  if (sk === SortKey.HEADER) return { kind: 'aggregate', aggregateId, dueAt };
  if (sk.startsWith(SortKey.HELD))
    return { kind: 'held', aggregateId, replyId: sk.slice(SortKey.HELD.length), dueAt };
  if (sk === SortKey.SNAPSHOT) return { kind: 'snapshot', aggregateId, dueAt };
  return undefined;
}

/** `ALL_OLD` items come back in the low-level shape from a document client's exception. */
export function unmarshallLoose(item: Record<string, unknown>): Record<string, unknown> {
  const first = Object.values(item)[0];
  const lowLevel =
    first !== null &&
    typeof first === 'object' &&
    Object.keys(first).length === 1 &&
    ['S', 'N', 'BOOL', 'M', 'L', 'NULL', 'SS', 'NS'].includes(Object.keys(first)[0] ?? '');
  // biome-ignore lint/suspicious/noExplicitAny: util-dynamodb's types are for AttributeValue maps
  return lowLevel ? (unmarshall(item as any) as Record<string, unknown>) : item;
}
