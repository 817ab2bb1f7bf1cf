import { createHash } from 'node:crypto';
import { PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CompletedBy } from '../../../shared/engine/completion/decision.ts';
import { AggregateStatus, Outcome } from '../../../shared/engine/constants.ts';
import { MAX_FAILURE_TEXT_LENGTH, MAX_FAN_OUT, MAX_KEY_LENGTH } from '../../../shared/engine/limits.ts';
import type { AggregateHeader, RawMessage, Seal } from '../../../shared/ports.ts';
import { handleReplies } from '../../../shared/use-cases/replies.ts';
import { expireAggregate } from '../../../shared/use-cases/timers.ts';
import { aws } from '../../support/clients.ts';
import { expectClosedCleanly, expectInvariants, membersOf } from '../../support/failpoints.ts';
import { FaninUnderTest } from '../../support/fanin.ts';

/** The longest reply id the wire contract allows (docs/wire-contract.md). */
const LONGEST_REPLY_ID = 256;

/**
 * `count` distinct reply ids of `length` characters each (none an index id), of hexadecimal
 * digits that compress no better than real identifiers do.
 */
function longIds(count: number, length: number, tag = 'r'): string[] {
  return Array.from({ length: count }, (_, i) => {
    let id = `${tag}${i}-`;
    for (let round = 0; id.length < length; round += 1)
      id += createHash('sha256').update(`${tag}/${i}/${round}`).digest('hex');
    return id.slice(0, length);
  });
}

/** A reply of an aggregate, as a reply partition's batch hands it to the use case. */
function replyMessage(aggregateId: string, replyId: string, body: unknown = { ok: true }): RawMessage {
  return {
    messageId: `m-${aggregateId}-${replyId.slice(0, 40)}`,
    body: JSON.stringify(body),
    attributes: { 'fanin-aggregate-id': aggregateId, 'fanin-reply-id': replyId },
    receiveCount: 1,
  };
}

/**
 * No item of an aggregate outgrows DynamoDB's limits (400 KB an item) under the largest inputs
 * the wire contract allows: the member set the seal fixes, whatever its size, is read back by
 * every later attempt exactly as it was sealed.
 */
describe('member sets beyond one item', () => {
  let fanin: FaninUnderTest;
  let n = 0;
  const nextId = (name: string) => `${name}-${++n}-${Date.now().toString(36)}`;

  beforeAll(async () => {
    fanin = await FaninUnderTest.start(
      [
        {
          name: 'long',
          fanOut: { type: 'none' },
          // Only the deadline completes it: the replies' own handlers never read the set.
          completion: { strategy: 'timeout', completeWhenAllArrived: false },
          timeoutSeconds: 60,
        },
      ],
      { claimCheckThresholdBytes: 200_000 },
    );
  });
  afterAll(() => fanin.stop());

  /** The items of an aggregate's own partition key, read straight from the table. */
  async function itemsOf(aggregateId: string): Promise<Record<string, unknown>[]> {
    const items: Record<string, unknown>[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const page = await aws.dynamo.send(
        new QueryCommand({
          TableName: fanin.provisioned.tableName,
          KeyConditionExpression: 'pk = :pk',
          ExpressionAttributeValues: { ':pk': `A#${aggregateId}` },
          ConsistentRead: true,
          ...(start ? { ExclusiveStartKey: start } : {}),
        }),
      );
      items.push(...(page.Items ?? []));
      start = page.LastEvaluatedKey;
    } while (start);
    return items;
  }

  /** Records replies in batches of ten, as a reply partition hands them over (packs of ten). */
  async function record(aggregateId: string, replyIds: readonly string[]): Promise<void> {
    for (let i = 0; i < replyIds.length; i += 10) {
      const failed = await handleReplies(
        fanin.ctx,
        replyIds.slice(i, i + 10).map((id) => replyMessage(aggregateId, id)),
      );
      expect(failed.size).toBe(0);
    }
  }

  /** Opens an aggregate of definition `long` (its request through the ingress queue). */
  async function open(aggregateId: string): Promise<void> {
    await fanin.sendRequest({ definition: 'long', aggregateId });
    await fanin.drain();
  }

  /** The state-table calls of the system since `seq`, by operation name. */
  const callsSince = (seq: number, aggregateId: string) =>
    fanin.probe
      .callsAfter(seq)
      .filter((c) => c.system && c.name.startsWith('DynamoDB.') && c.keys.includes(`A#${aggregateId}`))
      .map((c) => c.name);

  /** A seal of `members` by attempt `lease`, at the test clock. */
  const sealOf = (members: readonly string[], lease: string, extra: Partial<Seal> = {}): Seal => ({
    outcome: Outcome.COMPLETED,
    completedBy: CompletedBy.EXTERNAL,
    members,
    at: fanin.clock.now,
    lease,
    leaseUntil: fanin.clock.now + fanin.ctx.completionLeaseMs,
    ...extra,
  });

  const chunksOf = (items: readonly Record<string, unknown>[], lease?: string) =>
    items.filter((i) => String(i.sk).startsWith(`H#${lease ?? ''}`));

  it('2,000 replies with 256-character reply ids are sealed, published once with every member, and closed', async () => {
    // Prepare: a member set of about 500 KB of reply ids, recorded in packs of ten
    const id = nextId('wide');
    const replyIds = longIds(2000, LONGEST_REPLY_ID);
    await open(id);
    await record(id, replyIds);

    // Act: the deadline passes and the sweeper completes it
    fanin.clock.advance(61_000);
    await fanin.sweep();
    await fanin.drain();

    // Assess (mutant killed: "a member set is always kept on the header" — the seal is refused
    // as over 400 KB, and the sweeper fails every minute): one result with every member once,
    // every item of the aggregate under DynamoDB's item limit, the member set's chunks living at
    // least as long as the tombstone that names them
    const output = await expectInvariants(fanin, id, { replyIds });
    expect(output.type).toBe('fanin.aggregate.completed');
    expect(new Set(membersOf(output))).toEqual(new Set(replyIds));
    await expectClosedCleanly(fanin, id);
    const items = await itemsOf(id);
    const tombstone = items.find((i) => i.sk === 'H');
    expect(tombstone).toMatchObject({ status: 'closed', received: 2000 });
    expect(tombstone?.members).toBeUndefined();
    for (const item of items) expect(itemBytes(item)).toBeLessThan(DYNAMODB_ITEM_MAX_BYTES);
    const chunks = chunksOf(items);
    expect(chunks.length).toBeGreaterThan(0);
    for (const chunk of chunks) expect(chunk.expiresAt).toBeGreaterThanOrEqual(Number(tombstone?.expiresAt));
  }, 300_000);

  it('after a chunked seal, the tombstone still tells a redelivered member (a duplicate) from a new reply (late)', async () => {
    // Prepare: a closed aggregate whose member set is in chunks
    const id = nextId('judge');
    const replyIds = longIds(400, LONGEST_REPLY_ID, 'j');
    await open(id);
    await record(id, replyIds);
    fanin.clock.advance(61_000);
    // This aggregate's deadline only: others of this file are sealed by hand, never published.
    await expireAggregate(fanin.ctx, id, false);
    await fanin.drain();
    expect(chunksOf(await itemsOf(id)).length).toBeGreaterThan(0);

    // Act: a member redelivered, and a reply never recorded before
    const member = replyIds[123] as string;
    const stranger = longIds(1, LONGEST_REPLY_ID, 'z')[0] as string;
    const failed = await handleReplies(fanin.ctx, [replyMessage(id, member), replyMessage(id, stranger)]);

    // Assess (mutant killed: "a tombstone's chunks are not read" — the member is reported late)
    expect(failed.size).toBe(0);
    const late = fanin.published('late').filter((p) => p.body.aggregateId === id);
    expect(late.map((p) => p.body.replyId)).toEqual([stranger]);
  }, 120_000);

  it('a member set that fits the header is sealed in one write, with no chunk', async () => {
    // Prepare
    const id = nextId('small');
    await open(id);
    const seq = fanin.probe.now;

    // Act
    const sealed = await fanin.ctx.store.seal(id, sealOf(['a', 'b', 'c'], 'lease-small'));

    // Assess (mutant killed: "every member set goes to chunks" — a put per chunk before the seal)
    expect(sealed?.members).toEqual(['a', 'b', 'c']);
    expect(callsSince(seq, id)).toEqual(['DynamoDB.UpdateItem']);
    const items = await itemsOf(id);
    expect(chunksOf(items)).toEqual([]);
    expect(items.find((i) => i.sk === 'H')?.members).toBe('["a","b","c"]');
  });

  it('10,000 reply ids of 256 characters and the sources of 1,000 packs are read back exactly as sealed, by every reader', async () => {
    // Prepare: the largest fan-out, each reply id at the contract's longest, every member in a pack
    const id = nextId('huge');
    await open(id);
    const members = longIds(MAX_FAN_OUT, LONGEST_REPLY_ID, 'h');
    const sources = Object.fromEntries(
      Array.from({ length: MAX_FAN_OUT / 10 }, (_, p) => [
        `Q#${members[p * 10]}`,
        members.slice(p * 10, p * 10 + 10),
      ]),
    );

    // Act
    const sealed = await fanin.ctx.store.seal(id, sealOf(members, 'lease-huge', { sources }));

    // Assess (mutant killed: "pack sources beyond 128 KB are left out" — a rebuilt result could
    // take another copy of a member): the seal's answer, a header read, the aggregate read and a
    // lease taken over all give the sealed set, and no item is over DynamoDB's limit
    const expected = { members: [...members].sort(), sources };
    const asRead = (h: AggregateHeader | undefined) => ({
      members: [...(h?.members ?? [])].sort(),
      sources: h?.sources,
    });
    expect(asRead(sealed)).toEqual(expected);
    expect(asRead(await fanin.ctx.store.getHeader(id))).toEqual(expected);
    expect(asRead(await fanin.ctx.store.getHeader(id, { consistent: false }))).toEqual(expected);
    expect(asRead((await fanin.ctx.store.readAggregate(id)).header)).toEqual(expected);
    fanin.clock.advance(fanin.ctx.completionLeaseMs + 1);
    const taken = await fanin.ctx.store.takeOver(id, 'lease-huge', 'lease-huge-2', fanin.clock.now + 60_000);
    expect(asRead(taken)).toEqual(expected);
    const items = await itemsOf(id);
    for (const item of items) expect(itemBytes(item)).toBeLessThan(DYNAMODB_ITEM_MAX_BYTES);
    expect(chunksOf(items, 'lease-huge#').length).toBeGreaterThan(1);
  }, 120_000);

  it('of two sealers racing with different long member sets, every reader gets the winner’s, and the loser’s chunks are gone', async () => {
    // Prepare
    const id = nextId('race');
    await open(id);
    const winner = longIds(2000, LONGEST_REPLY_ID, 'w');
    const loser = longIds(2001, LONGEST_REPLY_ID, 'l');

    // Act: both read the aggregate open; the first seals, the second's seal finds it sealed
    const first = await fanin.ctx.store.seal(id, sealOf(winner, 'lease-winner'));
    const second = await fanin.ctx.store.seal(id, sealOf(loser, 'lease-loser'));

    // Assess (mutants killed: "chunks under one key for every attempt" — the loser's chunks
    // overwrite the winner's; "a losing sealer leaves its chunks" — they stay in the table)
    expect(first?.status).toBe(AggregateStatus.COMPLETING);
    expect(second).toBeUndefined();
    expect([...((await fanin.ctx.store.getHeader(id))?.members ?? [])].sort()).toEqual([...winner].sort());
    expect([...((await fanin.ctx.store.readAggregate(id)).header?.members ?? [])].sort()).toEqual(
      [...winner].sort(),
    );
    const items = await itemsOf(id);
    expect(chunksOf(items, 'lease-loser#')).toEqual([]);
    expect(chunksOf(items, 'lease-winner#').length).toBeGreaterThan(0);
  });

  it('a crash while the chunks are written leaves the aggregate open, and the next completer seals its own set', async () => {
    // Prepare: 600 long reply ids recorded (a member set of one chunk), the deadline passed
    const id = nextId('crash');
    const replyIds = longIds(600, LONGEST_REPLY_ID, 'c');
    await open(id);
    await record(id, replyIds);
    fanin.clock.advance(61_000);

    // Act: the completer dies just after its chunk's put (the chunk written, the seal never
    // sent); one more reply sent in time is recorded; then its deadline completes the aggregate
    fanin.probe.crashAt(
      {
        name: 'DynamoDB.PutItem',
        where: (c) => /"H#/.test(JSON.stringify(c.input.Item ?? {})),
      },
      'after',
    );
    await expect(expireAggregate(fanin.ctx, id, false)).rejects.toThrow();
    const crashed = fanin.probe.disarm();
    const openAfterCrash = (await itemsOf(id)).find((i) => i.sk === 'H');
    const extra = longIds(1, LONGEST_REPLY_ID, 'd')[0] as string;
    // Sent before the deadline (SQS accepted it 30 s ago), handled only now: it counts
    // (wire-contract.md, "Late replies and the deadline").
    const inTime = { ...replyMessage(id, extra), sentAt: fanin.clock.now - 30_000 };
    expect((await handleReplies(fanin.ctx, [inTime])).size).toBe(0);
    // This aggregate's deadline only: others of this file are sealed by hand, never published.
    await expireAggregate(fanin.ctx, id, false);
    await fanin.drain();

    // Assess (mutant killed: "the seal does not wait for its chunks" — the header is sealed
    // naming a chunk never written, and no reader can read its member set)
    expect(crashed?.name).toBe('DynamoDB.PutItem');
    expect(openAfterCrash?.status).toBe('open');
    const output = await expectInvariants(fanin, id, { replyIds: [...replyIds, extra] });
    expect(new Set(membersOf(output))).toEqual(new Set([...replyIds, extra]));
    for (const chunk of chunksOf(await itemsOf(id)))
      expect(chunk.expiresAt, `${String(chunk.sk)} has no TTL`).toEqual(expect.any(Number));
  }, 120_000);

  it('a tombstone closed after its chunks’ TTL first extends them, so it never names expired chunks', async () => {
    // Prepare: sealed with chunks that expire in an hour
    const id = nextId('ttl');
    await open(id);
    const members = longIds(2000, LONGEST_REPLY_ID, 't');
    const nowSeconds = Math.floor(fanin.clock.now / 1000);
    await fanin.ctx.store.seal(id, sealOf(members, 'lease-ttl', { expiresAt: nowSeconds + 3600 }));

    // Act: closed with a 30-day tombstone
    const closed = await fanin.ctx.store.close(id, 'lease-ttl', nowSeconds + 30 * 24 * 3600);

    // Assess (mutant killed: "the close ignores its chunks' TTL" — the chunks expire 29 days
    // before the tombstone naming them)
    expect(closed).toBe(true);
    const items = await itemsOf(id);
    const tombstone = items.find((i) => i.sk === 'H');
    expect(tombstone).toMatchObject({ status: 'closed', expiresAt: nowSeconds + 30 * 24 * 3600 });
    const chunks = chunksOf(items, 'lease-ttl#');
    expect(chunks.length).toBeGreaterThan(0);
    for (const chunk of chunks) expect(chunk.expiresAt).toBe(nowSeconds + 30 * 24 * 3600);
    expect([...((await fanin.ctx.store.getHeader(id))?.members ?? [])].sort()).toEqual([...members].sort());
  });

  it('a member set whose chunk was altered behind fanin’s back is refused, never read as another set', async () => {
    // Prepare: a sealed set in chunks; then its first chunk replaced by another seal's
    const id = nextId('tamper');
    const other = nextId('tamper-other');
    await open(id);
    await open(other);
    await fanin.ctx.store.seal(id, sealOf(longIds(2000, LONGEST_REPLY_ID, 'x'), 'lease-x'));
    await fanin.ctx.store.seal(other, sealOf(longIds(2000, LONGEST_REPLY_ID, 'y'), 'lease-y'));
    const foreign = chunksOf(await itemsOf(other), 'lease-y#');
    const own = chunksOf(await itemsOf(id), 'lease-x#');
    expect(own).toHaveLength(foreign.length);
    for (const [n, chunk] of foreign.entries())
      await aws.dynamo.send(
        new PutCommand({
          TableName: fanin.provisioned.tableName,
          Item: { ...chunk, pk: `A#${id}`, sk: own[n]?.sk },
        }),
      );

    // Act + Assess (mutant killed: "a reader takes the chunks without their digest" — the
    // other aggregate's members are read as this one's)
    await expect(fanin.ctx.store.getHeader(id)).rejects.toThrow(/member set/);
    await expect(fanin.ctx.store.readAggregate(id)).rejects.toThrow(/member set/);
  });
});

/**
 * Every other item the store writes stays under DynamoDB's limits at the largest inputs the
 * contract allows, or the input is refused with a reason (docs/data-plane.md, "Item sizes").
 */
describe('items at the largest inputs', () => {
  let withBucket: FaninUnderTest;
  let withoutBucket: FaninUnderTest;
  let n = 0;
  const nextId = (name: string) => `${name}-${++n}-${Date.now().toString(36)}`;
  const definitions = [
    {
      name: 'big',
      fanOut: { type: 'none' as const },
      completion: { strategy: 'timeout' as const, completeWhenAllArrived: false },
      timeoutSeconds: 60,
      unknownTimeoutSeconds: 600,
    },
  ];

  beforeAll(async () => {
    withBucket = await FaninUnderTest.start(definitions, { claimCheckThresholdBytes: 200_000 });
    withoutBucket = await FaninUnderTest.start(definitions);
  });
  afterAll(async () => {
    await withBucket.stop();
    await withoutBucket.stop();
  });

  /** Every item under an aggregate's own partition key. */
  const itemsOf = async (fanin: FaninUnderTest, aggregateId: string) =>
    (await fanin.scanState()).filter((i) => String(i.pk).startsWith(`A#${aggregateId}`));

  /** JSON text of exactly `bytes` bytes that compresses no better than random data. */
  const incompressible = (bytes: number, seed: string) => {
    let text = '';
    for (let round = 0; text.length < bytes; round += 1)
      text += createHash('sha512').update(`${seed}/${round}`).digest('base64').replace(/[+/=]/g, 'x');
    return JSON.stringify(text.slice(0, bytes - 2));
  };

  it('a failed outcome with a 500 KB reason is sealed, and every reader gets the reason whole', async () => {
    // Prepare: a custom expression's error can quote the data it failed on
    const fanin = withBucket;
    const id = nextId('reason');
    await fanin.sendRequest({ definition: 'big', aggregateId: id });
    await fanin.drain();
    const reason = `E: ${incompressible(500 * 1024, 'reason')}`;
    const at = fanin.clock.now;

    // Act
    const sealed = await fanin.ctx.store.seal(id, {
      outcome: Outcome.FAILED,
      reason,
      completedBy: CompletedBy.PREDICATE,
      members: ['0'],
      at,
      lease: 'lease-reason',
      leaseUntil: at + 60_000,
    });

    // Assess (mutant killed: "a long reason stays on the header" — the seal is refused as over 400 KB)
    expect(sealed?.reason).toBe(reason);
    expect((await fanin.ctx.store.getHeader(id))?.reason).toBe(reason);
    for (const item of await itemsOf(fanin, id))
      expect(itemBytes(item)).toBeLessThan(DYNAMODB_ITEM_MAX_BYTES);
  });

  it('a reply at the largest inline body, reply id and failure text is recorded in one item', async () => {
    // Prepare: the longest reply id and failure text in 3-byte characters, an incompressible body
    // of exactly the inline bound
    const fanin = withBucket;
    const id = `${'a'.repeat(190)}-${++n}`;
    await fanin.sendRequest({ definition: 'big', aggregateId: id });
    await fanin.drain();
    const replyId = '€'.repeat(MAX_KEY_LENGTH);
    const body = incompressible(fanin.ctx.maxReplyBytes, 'reply');

    // Act
    const failed = await handleReplies(fanin.ctx, [
      {
        messageId: 'm'.repeat(100),
        body,
        attributes: {
          'fanin-aggregate-id': id,
          'fanin-reply-id': replyId,
          'fanin-failure': '€'.repeat(MAX_FAILURE_TEXT_LENGTH),
        },
        receiveCount: 1,
      },
    ]);

    // Assess: recorded, inline, and read back whole
    expect(failed.size).toBe(0);
    const items = await itemsOf(fanin, id);
    for (const item of items) expect(itemBytes(item)).toBeLessThan(DYNAMODB_ITEM_MAX_BYTES);
    const { replies } = await fanin.ctx.store.readAggregate(id);
    expect(replies.map((r) => [r.replyId, r.payload.length, r.payloadRef])).toEqual([
      [replyId, body.length, undefined],
    ]);
  });

  it('ten replies of 60 KB in one batch are recorded in items under the limit, packs included', async () => {
    // Prepare
    const fanin = withBucket;
    const id = nextId('pack');
    await fanin.sendRequest({ definition: 'big', aggregateId: id });
    await fanin.drain();
    const replyIds = Array.from({ length: 10 }, (_, i) => `${i}-`.padEnd(MAX_KEY_LENGTH, 'k'));

    // Act
    const failed = await handleReplies(
      fanin.ctx,
      replyIds.map((replyId, i) =>
        replyMessage(id, replyId, { pad: JSON.parse(incompressible(60 * 1024, `p${i}`)) }),
      ),
    );

    // Assess
    expect(failed.size).toBe(0);
    for (const item of await itemsOf(fanin, id))
      expect(itemBytes(item)).toBeLessThan(DYNAMODB_ITEM_MAX_BYTES);
    const { replies } = await fanin.ctx.store.readAggregate(id);
    expect(replies.map((r) => r.replyId).sort()).toEqual([...replyIds].sort());
  });

  it('a held reply whose body and attributes together exceed an item goes to the error output with the reason', async () => {
    // Prepare: a 300 KB body (within the inline bound) and 200 KB of attributes: a 500 KB
    // message, which SQS carries
    const fanin = withoutBucket;
    const id = nextId('held-big');

    // Act
    const failed = await handleReplies(fanin.ctx, [
      {
        messageId: 'm-held-big',
        body: incompressible(300 * 1024, 'held'),
        attributes: {
          'fanin-aggregate-id': id,
          'fanin-reply-id': '0',
          'fanin-definition': 'big',
          note: 'n'.repeat(200 * 1024),
        },
        receiveCount: 1,
      },
    ]);

    // Assess (mutant killed: "a held reply's item size is not checked" — the put is refused by
    // DynamoDB, the record fails, and SQS cycles it into the dead-letter queue)
    expect(failed.size).toBe(0);
    const errors = fanin.published('error').filter((p) => p.body.aggregateId === id || p.text.includes(id));
    expect(errors.map((e) => e.body.reason)).toEqual([expect.stringContaining('attributes')]);
    expect(await itemsOf(fanin, id)).toEqual([]);
  });

  it('a held reply whose message just fits an item is held whole', async () => {
    // Prepare: the inline bound of body, and attributes filling most of the rest of an item
    const fanin = withoutBucket;
    const id = nextId('held-fit');
    const body = incompressible(fanin.ctx.maxReplyBytes, 'fit');
    const note = 'n'.repeat(40 * 1024);

    // Act
    const failed = await handleReplies(fanin.ctx, [
      {
        messageId: 'm-held-fit',
        body,
        attributes: { 'fanin-aggregate-id': id, 'fanin-reply-id': '0', 'fanin-definition': 'big', note },
        receiveCount: 1,
      },
    ]);

    // Assess (mutant killed: "a held reply's item bound well below DynamoDB's" — a message that
    // fits is refused)
    expect(failed.size).toBe(0);
    const held = await fanin.ctx.store.getHeld(id, '0');
    expect(held?.body).toBe(body);
    expect(held?.attributes.note).toBe(note);
  });
});

/** DynamoDB's largest item: 400 KB, attribute names and values together. */
const DYNAMODB_ITEM_MAX_BYTES = 400 * 1024;

/** An item's size as DynamoDB counts it (close enough: names and values, binary as bytes). */
function itemBytes(item: Record<string, unknown>): number {
  let bytes = 0;
  for (const [name, value] of Object.entries(item)) {
    bytes += Buffer.byteLength(name);
    if (value instanceof Uint8Array) bytes += value.length;
    else if (typeof value === 'string') bytes += Buffer.byteLength(value);
    else if (typeof value === 'number') bytes += 21;
    else bytes += Buffer.byteLength(JSON.stringify(value));
  }
  return bytes;
}
