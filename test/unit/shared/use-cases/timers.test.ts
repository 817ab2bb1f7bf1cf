import { describe, expect, it } from 'vitest';
import { AggregateStatus } from '../../../../shared/engine/constants.ts';
import type { AggregateHeader } from '../../../../shared/ports.ts';
import { QueueRole } from '../../../../shared/topology/topology.ts';
import { handleTimer } from '../../../../shared/use-cases/timers.ts';
import { memoryContext } from '../../../support/memory-store.ts';
import { aDefinition } from '../engine/factories.ts';

/** The timer use case over in-memory ports: which messages it refuses, and one it acts on. */

const ORDERS = aDefinition({ name: 'orders', completion: { strategy: 'all' }, timeoutSeconds: 60 });
const OPENED = 1_000_000;

/** An open aggregate of `orders` expecting `expected` replies. */
function anOpenHeader(aggregateId: string, expected = 2): AggregateHeader {
  return {
    aggregateId,
    definition: ORDERS.name,
    status: AggregateStatus.OPEN,
    expected,
    received: 0,
    lateCount: 0,
    openedAt: OPENED,
    deadline: OPENED + 60_000,
    params: {},
  };
}

describe('timer messages', () => {
  it.each([
    ['not JSON', 'nope'],
    ['no kind', { aggregateId: 'a', dueAt: 1 }],
    ['an unknown kind', { kind: 'other', aggregateId: 'a', dueAt: 1 }],
    ['a held timer without a reply id', { kind: 'held', aggregateId: 'a', dueAt: 1 }],
    ['a snapshot timer with period 0', { kind: 'snapshot', aggregateId: 'a', dueAt: 1, period: 0 }],
    [
      'a snapshot timer with a fractional period',
      { kind: 'snapshot', aggregateId: 'a', dueAt: 1, period: 1.5 },
    ],
    ['a due time that is not a number', { kind: 'deadline', aggregateId: 'a', dueAt: '1' }],
  ])('routes %s to the error output', async (_, body) => {
    // Prepare
    const { ctx, ports } = memoryContext([ORDERS]);
    const raw = {
      messageId: 't-1',
      body: typeof body === 'string' ? body : JSON.stringify(body),
      attributes: {},
      receiveCount: 1,
    };

    // Act
    await handleTimer(ctx, raw);

    // Assess
    const errors = ports.outputs.to(QueueRole.ERROR);
    expect(errors).toHaveLength(1);
    expect(JSON.stringify(errors[0])).toMatch(/not a timer message|not valid JSON/);
  });

  it('acts on a valid deadline timer: an aggregate past its deadline times out', async () => {
    // Prepare
    const { ctx, ports } = memoryContext([ORDERS]);
    await ports.store.openAggregate(anOpenHeader('t-2'));
    ports.now.at = OPENED + 61_000;
    const timer = { kind: 'deadline', aggregateId: 't-2', dueAt: OPENED + 60_000 };

    // Act
    await handleTimer(ctx, {
      messageId: 't-2',
      body: JSON.stringify(timer),
      attributes: {},
      receiveCount: 1,
    });

    // Assess
    expect((await ports.store.getHeader('t-2'))?.status).toBe(AggregateStatus.CLOSED);
    expect(ports.outputs.published.map((p) => p.role)).toEqual([QueueRole.TIMED_OUT]);
  });
});
