import { describe, expect, it } from 'vitest';
import { getHeader, openAggregate } from '../../../../shared/adapters/state-aggregates.ts';
import {
  close,
  keepFailedAttempt,
  markEmitted,
  markSnapshot,
  moveDeadline,
  recordRetries,
  recoverAt,
  seal,
  takeOver,
} from '../../../../shared/adapters/state-completion.ts';
import type { Seal } from '../../../../shared/ports.ts';
import { awsError, openHeader, T0, world } from './support.ts';

/**
 * The header's transitions after the open, each one conditional update: the seal only of an open
 * header, a lease taken over only from the lease in force, a deadline moved only from the
 * deadline in force, a snapshot period marked once, the emitted channels and the close only by
 * the lease's holder. The module's own fast test over the DynamoDB model: the integration tests
 * reach these writes only through whole completions.
 */

const LEASE_UNTIL = T0 + 90_000;

function sealOf(members: readonly string[], fields: Partial<Seal> = {}): Seal {
  return {
    outcome: 'completed',
    members,
    at: T0 + 5_000,
    lease: 'lease-1',
    leaseUntil: LEASE_UNTIL,
    ...fields,
  };
}

async function opened(id = 'a-1') {
  const w = world();
  await openAggregate(w.table, openHeader(id));
  return w;
}

function headerItem(w: ReturnType<typeof world>, id = 'a-1') {
  return w.items().find((i) => i.pk === `A#${id}` && i.sk === 'H') as Record<string, unknown>;
}

describe('seal', () => {
  it('turns an open header into a completing one with its member set, outcome, time and lease', async () => {
    // Prepare
    const w = await opened();

    // Act
    const sealed = await seal(w.table, 'a-1', sealOf(['0', '2'], { completedBy: 'all-arrived' }));

    // Assess
    expect(sealed).toMatchObject({
      status: 'completing',
      outcome: 'completed',
      members: ['0', '2'],
      received: 2,
      completingAt: T0 + 5_000,
      lease: 'lease-1',
      leaseUntil: LEASE_UNTIL,
      completedBy: 'all-arrived',
    });
    expect(await getHeader(w.table, 'a-1')).toMatchObject({ status: 'completing', members: ['0', '2'] });
  });

  it('refuses a second seal: the first member set and outcome stay, whatever the second says', async () => {
    // Prepare
    const w = await opened();
    await seal(w.table, 'a-1', sealOf(['0']));

    // Act
    const second = await seal(
      w.table,
      'a-1',
      sealOf(['0', '1', '2'], { outcome: 'timed-out', lease: 'lease-2', at: T0 + 9_000 }),
    );

    // Assess
    expect(second).toBeUndefined();
    expect(await getHeader(w.table, 'a-1')).toMatchObject({
      outcome: 'completed',
      members: ['0'],
      lease: 'lease-1',
      completingAt: T0 + 5_000,
    });
  });

  it('writes nothing for an aggregate that has no header', async () => {
    // Prepare
    const w = world();

    // Act
    const sealed = await seal(w.table, 'nowhere', sealOf(['0']));

    // Assess
    expect(sealed).toBeUndefined();
    expect(w.items()).toEqual([]);
  });

  it("leaves the header's due entry where the open put it (its deadline), so the seal rewrites no index entry", async () => {
    // Prepare
    const w = await opened();
    const before = headerItem(w);

    // Act
    await seal(w.table, 'a-1', sealOf(['0']));

    // Assess
    const after = headerItem(w);
    expect(before.dueAt).toBe(T0 + 60_000);
    expect(after.dueAt).toBe(before.dueAt);
    expect(after.dueShard).toBe(before.dueShard);
  });

  it('keeps the parameters fixed at the open beside the header, for the history', async () => {
    // Prepare
    const w = await opened();

    // Act
    await seal(w.table, 'a-1', sealOf(['0']));

    // Assess
    expect(headerItem(w).keptParams).toEqual({ timeoutSeconds: 60 });
  });

  it('keeps a failed outcome’s reason with the seal', async () => {
    // Prepare
    const w = await opened();

    // Act
    const sealed = await seal(w.table, 'a-1', sealOf([], { outcome: 'failed', reason: 'too many failures' }));

    // Assess
    expect(sealed).toMatchObject({ outcome: 'failed', reason: 'too many failures', received: 0 });
  });

  it('writes a member set too large for the header in chunks under its own key, which every read decodes back', async () => {
    // Prepare: ids of 200 characters, 2,000 of them: some 400 KB, more than a header item holds
    const w = await opened();
    const members = Array.from(
      { length: 2_000 },
      (_, i) => `${String(i).padStart(6, '0')}${'x'.repeat(194)}`,
    );

    // Act
    const sealed = await seal(w.table, 'a-1', sealOf(members));

    // Assess
    const chunks = w.items().filter((i) => i.pk === 'A#a-1' && String(i.sk).startsWith('H#lease-1#'));
    expect(chunks.length).toBeGreaterThan(0);
    for (const chunk of chunks) expect(chunk.expiresAt).toBeGreaterThan(Math.floor((T0 + 5_000) / 1000));
    expect(headerItem(w).members).toBeUndefined();
    expect(sealed?.members).toEqual(members);
    expect((await getHeader(w.table, 'a-1'))?.members).toEqual(members);
  });

  it("deletes a losing sealer's chunks, and the set the first seal fixed stays the one read", async () => {
    // Prepare
    const w = await opened();
    const big = (tag: string) =>
      Array.from({ length: 2_000 }, (_, i) => `${tag}${String(i).padStart(6, '0')}${'y'.repeat(200)}`);
    await seal(w.table, 'a-1', sealOf(big('first')));

    // Act
    const lost = await seal(w.table, 'a-1', sealOf(big('second'), { lease: 'lease-2' }));

    // Assess
    expect(lost).toBeUndefined();
    expect(w.items().filter((i) => String(i.sk).startsWith('H#lease-2#'))).toEqual([]);
    expect((await getHeader(w.table, 'a-1'))?.members?.[0]).toBe(`first000000${'y'.repeat(200)}`);
  });

  it('throws an error that is not a failed condition (the caller must retry), rather than reading it as a lost race', async () => {
    // Prepare
    const w = world({
      intercept: (_s, command, _i, call) => {
        if (command === 'UpdateCommand') throw awsError('InternalServerError');
        return call();
      },
    });
    await openAggregate(w.table, openHeader('a-1'));

    // Act
    const sealing = seal(w.table, 'a-1', sealOf(['0']));

    // Assess
    await expect(sealing).rejects.toThrow('InternalServerError');
  });
});

describe('takeOver', () => {
  it('moves the lease only from the lease in force, and brings the due entry to the new lease’s end', async () => {
    // Prepare
    const w = await opened();
    await seal(w.table, 'a-1', sealOf(['0']));

    // Act
    const stale = await takeOver(w.table, 'a-1', 'lease-0', 'lease-9', T0 + 200_000);
    const taken = await takeOver(w.table, 'a-1', 'lease-1', 'lease-2', T0 + 200_000);

    // Assess
    expect(stale).toBeUndefined();
    expect(taken).toMatchObject({ lease: 'lease-2', leaseUntil: T0 + 200_000, members: ['0'] });
    expect(headerItem(w).dueAt).toBe(T0 + 200_000);
  });

  it('refuses an open header (nothing to take over before the seal)', async () => {
    // Prepare
    const w = await opened();

    // Act
    const taken = await takeOver(w.table, 'a-1', 'lease-1', 'lease-2', T0 + 200_000);

    // Assess
    expect(taken).toBeUndefined();
    expect(headerItem(w).lease).toBeUndefined();
  });
});

describe('recoverAt', () => {
  it('brings the due entry earlier under the lease in force, and never later', async () => {
    // Prepare: sealed, its due entry at the deadline (T0 + 60 s)
    const w = await opened();
    await seal(w.table, 'a-1', sealOf(['0']));

    // Act
    await recoverAt(w.table, 'a-1', 'lease-1', T0 + 30_000);
    const earlier = headerItem(w).dueAt;
    await recoverAt(w.table, 'a-1', 'lease-1', T0 + 45_000);

    // Assess
    expect(earlier).toBe(T0 + 30_000);
    expect(headerItem(w).dueAt).toBe(T0 + 30_000);
  });

  it('leaves the due entry of a lease taken over as it is', async () => {
    // Prepare
    const w = await opened();
    await seal(w.table, 'a-1', sealOf(['0']));
    await takeOver(w.table, 'a-1', 'lease-1', 'lease-2', T0 + 200_000);

    // Act
    await recoverAt(w.table, 'a-1', 'lease-1', T0 + 10_000);

    // Assess
    expect(headerItem(w).dueAt).toBe(T0 + 200_000);
  });
});

describe('moveDeadline', () => {
  it('moves the deadline and its due entry only from the deadline in force', async () => {
    // Prepare
    const w = await opened();

    // Act
    const stale = await moveDeadline(w.table, 'a-1', T0 + 1, T0 + 120_000);
    const moved = await moveDeadline(w.table, 'a-1', T0 + 60_000, T0 + 120_000);
    const again = await moveDeadline(w.table, 'a-1', T0 + 60_000, T0 + 180_000);

    // Assess
    expect([stale, moved, again]).toEqual([false, true, false]);
    expect(headerItem(w)).toMatchObject({ deadline: T0 + 120_000, dueAt: T0 + 120_000 });
  });

  it('keeps the first deadline and counts the moves, for the history', async () => {
    // Prepare
    const w = await opened();

    // Act
    await moveDeadline(w.table, 'a-1', T0 + 60_000, T0 + 120_000);
    await moveDeadline(w.table, 'a-1', T0 + 120_000, T0 + 150_000);

    // Assess
    expect(headerItem(w)).toMatchObject({
      firstDeadline: T0 + 60_000,
      deadlineMoves: 2,
      deadline: T0 + 150_000,
    });
  });

  it('refuses once the aggregate is sealed, and creates no header for an unknown one', async () => {
    // Prepare
    const w = await opened();
    await seal(w.table, 'a-1', sealOf(['0']));

    // Act
    const sealedMove = await moveDeadline(w.table, 'a-1', T0 + 60_000, T0 + 120_000);
    const unknownMove = await moveDeadline(w.table, 'b-1', T0 + 60_000, T0 + 120_000);

    // Assess
    expect([sealedMove, unknownMove]).toEqual([false, false]);
    expect(headerItem(w).deadline).toBe(T0 + 60_000);
    expect(w.items().some((i) => i.pk === 'A#b-1')).toBe(false);
  });
});

describe('markSnapshot', () => {
  it('marks each period once: marked, then already for the same period, passed for an earlier one', async () => {
    // Prepare
    const w = await opened();

    // Act
    const first = await markSnapshot(w.table, 'a-1', 2);
    const same = await markSnapshot(w.table, 'a-1', 2);
    const earlier = await markSnapshot(w.table, 'a-1', 1);
    const later = await markSnapshot(w.table, 'a-1', 3);

    // Assess
    expect([first, same, earlier, later]).toEqual(['marked', 'already', 'passed', 'marked']);
  });

  it('answers closed once the aggregate is no longer open', async () => {
    // Prepare
    const w = await opened();
    await seal(w.table, 'a-1', sealOf(['0']));

    // Act
    const mark = await markSnapshot(w.table, 'a-1', 1);

    // Assess
    expect(mark).toBe('closed');
  });
});

describe('markEmitted', () => {
  it('records the channels delivered only under the lease in force', async () => {
    // Prepare
    const w = await opened();
    await seal(w.table, 'a-1', sealOf(['0']));

    // Act
    const stranger = await markEmitted(w.table, 'a-1', 'lease-9', ['queue']);
    const holder = await markEmitted(w.table, 'a-1', 'lease-1', ['queue']);

    // Assess
    expect([stranger, holder]).toEqual([false, true]);
    expect((await getHeader(w.table, 'a-1'))?.emitted).toEqual(['queue']);
  });
});

describe('close', () => {
  it('makes the header a tombstone with its TTL, removing its due entry, lease and parameters, only under the lease', async () => {
    // Prepare
    const w = await opened();
    await seal(w.table, 'a-1', sealOf(['0']));
    const retention = Math.floor(T0 / 1000) + 30 * 86_400;

    // Act
    const stranger = await close(w.table, 'a-1', 'lease-9', retention);
    const holder = await close(w.table, 'a-1', 'lease-1', retention);
    const twice = await close(w.table, 'a-1', 'lease-1', retention);

    // Assess
    expect([stranger, holder, twice]).toEqual([false, true, false]);
    const tombstone = headerItem(w);
    expect(tombstone).toMatchObject({ status: 'closed', expiresAt: retention });
    expect((await getHeader(w.table, 'a-1'))?.members).toEqual(['0']);
    for (const gone of ['dueAt', 'dueShard', 'params', 'lease', 'leaseUntil', 'emitted'])
      expect(tombstone[gone]).toBeUndefined();
  });

  it('refuses an open header: only a sealed aggregate closes', async () => {
    // Prepare
    const w = await opened();

    // Act
    const closed = await close(w.table, 'a-1', 'lease-1', 1);

    // Assess
    expect(closed).toBe(false);
    expect(headerItem(w).status).toBe('open');
  });

  it('extends the TTL of a chunked member set that would expire before its tombstone, then closes', async () => {
    // Prepare: chunks expiring a day after the seal, a tombstone kept 30 days
    const w = await opened();
    const members = Array.from(
      { length: 2_000 },
      (_, i) => `${String(i).padStart(6, '0')}${'z'.repeat(200)}`,
    );
    const sealSeconds = Math.floor((T0 + 5_000) / 1000);
    await seal(w.table, 'a-1', sealOf(members, { expiresAt: sealSeconds + 86_400 }));
    const retention = sealSeconds + 30 * 86_400;

    // Act
    const closed = await close(w.table, 'a-1', 'lease-1', retention);

    // Assess
    expect(closed).toBe(true);
    const chunks = w.items().filter((i) => String(i.sk).startsWith('H#lease-1#'));
    expect(chunks.length).toBeGreaterThan(0);
    for (const chunk of chunks) expect(chunk.expiresAt).toBeGreaterThanOrEqual(retention);
    expect((await getHeader(w.table, 'a-1'))?.members).toEqual(members);
  });
});

describe('keepFailedAttempt', () => {
  const failing = (id = 'f-1') =>
    openHeader(id, {
      params: {
        timeoutSeconds: 60,
        retry: { attempts: 2, intervalSeconds: 10, backoffRate: 2, failedReplies: true },
      },
    });

  it('keeps a failed attempt once on the open header, and a later attempt over it, never an older or the same one', async () => {
    // Prepare
    const w = world();
    await openAggregate(w.table, failing());

    // Act
    const first = await keepFailedAttempt(w.table, 'f-1', '1', 1, 0);
    const copy = await keepFailedAttempt(w.table, 'f-1', '1', 1, 0);
    const later = await keepFailedAttempt(w.table, 'f-1', '1', 2, 0);
    const older = await keepFailedAttempt(w.table, 'f-1', '1', 1, 0);

    // Assess
    expect([first, copy, later, older]).toEqual([true, false, true, false]);
    expect((await getHeader(w.table, 'f-1'))?.failedAttempts).toEqual({ '1': 2 });
  });

  it('keeps one only from the round it was judged on: a round recorded meanwhile refuses it', async () => {
    // Prepare
    const w = world();
    await openAggregate(w.table, failing());
    await recordRetries(w.table, 'f-1', 0, 1, { '1': 1 }, T0 + 30_000);

    // Act
    const stale = await keepFailedAttempt(w.table, 'f-1', '1', 1, 0);
    const current = await keepFailedAttempt(w.table, 'f-1', '1', 2, 1);

    // Assess
    expect([stale, current]).toEqual([false, true]);
    expect((await getHeader(w.table, 'f-1'))?.failedAttempts).toEqual({ '1': 2 });
  });

  it('refuses once sealed, and on a header of a definition that does not retry failures', async () => {
    // Prepare
    const w = world();
    await openAggregate(w.table, failing());
    await openAggregate(w.table, openHeader('plain'));
    await seal(w.table, 'f-1', sealOf([]));

    // Act
    const sealed = await keepFailedAttempt(w.table, 'f-1', '1', 1, 0);
    const plain = await keepFailedAttempt(w.table, 'plain', '1', 1, 0);

    // Assess
    expect([sealed, plain]).toEqual([false, false]);
    expect(headerItem(w, 'plain').failedAttempts).toBeUndefined();
  });
});
