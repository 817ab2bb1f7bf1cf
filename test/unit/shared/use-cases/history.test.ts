import { describe, expect, it } from 'vitest';
import type { AggregateHeader, AggregateRecords } from '../../../../shared/ports.ts';
import { aggregateHistory } from '../../../../shared/use-cases/history.ts';
import { MemoryStateStore } from '../../../support/memory-store.ts';

const T0 = Date.UTC(2026, 0, 1);

const header: AggregateHeader = {
  aggregateId: 'a-1',
  definition: 'orders',
  status: 'open',
  expected: 2,
  received: 0,
  lateCount: 0,
  openedAt: T0,
  params: { timeoutSeconds: 60 },
  // As fan-out.ts keeps it: the request id, then the plan's digests after a NUL.
  requestId: 'req-1\u0000abc\u0000d.e',
};

describe('aggregateHistory', () => {
  it('reads a store without readHistory from its reply set and held replies, and says what that leaves out', async () => {
    // Arrange
    const store = new MemoryStateStore();
    await store.openAggregate(header);
    await store.putReply('a-1', {
      replyId: '0',
      payload: '{}',
      receivedAt: T0 + 1000,
      expiresAt: 0,
      messageId: 'm-0',
    });

    // Act
    const history = await aggregateHistory(store, 'a-1');

    // Assess
    expect(history.status).toBe('open');
    expect(history.events.map((e) => e.kind)).toEqual(['opened', 'reply']);
    expect(history.events[0]).toMatchObject({ requestId: 'req-1' });
    expect(history.events[1]).toMatchObject({ replyId: '0', messageId: 'm-0', occurredAt: T0 + 1000 });
    expect(history.cannotTell.join('\n')).toContain('one copy per reply');
  });

  it('takes every item from a store that reads them whole, and names the output of each outcome', async () => {
    // Arrange: a store whose readHistory gives two copies of one reply and a purged seal
    const records: AggregateRecords = {
      header: {
        ...header,
        status: 'closed',
        outcome: 'purged',
        completedBy: 'purge',
        completingAt: T0 + 5000,
        members: ['0'],
      },
      copies: [
        { replyId: '0', receivedAt: T0 + 1000, pack: 'Q#0' },
        { replyId: '0', receivedAt: T0 + 2000 },
      ],
      marks: [],
      held: [],
    };
    const store = {
      readHistory: async () => records,
      readAggregate: async () => {
        throw new Error('not read when readHistory is there');
      },
      listHeld: async () => [],
    };

    // Act
    const history = await aggregateHistory(store, 'a-1');

    // Assess
    expect(history.events.find((e) => e.kind === 'reply')?.copies).toBe(2);
    expect(history.events.find((e) => e.kind === 'published')?.output?.to).toBe('status');
    expect(history.cannotTell.join('\n')).not.toContain('one copy per reply');
  });

  it('says not found for an aggregate with no items', async () => {
    expect((await aggregateHistory(new MemoryStateStore(), 'nothing')).status).toBe('not found');
  });
});
