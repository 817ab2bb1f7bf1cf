import { DeleteCommand } from '@aws-sdk/lib-dynamodb';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  getHeader,
  getRequest,
  markAsked,
  markDispatched,
  markLate,
  markLateSent,
  markUnknown,
  markUnknownSent,
  openAggregate,
  putReplies,
  putReply,
  readAggregate,
} from '../../../../shared/adapters/state-aggregates.ts';
import { seal } from '../../../../shared/adapters/state-completion.ts';
import { BadMessageError } from '../../../../shared/errors.ts';
import type { ReplyToRecord } from '../../../../shared/ports.ts';
import { awsError, openHeader, T0, world } from './support.ts';

/**
 * An aggregate's own items: the open (the request, then the header, each once), the dispatch
 * progress that only rises, one conditional put per reply or per pack of a batch (a duplicate
 * never counted twice, a throttled put waited for), the one consistent read of the header with
 * every reply and every write shard, and the late and unknown marks set once. The module's own
 * fast test over the DynamoDB model; the integration tests see these only through the handlers.
 */

/** The separator of derived keys (docs/data-plane.md: U+FFFF). */
const SEP = '\uffff';
const TTL = Math.floor(T0 / 1000) + 40 * 86_400;

function reply(replyId: string, fields: Partial<ReplyToRecord> = {}): ReplyToRecord {
  return {
    replyId,
    payload: JSON.stringify({ v: replyId }),
    receivedAt: T0 + 1000,
    expiresAt: TTL,
    ...fields,
  };
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('openAggregate', () => {
  it('creates the header once; a second open gets the header already there, not its own', async () => {
    // Prepare
    const w = world();

    // Act
    const first = await openAggregate(w.table, openHeader('a-1', { requestId: 'req-1' }));
    const second = await openAggregate(w.table, openHeader('a-1', { requestId: 'req-2', expected: 9 }));

    // Assess
    expect(first.created).toBe(true);
    expect(second).toMatchObject({ created: false, header: { requestId: 'req-1', expected: 3 } });
    expect(w.items().filter((i) => i.sk === 'H')).toHaveLength(1);
  });

  it("writes the request before the header, with its TTL, and keeps the first request's against another request id", async () => {
    // Prepare
    const w = world();

    // Act
    await openAggregate(w.table, openHeader('a-1', { requestId: 'req-1' }), {
      payload: '{"n":1}',
      expiresAt: TTL,
    });
    await openAggregate(w.table, openHeader('a-1', { requestId: 'req-2' }), {
      payload: '{"n":2}',
      expiresAt: TTL,
    });

    // Assess
    const puts = w.calls.filter((c) => c.command === 'PutCommand').slice(0, 2);
    expect(puts.map((c) => c.input.Item.sk)).toEqual(['B', 'H']);
    expect(await getRequest(w.table, 'a-1')).toEqual({ payload: '{"n":1}' });
    expect(w.items().find((i) => i.sk === 'B')).toMatchObject({ requestId: 'req-1', expiresAt: TTL });
  });

  it('opens nothing for a request whose id another request claimed first, its header not yet written: that one opens it', async () => {
    // Prepare: req-1 stored its request item and stopped before its header (crashed, or slower)
    const w = world();
    await openAggregate(w.table, openHeader('a-1', { requestId: 'req-1' }), {
      payload: '{"n":1}',
      expiresAt: TTL,
    });
    const header = w.items().find((i) => i.sk === 'H');
    await w.clients.dynamo.send(
      new DeleteCommand({ TableName: w.table.tableName, Key: { pk: header?.pk, sk: 'H' } }),
    );

    // Act
    const racer = openAggregate(w.table, openHeader('a-1', { requestId: 'req-2' }), {
      payload: '{"n":2}',
      expiresAt: TTL,
    });

    // Assess: req-2 is refused as bad input and writes no header; req-1's retry opens with its own request
    await expect(racer).rejects.toThrow('aggregate id "a-1" is already in use by another request');
    await expect(racer).rejects.toBeInstanceOf(BadMessageError);
    expect(w.items().filter((i) => i.sk === 'H')).toHaveLength(0);
    const retry = await openAggregate(w.table, openHeader('a-1', { requestId: 'req-1' }), {
      payload: '{"n":1}',
      expiresAt: TTL,
    });
    expect(retry).toMatchObject({ created: true, header: { requestId: 'req-1' } });
    expect(await getRequest(w.table, 'a-1')).toEqual({ payload: '{"n":1}' });
  });

  it('puts an open header in the due index at its deadline, or at its allowed life when that comes first', async () => {
    // Prepare
    const w = world();

    // Act
    await openAggregate(w.table, openHeader('a-1', { deadline: T0 + 60_000 }));
    await openAggregate(w.table, openHeader('a-2', { deadline: T0 + 60_000, closeBy: T0 + 30_000 }));

    // Assess
    const dueOf = (id: string) => w.items().find((i) => i.pk === `A#${id}` && i.sk === 'H')?.dueAt;
    expect(dueOf('a-1')).toBe(T0 + 60_000);
    expect(dueOf('a-2')).toBe(T0 + 30_000);
  });

  it('reads no header for an aggregate never opened', async () => {
    // Act / Assess
    const w = world();
    expect(await getHeader(w.table, 'a-1')).toBeUndefined();
    expect(await getRequest(w.table, 'a-1')).toBeUndefined();
  });
});

describe('markDispatched and markAsked', () => {
  it('raise the progress and never lower it', async () => {
    // Prepare
    const w = world();
    await openAggregate(w.table, openHeader('a-1', { askedUpTo: 0 }));

    // Act
    await markDispatched(w.table, 'a-1', 50);
    await markDispatched(w.table, 'a-1', 20);
    await markAsked(w.table, 'a-1', 60);
    await markAsked(w.table, 'a-1', 10);

    // Assess
    expect(await getHeader(w.table, 'a-1')).toMatchObject({ dispatchedUpTo: 50, askedUpTo: 60 });
  });

  it('create no header for an aggregate that has none, and markAsked leaves a sealed header as it is', async () => {
    // Prepare
    const w = world();
    await openAggregate(w.table, openHeader('a-1', { askedUpTo: 5 }));
    await seal(w.table, 'a-1', { outcome: 'completed', members: [], at: T0, lease: 'l', leaseUntil: T0 + 1 });

    // Act
    await markDispatched(w.table, 'ghost', 5);
    await markAsked(w.table, 'ghost', 5);
    await markAsked(w.table, 'a-1', 50);

    // Assess
    expect(w.items().some((i) => i.pk === 'A#ghost')).toBe(false);
    expect((await getHeader(w.table, 'a-1'))?.askedUpTo).toBe(5);
  });
});

describe('putReply', () => {
  it('records a reply in its own item under its aggregate, with its TTL, and a second copy is a duplicate', async () => {
    // Prepare
    const w = world();

    // Act
    const fates = [
      await putReply(w.table, 'a-1', reply('r-1')),
      await putReply(w.table, 'a-1', reply('r-1')),
    ];

    // Assess
    expect(fates).toEqual(['recorded', 'duplicate']);
    const items = w.items();
    expect(items).toHaveLength(1);
    expect(items[0]).toMatchObject({ pk: 'A#a-1', sk: 'R#r-1', replyId: 'r-1', expiresAt: TTL });
  });

  it('never writes the header (no reply item shared by the others)', async () => {
    // Prepare
    const w = world();
    await openAggregate(w.table, openHeader('a-1'));
    w.calls.length = 0;

    // Act
    for (const id of ['0', '1', '2']) await putReply(w.table, 'a-1', reply(id));

    // Assess
    const keys = w.calls.map((c) => c.input.Item?.sk ?? c.input.Key?.sk);
    expect(keys.every((sk) => String(sk).startsWith('R#'))).toBe(true);
  });

  it('spreads the replies of a sharded aggregate over its write shards’ keys, and nowhere else', async () => {
    // Prepare
    const w = world();
    const shards = 4;
    const allowed = new Set(['A#a-1', `A#a-1${SEP}s1`, `A#a-1${SEP}s2`, `A#a-1${SEP}s3`]);

    // Act
    for (let i = 0; i < 40; i += 1) await putReply(w.table, 'a-1', reply(`r-${i}`), shards);

    // Assess
    const pks = new Set(w.items().map((i) => String(i.pk)));
    for (const pk of pks) expect(allowed.has(pk)).toBe(true);
    expect(pks.size).toBeGreaterThan(1);
  });

  it('answers unknown for a reply reported unknown before its aggregate opened, and never records it', async () => {
    // Prepare
    const w = world();
    await markUnknown(w.table, 'a-1', 'r-1', TTL, [1]);
    await openAggregate(w.table, openHeader('a-1'));

    // Act
    const fate = await putReply(w.table, 'a-1', reply('r-1'));

    // Assess
    expect(fate).toBe('unknown');
    const { replies } = await readAggregate(w.table, 'a-1');
    expect(replies.filter((r) => !r.late)).toEqual([]);
  });

  it('waits out a throttled put past the SDK’s retries instead of failing the batch', async () => {
    // Prepare: the first three puts throttled
    vi.spyOn(Math, 'random').mockReturnValue(0);
    let throttled = 0;
    const w = world({
      intercept: (_s, command, _i, call) => {
        if (command === 'PutCommand' && throttled < 3) {
          throttled += 1;
          throw awsError('ProvisionedThroughputExceededException');
        }
        return call();
      },
    });

    // Act
    const fate = await putReply(w.table, 'a-1', reply('r-1'));

    // Assess
    expect(fate).toBe('recorded');
    expect(throttled).toBe(3);
  });

  it('gives up after its retries of a throttle, and throws any other error at once', async () => {
    // Prepare
    vi.spyOn(Math, 'random').mockReturnValue(0);
    let puts = 0;
    const throttling = world({
      intercept: (_s, command, _i, call) => {
        if (command !== 'PutCommand') return call();
        puts += 1;
        throw awsError('ThrottlingException');
      },
    });
    let failed = 0;
    const failing = world({
      intercept: (_s, command, _i, call) => {
        if (command !== 'PutCommand') return call();
        failed += 1;
        throw awsError('ValidationException');
      },
    });

    // Act
    const throttledPut = await putReply(throttling.table, 'a-1', reply('r-1')).catch((e: Error) => e);
    const failedPut = await putReply(failing.table, 'a-1', reply('r-1')).catch((e: Error) => e);

    // Assess
    expect(throttledPut).toMatchObject({ name: 'ThrottlingException' });
    expect(failedPut).toMatchObject({ name: 'ValidationException' });
    expect(puts).toBeGreaterThan(1);
    expect(puts).toBeLessThan(20);
    expect(failed).toBe(1);
  });
});

describe('putReplies', () => {
  it('records the replies of one batch to one aggregate in one pack item', async () => {
    // Prepare
    const w = world();
    const batch = ['a', 'b', 'c', 'd'].map((id) => reply(id));

    // Act
    const fates = await putReplies(w.table, 'a-1', batch);

    // Assess
    expect(fates).toEqual(['recorded', 'recorded', 'recorded', 'recorded']);
    const items = w.items();
    expect(items).toHaveLength(1);
    expect(items[0]).toMatchObject({ pk: 'A#a-1', sk: 'Q#a' });
  });

  it('finds a redelivered batch duplicate, and a copy twice in one batch a duplicate after its first', async () => {
    // Prepare
    const w = world();
    const batch = ['a', 'b', 'c'].map((id) => reply(id));
    await putReplies(w.table, 'a-1', batch);

    // Act
    const again = await putReplies(w.table, 'a-1', batch);
    const twice = await putReplies(w.table, 'a-2', [reply('x'), reply('x')]);

    // Assess
    expect(again).toEqual(['duplicate', 'duplicate', 'duplicate']);
    expect(twice).toEqual(['recorded', 'duplicate']);
  });

  it('records one by one the members of a regrouped batch that the pack already there does not hold', async () => {
    // Prepare: a pack keyed by 'a' holding a and b
    const w = world();
    await putReplies(w.table, 'a-1', [reply('a'), reply('b')]);

    // Act: the same key's pack now with b and c
    const fates = await putReplies(w.table, 'a-1', [reply('a'), reply('c')]);

    // Assess
    expect(fates).toEqual(['duplicate', 'recorded']);
    const { replies } = await readAggregate(w.table, 'a-1');
    expect(replies.map((r) => r.replyId).sort()).toEqual(['a', 'b', 'c']);
  });
});

describe('readAggregate', () => {
  it('reads the header and every reply, packed or not, each once, with payloads as recorded', async () => {
    // Prepare
    const w = world();
    await openAggregate(w.table, openHeader('a-1'));
    await putReplies(w.table, 'a-1', [reply('0'), reply('1')]);
    await putReply(w.table, 'a-1', reply('2', { payload: 'x'.repeat(2000) }));

    // Act
    const snapshot = await readAggregate(w.table, 'a-1');

    // Assess
    expect(snapshot.header?.aggregateId).toBe('a-1');
    expect(snapshot.replies.map((r) => r.replyId).sort()).toEqual(['0', '1', '2']);
    expect(snapshot.replies.find((r) => r.replyId === '2')?.payload).toBe('x'.repeat(2000));
    expect(snapshot.replies.find((r) => r.replyId === '0')?.payload).toBe('{"v":"0"}');
  });

  it('reads every write shard of a sharded aggregate', async () => {
    // Prepare
    const w = world();
    await openAggregate(w.table, openHeader('a-1', { shards: 3 }));
    for (let i = 0; i < 12; i += 1) await putReply(w.table, 'a-1', reply(`r-${i}`), 3);

    // Act
    const { replies } = await readAggregate(w.table, 'a-1');

    // Assess
    expect(replies).toHaveLength(12);
  });

  it('reads nothing of another aggregate whose id extends this one’s', async () => {
    // Prepare
    const w = world();
    await openAggregate(w.table, openHeader('a'));
    await openAggregate(w.table, openHeader('a#1'));
    await putReply(w.table, 'a#1', reply('0'));

    // Act
    const snapshot = await readAggregate(w.table, 'a');

    // Assess
    expect(snapshot.replies).toEqual([]);
  });
});

describe('markLate', () => {
  it('marks a reply late once, counting it once on the header', async () => {
    // Prepare
    const w = world();
    await openAggregate(w.table, openHeader('a-1'));
    await putReply(w.table, 'a-1', reply('r-1'));

    // Act
    const marks = [await markLate(w.table, 'a-1', 'r-1', TTL), await markLate(w.table, 'a-1', 'r-1', TTL)];

    // Assess
    expect(marks).toEqual(['marked', 'late']);
    expect((await getHeader(w.table, 'a-1'))?.lateCount).toBe(1);
    expect((await readAggregate(w.table, 'a-1')).replies.find((r) => r.replyId === 'r-1')?.late).toBe(true);
  });

  it('says owed while a completer’s late output is owed, and late once it was sent', async () => {
    // Prepare
    const w = world();
    await openAggregate(w.table, openHeader('a-1'));
    await markLate(w.table, 'a-1', 'r-1', TTL, 1, true);

    // Act
    const owed = await markLate(w.table, 'a-1', 'r-1', TTL);
    await markLateSent(w.table, 'a-1', 'r-1');
    const sent = await markLate(w.table, 'a-1', 'r-1', TTL);

    // Assess
    expect([owed, sent]).toEqual(['owed', 'late']);
  });

  it('says unknown for a reply reported unknown, and reported once its unknown output was sent', async () => {
    // Prepare
    const w = world();
    await markUnknown(w.table, 'a-1', 'r-1', TTL, [1]);

    // Act
    const owing = await markLate(w.table, 'a-1', 'r-1', TTL);
    await markUnknownSent(w.table, 'a-1', 'r-1', [1]);
    const reported = await markLate(w.table, 'a-1', 'r-1', TTL);

    // Assess
    expect([owing, reported]).toEqual(['unknown', 'reported']);
  });

  it('keeps the TTL the reply was written with', async () => {
    // Prepare
    const w = world();
    await putReply(w.table, 'a-1', reply('r-1'));

    // Act
    await markLate(w.table, 'a-1', 'r-1', TTL + 999);

    // Assess
    expect(w.items().find((i) => i.sk === 'R#r-1')?.expiresAt).toBe(TTL);
  });
});

describe('markUnknown', () => {
  it('marks the reply under each write-shard layout while its aggregate has no header', async () => {
    // Prepare
    const w = world();

    // Act
    const marked = await markUnknown(w.table, 'a-1', 'r-1', TTL, [1, 4]);

    // Assess
    expect(marked).toBe(true);
    const marks = w.items();
    expect(marks.length).toBeGreaterThanOrEqual(1);
    for (const mark of marks) expect(mark).toMatchObject({ sk: 'R#r-1', late: true, expiresAt: TTL });
    expect(marks.some((m) => m.pk === 'A#a-1')).toBe(true);
  });

  it('writes nothing once the aggregate exists: the reply is one of its own', async () => {
    // Prepare
    const w = world();
    await openAggregate(w.table, openHeader('a-1'));

    // Act
    const marked = await markUnknown(w.table, 'a-1', 'r-1', TTL, [1]);

    // Assess
    expect(marked).toBe(false);
    expect(w.items().map((i) => i.sk)).toEqual(['H']);
    expect(await putReply(w.table, 'a-1', reply('r-1'))).toBe('recorded');
  });

  it('creates no mark when told an output was sent for a reply never marked', async () => {
    // Prepare
    const w = world();

    // Act
    await markUnknownSent(w.table, 'a-1', 'r-1', [1]);
    await markLateSent(w.table, 'a-1', 'r-1');

    // Assess
    expect(w.items()).toEqual([]);
  });
});
