import { describe, expect, it } from 'vitest';
import { DEMOS, demoSummary } from '../../../../local/demo/run.ts';

/**
 * The demos' results in their own words (what `npm start -- --demo` prints of each output): the
 * loan broker's best rate and who did not answer, the auction's winning bid; nothing for other
 * definitions. Running a demo starts processes: the demo's integration test does.
 */
describe('demoSummary', () => {
  const timing = { openedAt: Date.UTC(2026, 0, 1), closedAt: Date.UTC(2026, 0, 1) + 2_500 };

  it("gives a loan broker's best rate, its bank, the quotes counted and the banks that did not answer", () => {
    expect(
      demoSummary({
        type: 'fanin.aggregate.timed-out',
        outcome: 'timed-out',
        definition: 'loan-broker',
        aggregateId: 'loan-1',
        ...timing,
        counts: { received: 3, expected: 5 },
        result: { body: { rate: 3.9, bank: 'bank-2' } },
        missing: [{ replyId: '3', label: 'bank-4' }, { replyId: '4' }],
      }),
    ).toBe(
      'loan-broker loan-1 timed-out after 2.5 s: best rate 3.9% from bank-2 (3 of 5 quotes; no answer (yet) from bank-4, 4)',
    );
  });

  it('says when a loan broker got no quote', () => {
    expect(
      demoSummary({
        type: 'fanin.aggregate.failed',
        definition: 'loan-broker',
        aggregateId: 'loan-2',
        counts: { received: 0, expected: 5 },
      }),
    ).toBe('loan-broker loan-2 fanin.aggregate.failed: no quote (0 of 5 quotes)');
  });

  it("gives an auction's winning bid and bidder, or that there were none", () => {
    expect(
      demoSummary({
        type: 'fanin.aggregate.completed',
        outcome: 'completed',
        definition: 'auction',
        aggregateId: 'auction:lot-1',
        counts: { received: 4 },
        result: { body: { price: 120, bidder: 'b-3' } },
      }),
    ).toBe('auction auction:lot-1 completed: winning bid 120 by b-3 (4 bids)');
    expect(demoSummary({ outcome: 'timed-out', definition: 'auction', aggregateId: 'auction:lot-2' })).toBe(
      'auction auction:lot-2 timed-out: no bids (0 bids)',
    );
  });

  it('has nothing to say of another definition', () => {
    expect(demoSummary({ outcome: 'completed', definition: 'orders', aggregateId: 'o-1' })).toBeUndefined();
  });

  it('offers the demos npm start --demo takes (docs/cli.md)', () => {
    expect([...DEMOS]).toEqual(['loan', 'auction', 'all']);
  });
});
