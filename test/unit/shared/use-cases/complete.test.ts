import { describe, expect, it } from 'vitest';
import { AggregateStatus } from '../../../../shared/engine/constants.ts';
import type { AggregateHeader } from '../../../../shared/ports.ts';
import { membersAreAll } from '../../../../shared/use-cases/complete.ts';
import { aDefinition } from '../engine/factories.ts';

/**
 * When a completer may skip its read after the seal (complete.ts): only when no reply
 * outside the sealed member set can exist. A splitter's or recipient list's replies are recorded
 * only with an index below `expected` (replies.ts, refusalOf), so a member set holding every one
 * of them leaves no reply to route late; any other aggregate keeps the read.
 */
const SPLITTER = aDefinition({ fanOut: { type: 'splitter', itemsPath: '$.items', target: 'quotes' } });
const NONE = aDefinition({ fanOut: { type: 'none' } });

function aSealedHeader(overrides: Partial<AggregateHeader> = {}): AggregateHeader {
  return {
    aggregateId: 'a-1',
    definition: 'orders',
    status: AggregateStatus.COMPLETING,
    expected: 3,
    askedUpTo: 3,
    received: 3,
    lateCount: 0,
    openedAt: 1_000,
    params: {},
    members: ['0', '1', '2'],
    ...overrides,
  };
}

describe('membersAreAll', () => {
  it('holds for a fan-out’s aggregate sealed with every index below expected', () => {
    // Mutant killed: "membersAreAll always false" (the owner reads the aggregate again after every seal)
    expect(membersAreAll(aSealedHeader(), SPLITTER)).toBe(true);
    expect(membersAreAll(aSealedHeader({ askedUpTo: 0 }), SPLITTER)).toBe(true);
  });

  it('does not hold when an index is missing, even with as many members as expected', () => {
    // Mutant killed: "the indexes are not checked one by one" — a set the size of expected whose
    // ids are not the indexes (another definition's ids, recorded before a redeploy) is not all
    expect(membersAreAll(aSealedHeader({ members: ['0', '1'] }), SPLITTER)).toBe(false);
    expect(membersAreAll(aSealedHeader({ members: ['0', '1', '02'] }), SPLITTER)).toBe(false);
    expect(membersAreAll(aSealedHeader({ members: ['0', '1', 'x'] }), SPLITTER)).toBe(false);
  });

  it('does not hold for an aggregate whose replies may carry any id', () => {
    // Mutant killed: "any fan-out type" — a definition without indexed replies keeps the read
    expect(membersAreAll(aSealedHeader(), NONE)).toBe(false);
    expect(membersAreAll(aSealedHeader(), undefined)).toBe(false);
    // Mutant killed: "askedUpTo not required" — an aggregate its fan-out did not open
    expect(membersAreAll(aSealedHeader({ askedUpTo: undefined }), SPLITTER)).toBe(false);
    expect(membersAreAll(aSealedHeader({ expected: undefined }), SPLITTER)).toBe(false);
  });
});
