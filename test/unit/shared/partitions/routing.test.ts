import { describe, expect, it } from 'vitest';
import { affinityOrder, type Candidate, choosePartition } from '../../../../shared/partitions/routing.ts';

/**
 * How a producer picks a partition (docs/partitions.md, "Routing"): affinity by rendezvous hashing,
 * balanced by least depth with ties rotating, prefer-local then balanced.
 */
const FOUR: Candidate[] = [0, 1, 2, 3].map((index) => ({ index }));
const keys = Array.from({ length: 400 }, (_, i) => `aggregate-${i}`);

describe('affinity', () => {
  it('keeps a key on the same partition, whatever the order the candidates come in', () => {
    for (const key of keys.slice(0, 50)) {
      const chosen = choosePartition({ kind: 'affinity', key }, FOUR);
      expect(choosePartition({ kind: 'affinity', key }, [...FOUR].reverse())).toBe(chosen);
      expect(affinityOrder(key, [3, 1, 0, 2])[0]).toBe(chosen);
    }
  });

  it('spreads keys over every partition', () => {
    const counts = [0, 0, 0, 0];
    for (const key of keys) {
      const index = choosePartition({ kind: 'affinity', key }, FOUR) as number;
      counts[index] = (counts[index] ?? 0) + 1;
    }
    for (const count of counts) expect(count).toBeGreaterThan(50); // 100 each on average
  });

  it('moves only the keys of a partition that becomes unavailable, each to its own second choice', () => {
    const without2 = FOUR.filter((c) => c.index !== 2);
    const moved: number[] = [];
    for (const key of keys) {
      const before = choosePartition({ kind: 'affinity', key }, FOUR);
      const after = choosePartition({ kind: 'affinity', key }, without2);
      if (before !== 2) expect(after).toBe(before);
      else {
        expect(after).toBe(affinityOrder(key, [0, 1, 2, 3])[1]);
        moved.push(after as number);
      }
    }
    // The moved keys do not all land on one partition.
    expect(new Set(moved).size).toBeGreaterThan(1);
  });

  it('orders every partition once', () => {
    expect([...affinityOrder('k', [0, 1, 2, 3])].sort()).toEqual([0, 1, 2, 3]);
  });
});

describe('balanced', () => {
  it('picks the partition with the least depth', () => {
    const candidates = [
      { index: 0, depth: 30 },
      { index: 1, depth: 5 },
      { index: 2, depth: 12 },
    ];
    expect(choosePartition({ kind: 'balanced' }, candidates)).toBe(1);
  });

  it('rotates between equally loaded partitions', () => {
    const candidates = [
      { index: 0, depth: 4 },
      { index: 1, depth: 9 },
      { index: 2, depth: 4 },
    ];
    expect([0, 1, 2, 3].map((r) => choosePartition({ kind: 'balanced' }, candidates, r))).toEqual([
      0, 2, 0, 2,
    ]);
  });

  it('takes a partition of unknown depth as empty', () => {
    expect(choosePartition({ kind: 'balanced' }, [{ index: 0, depth: 3 }, { index: 1 }])).toBe(1);
  });
});

describe('prefer-local', () => {
  it("picks the producer's own partition while it is available, whatever its depth", () => {
    const candidates = [
      { index: 0, depth: 0 },
      { index: 1, depth: 100 },
    ];
    expect(choosePartition({ kind: 'prefer-local', local: 1 }, candidates)).toBe(1);
  });

  it('is balanced when its own partition is not available', () => {
    const candidates = [
      { index: 0, depth: 7 },
      { index: 2, depth: 1 },
    ];
    expect(choosePartition({ kind: 'prefer-local', local: 1 }, candidates)).toBe(2);
  });
});

describe('no partition available', () => {
  it.each([
    { kind: 'balanced' as const },
    { kind: 'affinity' as const, key: 'k' },
    { kind: 'prefer-local' as const, local: 0 },
  ])('picks none (%j)', (policy) => {
    expect(choosePartition(policy, [])).toBeUndefined();
  });
});
