import { describe, expect, it } from 'vitest';
import { replyBody } from '../../../sim/actions.ts';
import { Random } from '../../../sim/random.ts';

/**
 * The body every simulated reply carries: a value, a rate and a score in the ranges the
 * workload's definitions read (`$.rate` against 2.5, `$.score` against 90), and a secret naming
 * its aggregate and reply, by which the invariants tell whose body ended up where.
 */

describe('replyBody', () => {
  it('draws its value, rate and score in range and names its aggregate and reply', () => {
    const random = new Random(1);
    for (let i = 0; i < 500; i += 1) {
      const body = replyBody(random, 'agg', String(i));
      expect(body.v as number).toBeGreaterThanOrEqual(0);
      expect(body.v as number).toBeLessThanOrEqual(100);
      expect(body.rate as number).toBeGreaterThanOrEqual(2);
      expect(body.rate as number).toBeLessThanOrEqual(6);
      expect(body.score as number).toBeGreaterThanOrEqual(0);
      expect(body.score as number).toBeLessThanOrEqual(100);
      expect(body.secret).toBe(`agg|${i}`);
    }
  });

  it('is a function of the draws', () => {
    expect(replyBody(new Random(3), 'a', 'r')).toEqual(replyBody(new Random(3), 'a', 'r'));
  });
});
