import { describe, expect, it } from 'vitest';
import { neutralise } from '../../../sim/determinism.ts';
import { checkInvariants } from '../../../sim/invariants.ts';
import { World } from '../../../sim/world.ts';

/**
 * The ledger's receipts of replies carry when SQS accepted each copy (its `SentTimestamp`), from
 * the event source's batches as from a drain's receives: `no-member-after-deadline` judges a
 * reply's arrival as the product does (docs/wire-contract.md, "Late replies and the deadline"),
 * the earlier of that time and its first handling by the invocation's clock. Without it, a reply
 * SQS accepted before the deadline and handled by an invocation whose clock runs seconds ahead
 * looked late (seed 153 and five others, issue 28).
 */
describe("the simulation's reply receipts", () => {
  it('carry the SentTimestamp of every copy delivered, so a reply sent before the deadline and handled by a clock ahead of it is in time', async () => {
    // GIVEN seed 153: reply 1 of external-1 accepted by SQS 614 ms before the deadline, handled by
    // an invocation whose clock is 3955 ms ahead
    const world = new World(153);
    const restore = neutralise(world.scheduler);
    try {
      await world.run();
    } finally {
      restore();
    }

    // THEN every receipt has its copy's send time, never after its delivery (mutant killed:
    // the event source's batch recorded without its SentTimestamp)
    const receipts = world.ledger.receipts;
    expect(receipts.length).toBeGreaterThan(0);
    expect(receipts.filter((e) => e.sentAt === undefined)).toEqual([]);
    for (const e of receipts) expect(e.sentAt as number).toBeLessThanOrEqual(e.at);
    const reply = receipts.find((e) => e.aggregateId === 'external-1' && e.replyId === '1');
    expect(reply).toMatchObject({ sentAt: expect.any(Number) });
    expect((reply?.clock ?? 0) - (reply?.sentAt ?? 0)).toBeGreaterThan(3000);
    // AND the invariant holds on it
    const violations = checkInvariants(world.ledger, world.workload.definitions).filter(
      (v) => v.invariant === 'no-member-after-deadline',
    );
    expect(violations).toEqual([]);
  });
});
