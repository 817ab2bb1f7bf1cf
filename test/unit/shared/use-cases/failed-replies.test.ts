import { describe, expect, it } from 'vitest';
import { AggregateStatus } from '../../../../shared/engine/constants.ts';
import type { AggregateHeader, RawMessage } from '../../../../shared/ports.ts';
import { keepRetriedFailures } from '../../../../shared/use-cases/failed-replies.ts';
import type { Reply } from '../../../../shared/use-cases/record-replies.ts';
import { memoryContext } from '../../../support/memory-store.ts';
import { aDefinition } from '../engine/factories.ts';

/**
 * Failed replies kept for a retry (shared/use-cases/failed-replies.ts) over the memory store: the
 * module's own fast test (the kit's test/unit/packages/testing/features/retries.test.ts and the
 * integration test test/integration/guarantees/retries.test.ts run it on the real handlers).
 */
const T0 = 1_000_000;
const BANKS = aDefinition({
  name: 'banks',
  completion: { strategy: 'all' },
  fanOut: { type: 'recipient-list', recipients: ['bank-a', 'bank-b', 'bank-c'] },
  timeoutSeconds: 600,
  responders: { timeoutSeconds: 120, retry: { attempts: 2, intervalSeconds: 10, failedReplies: true } },
});

function anOpenHeader(overrides: Partial<AggregateHeader> = {}): AggregateHeader {
  return {
    aggregateId: 'loan-1',
    definition: 'banks',
    status: AggregateStatus.OPEN,
    expected: 3,
    askedUpTo: 3,
    received: 0,
    lateCount: 0,
    openedAt: T0,
    deadline: T0 + 600_000,
    params: {
      timeoutSeconds: 600,
      recipientTimeoutSeconds: 120,
      retry: { attempts: 2, intervalSeconds: 10, backoffRate: 2, failedReplies: true },
    },
    ...overrides,
  };
}

function aReply(replyId: string, attributes: Record<string, string>, receivedAt = T0 + 1_000): Reply {
  const raw: RawMessage = {
    messageId: `m-${replyId}-${Math.random()}`,
    body: '{}',
    attributes,
    receiveCount: 1,
  };
  return {
    raw,
    inbound: { body: {}, attributes, messageId: raw.messageId },
    aggregateId: 'loan-1',
    replyId,
    messageId: raw.messageId,
    receivedAt,
  };
}

async function opened(header: AggregateHeader = anOpenHeader()) {
  const { ctx, ports } = memoryContext([BANKS]);
  await ports.store.openAggregate(header);
  return { ctx, ports, header };
}

describe('keepRetriedFailures', () => {
  it('keeps a failed reply whose recipient a round asks again, and hands the others back to be recorded', async () => {
    // Prepare
    const { ctx, ports, header } = await opened();
    const failed = aReply('1', { 'fanin-failure': 'down' });
    const ok = aReply('0', {});

    // Act
    const recorded = await keepRetriedFailures(ctx, header, [ok, failed]);

    // Assess
    expect(recorded).toEqual([ok]);
    expect((await ports.store.getHeader('loan-1'))?.failedAttempts).toEqual({ '1': 1 });
  });

  it('settles a copy of a kept failure with no write, in the same batch or redelivered later', async () => {
    // Prepare
    const { ctx, ports, header } = await opened();
    const writes: number[] = [];
    const keep = ports.store.keepFailedAttempt.bind(ports.store);
    ports.store.keepFailedAttempt = async (...args) => {
      writes.push(args[2]);
      return keep(...args);
    };

    // Act
    const first = await keepRetriedFailures(ctx, header, [
      aReply('1', { 'fanin-failure': 'down' }),
      aReply('1', { 'fanin-failure': 'down' }),
    ]);
    const again = await keepRetriedFailures(ctx, header, [aReply('1', { 'fanin-failure': 'down' })]);

    // Assess
    expect([first, again]).toEqual([[], []]);
    expect(writes).toEqual([1]);
  });

  it('hands back the failure of the last attempt, to be recorded as the recipient’s reply', async () => {
    // Prepare: both rounds taken, bank-b asked in each
    const { ctx, ports } = await opened(anOpenHeader({ retryRound: 2, retried: { '1': 2 } }));
    const header = (await ports.store.getHeader('loan-1')) as AggregateHeader;
    const last = aReply('1', { 'fanin-failure': 'down', 'fanin-attempt': '3' }, T0 + 35_000);

    // Act
    const recorded = await keepRetriedFailures(ctx, header, [last]);

    // Assess
    expect(recorded).toEqual([last]);
    expect((await ports.store.getHeader('loan-1'))?.failedAttempts).toEqual({});
  });

  it('judges on the header read again: a round recorded since the reply path read it is seen', async () => {
    // Prepare: the reply path's read is from before round 1 took bank-b; the store has it
    const { ctx, ports, header } = await opened();
    await ports.store.recordRetries('loan-1', 0, 1, { '1': 1 }, T0 + 30_000);
    const stale = aReply('1', { 'fanin-failure': 'slow' }, T0 + 12_000);

    // Act: attempt 1's failure, after attempt 2 went out
    const recorded = await keepRetriedFailures(ctx, header, [stale]);

    // Assess: kept as attempt 1, not the last word on bank-b
    expect(recorded).toEqual([]);
    expect((await ports.store.getHeader('loan-1'))?.failedAttempts).toEqual({ '1': 1 });
  });

  it('judges on the header read again: a heartbeat kept since the reply path read it moves the deadline a round must come before', async () => {
    // Prepare: bank-b's own deadline 21 s, moved to 45 s by a heartbeat at 15 s the reply path's read missed
    const params = {
      timeoutSeconds: 600,
      recipientTimeoutSeconds: 20,
      heartbeatSeconds: 30,
      retry: { attempts: 2, intervalSeconds: 10, backoffRate: 2, failedReplies: true },
    };
    const first = anOpenHeader({ params, retryRound: 1, retried: { '1': 1 }, beats: {} });
    const { ctx, ports } = await opened(first);
    await ports.store.keepHeartbeat('loan-1', '1', T0 + 15_000);
    const failed = aReply('1', { 'fanin-failure': 'down', 'fanin-attempt': '2' }, T0 + 25_000);

    // Act: attempt 2 fails at 25 s; the second round (31 s) comes before the moved deadline
    const recorded = await keepRetriedFailures(ctx, first, [failed]);

    // Assess
    expect(recorded).toEqual([]);
    expect((await ports.store.getHeader('loan-1'))?.failedAttempts).toEqual({ '1': 2 });
  });

  it('looks again when its keep loses to a round taken meanwhile', async () => {
    // Prepare: the first keep finds round 1 recorded between the read and the write
    const { ctx, ports, header } = await opened();
    const keep = ports.store.keepFailedAttempt.bind(ports.store);
    let looks = 0;
    ports.store.keepFailedAttempt = async (...args) => {
      looks += 1;
      if (looks === 1) await ports.store.recordRetries('loan-1', 0, 1, { '1': 1 }, T0 + 30_000);
      return keep(...args);
    };

    // Act
    const recorded = await keepRetriedFailures(ctx, header, [aReply('1', { 'fanin-failure': 'down' })]);

    // Assess
    expect(recorded).toEqual([]);
    expect(looks).toBe(2);
    expect((await ports.store.getHeader('loan-1'))?.failedAttempts).toEqual({ '1': 1 });
  });

  it('reads and writes nothing for a definition that does not retry failures, or a batch without one', async () => {
    // Prepare
    const { ctx, ports } = await opened();
    let reads = 0;
    const get = ports.store.getHeader.bind(ports.store);
    ports.store.getHeader = async (...args) => {
      reads += 1;
      return get(...args);
    };
    const plain = anOpenHeader({ params: { timeoutSeconds: 600 } });
    const failed = aReply('1', { 'fanin-failure': 'down' });
    const ok = aReply('0', {});

    // Act
    const a = await keepRetriedFailures(ctx, plain, [failed]);
    const b = await keepRetriedFailures(ctx, anOpenHeader(), [ok]);

    // Assess
    expect([a, b]).toEqual([[failed], [ok]]);
    expect(reads).toBe(0);
  });

  it('hands every reply back once the aggregate is no longer open (the recording settles them as late or duplicates)', async () => {
    // Prepare
    const { ctx, ports, header } = await opened();
    await ports.store.seal('loan-1', {
      outcome: 'completed',
      members: [],
      at: T0 + 2_000,
      lease: 'l',
      leaseUntil: T0 + 90_000,
    });
    const failed = aReply('1', { 'fanin-failure': 'down' });

    // Act
    const recorded = await keepRetriedFailures(ctx, header, [failed]);

    // Assess
    expect(recorded).toEqual([failed]);
  });
});
