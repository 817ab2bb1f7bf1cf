import { describe, expect, it } from 'vitest';
import { aggregate } from '../../../../shared/engine/aggregation.ts';
import { aContext, aDefinition, aReply } from './factories.ts';

/**
 * A result is built more than once — by its owner before the seal, by a resumer after a crash or
 * a failed channel — and every copy must be the same bytes. The algorithms are pure functions of
 * the members, the context's fixed time and the aggregate id.
 */
describe('aggregate: every build of a result is the same bytes', () => {
  const custom = aDefinition({
    aggregation: {
      algorithm: 'custom',
      expression:
        '{ "now": $now(), "millis": $millis(), "day": $now("[Y0001]-[M01]-[D01]"), "random": $random(), "shuffled": $shuffle([1, 2, 3, 4, 5, 6, 7, 8]), "n": $count(replies) }',
    },
  });
  const at = Date.UTC(2026, 0, 15, 9, 30, 0, 123);

  it('custom: $now() and $millis() are the fixed time of the context, not the clock', async () => {
    // Kills the mutant "custom expression evaluated without fixed inputs" (the clock and Math.random).
    // Prepare
    const replies = [aReply('0', { rate: 1 })];

    // Act
    const result = (await aggregate(custom, replies, aContext({ at }))) as Record<string, unknown>;

    // Assess
    expect(result).toMatchObject({
      now: '2026-01-15T09:30:00.123Z',
      millis: at,
      day: '2026-01-15',
      n: 1,
    });
  });

  it('custom: two builds of the same aggregate, at different wall times, give the same bytes; another aggregate draws other numbers', async () => {
    // Kills the mutant "custom expression evaluated without fixed inputs" (the clock and Math.random).
    // Prepare
    const replies = [aReply('0', { rate: 1 }), aReply('1', { rate: 2 })];

    // Act
    const first = JSON.stringify(await aggregate(custom, replies, aContext({ at })));
    await new Promise((resolve) => setTimeout(resolve, 5));
    const second = JSON.stringify(await aggregate(custom, [...replies].reverse(), aContext({ at })));
    const other = (await aggregate(custom, replies, aContext({ at, aggregateId: 'agg-2' }))) as {
      random: number;
      shuffled: number[];
    };

    // Assess
    expect(second).toBe(first);
    const parsed = JSON.parse(first) as { random: number; shuffled: number[] };
    expect(parsed.random).toBeGreaterThanOrEqual(0);
    expect(parsed.random).toBeLessThan(1);
    expect([...parsed.shuffled].sort()).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(other.random).not.toBe(parsed.random);
  });

  it('condense: the sum is folded in reply order, so the order replies are read in cannot change its last bit', async () => {
    // Kills the mutant "condense folds in read order" (no sort before the fold).
    // Prepare: 0.1 + 0.2 + 0.3 is 0.6000000000000001 from the left, 0.6 from the right
    const condense = aDefinition({
      aggregation: { algorithm: 'condense', field: '$.x', functions: ['sum', 'avg'] },
    });
    const replies = [aReply('0', { x: 0.1 }), aReply('1', { x: 0.2 }), aReply('2', { x: 0.3 })];

    // Act
    const inOrder = await aggregate(condense, replies, aContext({ at }));
    const reversed = await aggregate(condense, [...replies].reverse(), aContext({ at }));

    // Assess
    expect(JSON.stringify(reversed)).toBe(JSON.stringify(inOrder));
    expect(inOrder).toEqual({ sum: 0.6000000000000001, avg: 0.6000000000000001 / 3 });
  });
});
