import { describe, expect, it } from 'vitest';
import { AggregateStatus } from '../../../../shared/engine/constants.ts';
import type { AggregateHeader } from '../../../../shared/ports.ts';
import { closeByOf, replyExpiry } from '../../../../shared/use-cases/aggregate-life.ts';
import { memoryContext } from '../../../support/memory-store.ts';
import { aDefinition } from '../engine/factories.ts';

/**
 * The lives of an aggregate (docs/data-plane.md, "Lives"; docs/definitions.md, `maxOpenSeconds`,
 * `tombstoneRetentionSeconds`): an item expires past the latest moment its aggregate can be open,
 * then a completion lease (120 s by default), then the tombstone's retention (30 days by default).
 */
const DAY = 86_400;
const LEASE = 120;
const RETENTION = 30 * DAY;
const OPENED = 1_700_000_000_000;
const ORDERS = aDefinition({ name: 'orders', timeoutSeconds: 60 });

function aHeader(overrides: Partial<AggregateHeader> = {}): AggregateHeader {
  return {
    aggregateId: 'a-1',
    definition: 'orders',
    status: AggregateStatus.OPEN,
    received: 0,
    lateCount: 0,
    openedAt: OPENED,
    deadline: OPENED + 60_000,
    closeBy: OPENED + 14 * DAY * 1000,
    params: {},
    ...overrides,
  };
}

describe('when an item of an aggregate may expire', () => {
  it('is its allowed life, then a lease, then the retention', () => {
    const { ctx } = memoryContext([ORDERS], { clock: () => OPENED });
    expect(replyExpiry(ctx, ORDERS, aHeader())).toBe(OPENED / 1000 + 14 * DAY + LEASE + RETENTION);
  });

  it('follows a deadline its request parameters set beyond the allowed life', () => {
    const { ctx } = memoryContext([ORDERS], { clock: () => OPENED });
    const header = aHeader({ params: { timeoutSeconds: 20 * DAY } });
    expect(replyExpiry(ctx, ORDERS, header)).toBe(OPENED / 1000 + 20 * DAY + LEASE + RETENTION);
  });

  it('follows a deadline in the header beyond the allowed life', () => {
    const { ctx } = memoryContext([ORDERS], { clock: () => OPENED });
    const header = aHeader({ deadline: OPENED + 15 * DAY * 1000 });
    expect(replyExpiry(ctx, ORDERS, header)).toBe(OPENED / 1000 + 15 * DAY + LEASE + RETENTION);
  });

  it('gives an item written after the close (a late mark) its whole retention from now', () => {
    const now = OPENED + 20 * DAY * 1000;
    const { ctx } = memoryContext([ORDERS], { clock: () => now });
    expect(replyExpiry(ctx, ORDERS, aHeader())).toBe(now / 1000 + LEASE + RETENTION);
  });

  it('rounds a lease and an instant up to whole seconds', () => {
    const { ctx } = memoryContext([ORDERS], { clock: () => OPENED, completionLeaseMs: 110_500 });
    const header = aHeader({ closeBy: OPENED + 1_500 });
    expect(replyExpiry(ctx, ORDERS, header)).toBe(OPENED / 1000 + 60 + 111 + RETENTION);
  });

  it("gives a header without closeBy its definition's longest life: unknown timeout, allowed life, lease, retention", () => {
    const definition = aDefinition({ name: 'orders', unknownTimeoutSeconds: 300 });
    const { ctx } = memoryContext([definition], { clock: () => OPENED });
    const { closeBy: _, ...header } = aHeader({ deadline: undefined });
    expect(replyExpiry(ctx, definition, header)).toBe(OPENED / 1000 + 300 + 14 * DAY + LEASE + RETENTION);
  });
});

describe('when the sweeper ends an aggregate whatever its strategy', () => {
  it('is its allowed life when its deadline comes sooner', () => {
    expect(closeByOf(ORDERS, OPENED, OPENED + 60_000)).toBe(OPENED + 14 * DAY * 1000);
  });

  it('is its deadline when that comes later, never before the deadline settles', () => {
    const short = aDefinition({ name: 'short', maxOpenSeconds: 60, deadlineSettleSeconds: 5 });
    expect(closeByOf(short, OPENED, OPENED + 120_000)).toBe(OPENED + 125_000);
    expect(closeByOf(short, OPENED, undefined)).toBe(OPENED + 60_000);
  });
});
