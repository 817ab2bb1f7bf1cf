import { describe, expect, it } from 'vitest';
import {
  expandPack,
  PACK_MAX_BYTES,
  packIdsOf,
  packItem,
  packKey,
  planWrites,
  resolveCopies,
} from '../../../../shared/adapters/state-packs.ts';
import { AggregateStatus } from '../../../../shared/engine/constants.ts';
import type { AggregateHeader, ReplyToRecord, StoredReply } from '../../../../shared/ports.ts';

/** Packs (docs/data-plane.md, "Packs"): how a batch's replies are grouped, and which copy stands. */
const reply = (replyId: string, overrides: Partial<ReplyToRecord> = {}): ReplyToRecord => ({
  replyId,
  payload: JSON.stringify({ replyId }),
  receivedAt: 1_000,
  expiresAt: 2_000,
  ...overrides,
});

const shape = (writes: ReturnType<typeof planWrites>) =>
  writes.map((w) => (w.kind === 'single' ? w.reply.replyId : w.replies.map((r) => r.replyId)));

describe('planWrites', () => {
  it('packs the replies of one aggregate, and leaves a lone reply in its own item', () => {
    expect(shape(planWrites('a', [reply('x'), reply('y'), reply('z')], 1))).toEqual([['x', 'y', 'z']]);
    expect(shape(planWrites('a', [reply('x')], 1))).toEqual(['x']);
  });

  it('never packs index reply ids of two blocks together, so a block’s range count finds its packs', () => {
    // Blocks of 32: 30 and 31 in block 0, 32 and 33 in block 1 (mutant killed: "a pack spans blocks").
    expect(
      shape(
        planWrites(
          'a',
          ['30', '31', '32', '33'].map((id) => reply(id)),
          1,
        ),
      ),
    ).toEqual([
      ['30', '31'],
      ['32', '33'],
    ]);
  });

  it('packs per write shard: replies under different partition keys never share an item', () => {
    const writes = planWrites(
      'a',
      ['0', '1', '32', '33'].map((id) => reply(id)),
      2,
    );
    const keys = writes.map((w) => (w.kind === 'pack' ? w.pk : 'single'));
    expect(new Set(keys).size).toBe(2);
  });

  it('writes a reply id twice in one batch once', () => {
    expect(shape(planWrites('a', [reply('x'), reply('x'), reply('y')], 1))).toEqual([['x', 'y']]);
  });

  it(`starts another pack before ${PACK_MAX_BYTES} bytes of replies`, () => {
    const big = 'b'.repeat(20_000);
    const writes = planWrites(
      'a',
      ['p', 'q', 'r', 's', 't'].map((id) => reply(id, { payload: big })),
      1,
    );
    expect(shape(writes)).toEqual([
      ['p', 'q', 'r'],
      ['s', 't'],
    ]);
  });
});

describe('a pack item', () => {
  it('holds each member as it came, its ids in plain text and its key under its smallest id', () => {
    const members = [
      reply('7', { score: 3, messageId: 'm7' }),
      reply('2', { failure: 'bank down', definition: 'loans' }),
      reply('5', { payload: '', payloadRef: { s3BucketName: 'b', s3Key: 'k' } }),
    ];
    const item = packItem('A#a', members);
    expect(item.sk).toBe(packKey(['7', '2', '5']));
    expect(item.sk).toBe('Q#0000000002');
    expect(packIdsOf(item).sort()).toEqual(['2', '5', '7']);
    const back = expandPack(item);
    expect(back.map(({ pack, ...rest }) => rest)).toEqual(members);
    expect(back.every((r) => r.pack === 'Q#0000000002')).toBe(true);
  });
});

describe('resolveCopies', () => {
  const open: AggregateHeader = {
    aggregateId: 'a',
    definition: 'd',
    status: AggregateStatus.OPEN,
    received: 0,
    lateCount: 0,
    openedAt: 0,
    params: {},
  };
  const copy = (replyId: string, receivedAt: number, pack?: string, body = pack ?? 'own'): StoredReply => ({
    ...reply(replyId, { receivedAt, payload: body }),
    ...(pack !== undefined ? { pack } : {}),
  });

  it('counts a reply id once, taking the copy recorded first while the aggregate is open', () => {
    const chosen = resolveCopies(open, [copy('x', 20), copy('x', 10, 'Q#x'), copy('y', 5)], new Set());
    expect(chosen.map((r) => [r.replyId, r.payload])).toEqual([
      ['x', 'Q#x'],
      ['y', 'own'],
    ]);
  });

  it('after the seal, takes a member from the pack the seal names, else from its own item', () => {
    const sealed: AggregateHeader = {
      ...open,
      status: AggregateStatus.COMPLETING,
      members: ['x', 'y'],
      sources: { 'Q#x': ['x'] },
    };
    // Copies written after the seal, earlier by receivedAt: neither changes the members' bodies.
    const chosen = resolveCopies(
      sealed,
      [copy('x', 10, 'Q#x'), copy('x', 1, 'Q#w', 'later pack'), copy('y', 10), copy('y', 1, 'Q#v', 'later')],
      new Set(),
    );
    // Mutant killed: "after the seal a member's own item is not preferred" (y would be 'later').
    expect(chosen.map((r) => [r.replyId, r.payload])).toEqual([
      ['x', 'Q#x'],
      ['y', 'own'],
    ]);
  });

  it('marks a reply late when a late mark under its own key says so', () => {
    const chosen = resolveCopies(open, [copy('x', 10, 'Q#x')], new Set(['x']));
    expect(chosen[0]?.late).toBe(true);
  });
});
