import { randomBytes } from 'node:crypto';
import { marshall } from '@aws-sdk/util-dynamodb';
import { describe, expect, it } from 'vitest';
import {
  HELD_ITEM_MAX_BYTES,
  headerAttributes,
  heldItem,
  itemBytes,
  MEMBER_CHUNK_BYTES,
  memberChunkKey,
  memberSetChunks,
  memberSetOf,
  memberSetRefOf,
  replyItem,
  toDueItem,
  toHeader,
  toHeld,
  toReply,
  unmarshallLoose,
} from '../../../../shared/adapters/state-items.ts';
import { encodeMembers } from '../../../../shared/engine/members.ts';
import { BadMessageError } from '../../../../shared/errors.ts';
import type { HeldReply } from '../../../../shared/ports.ts';
import { openHeader, T0 } from './support.ts';

/**
 * The state table's items and the port's types, both ways: each mapping read back to what was
 * written, a member set in chunks checked by its digest before it is believed, a held reply too
 * large for an item refused as bad input. Pure functions: the module's own test, no model needed.
 */

const held: HeldReply = {
  aggregateId: 'a-1',
  replyId: 'r-1',
  definition: 'orders',
  body: '{"x":1}',
  attributes: { 'fanin-aggregate-id': 'a-1' },
  messageId: 'm-1',
  receivedAt: T0,
  dueAt: T0 + 5_000,
};

/** Chunk items as a query under the aggregate's key returns them. */
function chunkItems(key: string, chunks: readonly Uint8Array[]) {
  return chunks.map((part, n) => ({ pk: 'A#a-1', sk: memberChunkKey(key, n), part }));
}

describe('headerAttributes', () => {
  it('writes no undefined attribute, starts the late count at zero and puts the header in the due index at its deadline', () => {
    // Act
    const attributes = headerAttributes(openHeader('a-1', { lateCount: 7 }));

    // Assess
    expect(Object.values(attributes).includes(undefined)).toBe(false);
    expect(attributes).toMatchObject({
      aggregateId: 'a-1',
      status: 'open',
      lateCount: 0,
      dueAt: T0 + 60_000,
    });
    expect(String(attributes.dueShard)).toMatch(/^due#[0-7]$/);
  });

  it('leaves a header with neither deadline nor allowed life out of the due index, and one shard unstated', () => {
    // Act
    const attributes = headerAttributes(openHeader('a-1', { deadline: undefined, shards: 1 }));

    // Assess
    expect(attributes.dueAt).toBeUndefined();
    expect(attributes.dueShard).toBeUndefined();
    expect(attributes.shards).toBeUndefined();
    expect(headerAttributes(openHeader('a-1', { shards: 4 })).shards).toBe(4);
  });

  it('starts the map of failures kept for a retry empty for a definition that retries failures, and only for it', () => {
    // Prepare
    const retry = { attempts: 1, intervalSeconds: 10, backoffRate: 2 };

    // Act
    const on = headerAttributes(
      openHeader('a-1', { params: { timeoutSeconds: 60, retry: { ...retry, failedReplies: true } } }),
    );
    const off = headerAttributes(openHeader('a-1', { params: { timeoutSeconds: 60, retry } }));

    // Assess
    expect(on.failedAttempts).toEqual({});
    expect(off.failedAttempts).toBeUndefined();
    expect(
      toHeader({ pk: 'A#a-1', sk: 'H', ...on, failedAttempts: { '2': 3, x: 'no' } }).failedAttempts,
    ).toEqual({
      '2': 3,
    });
  });

  it('reads back as the header it was made from', () => {
    // Prepare
    const header = openHeader('a-1', { closeBy: T0 + 9_000, openedBy: 'r-0', shards: 2 });

    // Act
    const read = toHeader({ pk: 'A#a-1', sk: 'H', ...headerAttributes(header) });

    // Assess
    expect(read).toEqual(header);
  });
});

describe('replyItem and toReply', () => {
  it('store a reply under its aggregate and read it back with every optional attribute', () => {
    // Prepare
    const reply = {
      replyId: '7',
      payload: '{"ok":true}',
      receivedAt: T0,
      expiresAt: 99,
      definition: 'orders',
      score: 0,
      failure: 'boom',
      messageId: 'm-7',
      payloadRef: { s3BucketName: 'b', s3Key: 'k' },
    };

    // Act
    const item = replyItem('a-1', reply, 1);

    // Assess
    expect(item).toMatchObject({ pk: 'A#a-1', replyId: '7', expiresAt: 99 });
    expect(String(item.sk).startsWith('R#')).toBe(true);
    expect(toReply(item)).toEqual(reply);
  });

  it('store a large payload in fewer bytes and read it back exactly', () => {
    // Prepare
    const payload = JSON.stringify(Array.from({ length: 100 }, (_, i) => ({ bank: `bank-${i}`, rate: 4.5 })));

    // Act
    const item = replyItem('a-1', { replyId: '1', payload, receivedAt: T0, expiresAt: 1 }, 1);

    // Assess
    expect(itemBytes(item)).toBeLessThan(Buffer.byteLength(payload));
    expect(toReply(item).payload).toBe(payload);
  });

  it('mark a reply read late', () => {
    // Act / Assess
    expect(toReply({ replyId: '1', payload: '{}', receivedAt: 1, late: true }).late).toBe(true);
    expect(toReply({ replyId: '1', payload: '{}', receivedAt: 1 }).late).toBeUndefined();
  });
});

describe('heldItem and toHeld', () => {
  it('keep a held reply whole under its aggregate, in the due index at its unknown timeout', () => {
    // Act
    const item = heldItem(held);

    // Assess
    expect(item).toMatchObject({ pk: 'A#a-1', sk: 'U#r-1', dueAt: T0 + 5_000 });
    expect(String(item.dueShard)).toMatch(/^due#[0-7]$/);
    expect(toHeld('a-1', item)).toEqual(held);
  });

  it('refuse, as bad input, a message too large for an item', () => {
    // Prepare
    const big = { ...held, body: 'x'.repeat(HELD_ITEM_MAX_BYTES) };

    // Act / Assess
    expect(() => heldItem(big)).toThrow(BadMessageError);
    expect(() => heldItem({ ...held, body: 'x'.repeat(HELD_ITEM_MAX_BYTES - 1024) })).not.toThrow();
  });

  it('give a claimed held reply its claim', () => {
    // Act / Assess
    expect(toHeld('a-1', { ...heldItem(held), claimed: 'counted' }).claimed).toBe('counted');
  });
});

describe('itemBytes', () => {
  it('counts names and string values in UTF-8 bytes, as DynamoDB sizes an item', () => {
    // Act / Assess
    expect(itemBytes({ ab: 'xyz' })).toBe(5);
    expect(itemBytes({ a: 'é' })).toBe(3);
    expect(itemBytes({ a: new Uint8Array(10) })).toBe(11);
  });
});

describe('a member set in chunks', () => {
  const members = Array.from({ length: 3_000 }, (_, i) => `reply-${String(i).padStart(5, '0')}`);

  it('reads back the members, their pack sources and the reason it was written with', () => {
    // Prepare
    const sources = { 'Q#reply-00000': ['reply-00000', 'reply-00001'] };
    const { chunks, digest } = memberSetChunks(encodeMembers(members), sources, 'a long reason');
    const ref = { key: 'lease-1', chunks: chunks.length, digest, until: 1 };

    // Act
    const set = memberSetOf(ref, chunkItems('lease-1', chunks));

    // Assess
    expect(set).toEqual({ members, sources, reason: 'a long reason' });
  });

  it('cuts the compressed set into pieces of at most the chunk size', () => {
    // Prepare: random ids do not compress (8,000 of 64 random base64url characters: some 380 KB of entropy)
    const ids = Array.from({ length: 8_000 }, () => randomBytes(48).toString('base64url'));

    // Act
    const { chunks } = memberSetChunks(encodeMembers(ids), undefined);

    // Assess
    expect(chunks.length).toBeGreaterThan(1);
    for (const chunk of chunks) expect(chunk.byteLength).toBeLessThanOrEqual(MEMBER_CHUNK_BYTES);
  });

  it('is not believed when a chunk is missing, altered, or of another sealing attempt', () => {
    // Prepare
    const { chunks, digest } = memberSetChunks(encodeMembers(members), undefined);
    const ref = { key: 'lease-1', chunks: chunks.length, digest, until: 1 };
    const altered = chunks.map((c, n) => (n === 0 ? c.map((byte, i) => (i === 0 ? byte ^ 1 : byte)) : c));

    // Act / Assess
    expect(memberSetOf(ref, chunkItems('lease-1', chunks).slice(1))).toBeUndefined();
    expect(memberSetOf(ref, chunkItems('lease-1', altered))).toBeUndefined();
    expect(memberSetOf(ref, chunkItems('lease-2', chunks))).toBeUndefined();
  });

  it('refuses a header naming chunks that were not read, and reads a tombstone past its life as having no members', () => {
    // Prepare
    const item = {
      ...headerAttributes(openHeader('a-1')),
      status: 'closed',
      memberSet: { key: 'l', chunks: 2, digest: 'd', until: 5 },
    };

    // Act / Assess
    expect(memberSetRefOf(item)).toEqual({ key: 'l', chunks: 2, digest: 'd', until: 5 });
    expect(() => toHeader(item)).toThrow('not read');
    expect(toHeader(item, 'gone').members).toBeUndefined();
    expect(memberSetRefOf({})).toBeUndefined();
  });
});

describe('toDueItem', () => {
  it('tells a header, a held reply and a next snapshot apart, and nothing else', () => {
    // Act / Assess
    expect(toDueItem({ pk: 'A#a-1', sk: 'H', dueAt: 5 })).toEqual({
      kind: 'aggregate',
      aggregateId: 'a-1',
      dueAt: 5,
    });
    expect(toDueItem({ pk: 'A#a-1', sk: 'U#r-1', dueAt: 6 })).toEqual({
      kind: 'held',
      aggregateId: 'a-1',
      replyId: 'r-1',
      dueAt: 6,
    });
    expect(toDueItem({ pk: 'A#a-1', sk: 'S', dueAt: 7 })).toEqual({
      kind: 'snapshot',
      aggregateId: 'a-1',
      dueAt: 7,
    });
    expect(toDueItem({ pk: 'A#a-1', sk: 'R#1', dueAt: 8 })).toBeUndefined();
  });
});

describe('unmarshallLoose', () => {
  it('reads an item in the wire form (an exception’s ALL_OLD) and leaves a native one as it is', () => {
    // Prepare
    const native = { pk: 'A#a-1', n: 3, late: true, list: ['x'] };

    // Act / Assess
    expect(unmarshallLoose(marshall(native) as Record<string, unknown>)).toEqual(native);
    expect(unmarshallLoose(native)).toBe(native);
  });
});
