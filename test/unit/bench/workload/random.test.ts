/** The seeded generator the spread pattern and the hot-aggregate model draw from. */
import { describe, expect, it } from 'vitest';
import { mulberry32, seededBy } from '../../../../bench/workload/random.ts';

describe('the seeded random numbers', () => {
  it('repeats the same sequence for the same seed and another for another seed', () => {
    const a = mulberry32(42);
    const b = mulberry32(42);
    const c = mulberry32(43);
    const first = [a(), a(), a()];
    expect([b(), b(), b()]).toEqual(first);
    expect([c(), c(), c()]).not.toEqual(first);
  });

  it('draws numbers in [0, 1)', () => {
    const next = mulberry32(7);
    const draws = Array.from({ length: 1000 }, next);
    expect(draws.every((x) => x >= 0 && x < 1)).toBe(true);
    expect(new Set(draws).size).toBeGreaterThan(990);
  });

  it('seeds by a string: the same text, the same sequence', () => {
    const a = seededBy('agg-1');
    const b = seededBy('agg-1');
    expect([a(), a()]).toEqual([b(), b()]);
    expect(seededBy('agg-2')()).not.toBe(seededBy('agg-1')());
  });
});
