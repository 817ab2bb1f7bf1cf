import { describe, expect, it, vi } from 'vitest';
import { AggregateStatus } from '../../../../shared/engine/constants.ts';
import type { Definition } from '../../../../shared/engine/definition.ts';
import type { AggregateHeader, StoredReply } from '../../../../shared/ports.ts';
import { decideCompletion } from '../../../../shared/use-cases/decide-completion.ts';
import { memoryContext } from '../../../support/memory-store.ts';
import { aDefinition } from '../engine/factories.ts';

/**
 * The use cases' one decision on an aggregate as read (docs/definitions.md, "Completion" and
 * "Completion predicate"): by its rule after a reply, by its rule then its deadline once the
 * deadline decides; a predicate evaluated on exactly the members given, the request read only when
 * it mentions `request`, and a predicate that fails ending the aggregate `failed` with the reason.
 */
const OPENED = 1_000_000;
const DEADLINE = OPENED + 60_000;

function aHeader(definition: Definition, overrides: Partial<AggregateHeader> = {}): AggregateHeader {
  return {
    aggregateId: 'a-1',
    definition: definition.name,
    status: AggregateStatus.OPEN,
    expected: 3,
    received: 0,
    lateCount: 0,
    openedAt: OPENED,
    deadline: DEADLINE,
    params: { timeoutSeconds: 60 },
    ...overrides,
  };
}

function members(...bodies: unknown[]): StoredReply[] {
  return bodies.map((body, i) => ({
    replyId: String(i),
    payload: JSON.stringify(body),
    receivedAt: OPENED + i,
    expiresAt: 0,
  }));
}

const ALL = aDefinition({ name: 'orders', completion: { strategy: 'all' }, timeoutSeconds: 60 });

describe('deciding on an all-arrived aggregate', () => {
  it('waits while a reply is missing, and completes when every expected one is in', async () => {
    const { ctx } = memoryContext([ALL]);
    expect(await decideCompletion(ctx, ALL, aHeader(ALL), members({}, {}), 'reply')).toEqual({
      complete: false,
    });
    expect(await decideCompletion(ctx, ALL, aHeader(ALL), members({}, {}, {}), 'reply')).toMatchObject({
      complete: true,
      outcome: 'completed',
      completedBy: 'all-arrived',
    });
  });

  it('times out at the deadline with a reply missing', async () => {
    const { ctx } = memoryContext([ALL]);
    expect(await decideCompletion(ctx, ALL, aHeader(ALL), members({}), 'deadline')).toMatchObject({
      complete: true,
      outcome: 'timed-out',
      completedBy: 'deadline',
    });
  });

  it('completes by its rule at the deadline when every reply is in: never timed out', async () => {
    const { ctx } = memoryContext([ALL]);
    expect(await decideCompletion(ctx, ALL, aHeader(ALL), members({}, {}, {}), 'deadline')).toMatchObject({
      outcome: 'completed',
      completedBy: 'all-arrived',
    });
  });

  it("decides as after a reply before the deadline's decision time, and as the deadline once it has passed", async () => {
    const { ctx, ports } = memoryContext([ALL]);
    ports.now.at = DEADLINE - 1;
    expect(await decideCompletion(ctx, ALL, aHeader(ALL), members({}), 'due')).toEqual({ complete: false });
    ports.now.at = DEADLINE;
    expect(await decideCompletion(ctx, ALL, aHeader(ALL), members({}), 'due')).toMatchObject({
      outcome: 'timed-out',
    });
  });
});

describe('deciding on a completion predicate', () => {
  const QUORUM = aDefinition({
    name: 'quorum',
    completion: { strategy: 'predicate', expression: '$count(replies[vote = "yes"]) >= 2' },
    timeoutSeconds: 60,
  });

  it('holds on the members given, and only on them', async () => {
    const { ctx } = memoryContext([QUORUM]);
    const header = aHeader(QUORUM, { expected: 4 });
    expect(
      await decideCompletion(ctx, QUORUM, header, members({ vote: 'yes' }, { vote: 'no' }), 'reply'),
    ).toEqual({ complete: false });
    expect(
      await decideCompletion(
        ctx,
        QUORUM,
        header,
        members({ vote: 'yes' }, { vote: 'no' }, { vote: 'yes' }),
        'reply',
      ),
    ).toMatchObject({ complete: true, outcome: 'completed', completedBy: 'predicate' });
  });

  it('times out at the deadline when it does not hold', async () => {
    const { ctx } = memoryContext([QUORUM]);
    expect(
      await decideCompletion(ctx, QUORUM, aHeader(QUORUM), members({ vote: 'no' }), 'deadline'),
    ).toMatchObject({
      outcome: 'timed-out',
      completedBy: 'deadline',
    });
  });

  it('ends the aggregate failed, completed by the predicate, with the error as its reason', async () => {
    const failing = aDefinition({
      name: 'failing',
      completion: { strategy: 'predicate', expression: '$error("no quorum rule")' },
    });
    const { ctx } = memoryContext([failing]);
    const decision = await decideCompletion(ctx, failing, aHeader(failing), members({}), 'reply');
    expect(decision).toMatchObject({ complete: true, outcome: 'failed', completedBy: 'predicate' });
    expect(decision.complete && decision.reason).toContain('no quorum rule');
  });

  it('reads the stored request for a predicate that mentions it', async () => {
    const byRequest = aDefinition({
      name: 'by-request',
      completion: {
        strategy: 'predicate',
        expression: '$count(replies[vote = "yes"]) >= request.body.quorum',
      },
    });
    const { ctx, ports } = memoryContext([byRequest]);
    const header = aHeader(byRequest, { requestId: 'r-1' });
    await ports.store.openAggregate(header, {
      payload: JSON.stringify({ body: { quorum: 1 }, labels: [] }),
      expiresAt: 0,
    });
    expect(await decideCompletion(ctx, byRequest, header, members({ vote: 'yes' }), 'reply')).toMatchObject({
      completedBy: 'predicate',
    });
  });

  it('never reads the request for a predicate that does not mention it', async () => {
    const { ctx, ports } = memoryContext([QUORUM]);
    const read = vi.spyOn(ports.store, 'getRequest');
    await decideCompletion(
      ctx,
      QUORUM,
      aHeader(QUORUM, { requestId: 'r-1' }),
      members({ vote: 'yes' }),
      'reply',
    );
    expect(read).not.toHaveBeenCalled();
  });

  it('gives the predicate failed replies apart from the successful ones', async () => {
    const onFailures = aDefinition({
      name: 'on-failures',
      completion: {
        strategy: 'predicate',
        expression: '$count(failures) = 1 and $count(replies) = 1 and received = 2',
      },
      toleratedFailureCount: 1,
    });
    const { ctx } = memoryContext([onFailures]);
    const [ok, bad] = members({ v: 1 }, { detail: 'down' });
    const set = [ok, { ...bad, failure: 'bank down' }] as StoredReply[];
    expect(await decideCompletion(ctx, onFailures, aHeader(onFailures), set, 'reply')).toMatchObject({
      completedBy: 'predicate',
    });
  });
});
