import { describe, expect, it } from 'vitest';
import { measuredFloorBatching, replyFloorBill, replyFloorPerMillion } from '../../../../bench/cost/floor.ts';
import { loadPrices } from '../../../../bench/cost/prices.ts';

/**
 * The floor the benchmark measures the aggregate's own work against: what ten replies
 * cost at the least whatever the design, by service, at the batching a pattern measured.
 */
describe('the reply floor of the own-work row', () => {
  it('is $20.25 per million with one reply per batch and receive, and $7.50 with whole packs of ten', async () => {
    const prices = await loadPrices();
    const alone = measuredFloorBatching(
      { replies_per_batch: 1, reply_receives: 1, replies_per_aggregate_per_batch: 1 },
      10,
      0.4,
    );
    const packed = measuredFloorBatching(
      { replies_per_batch: 10, reply_receives: 0.1, replies_per_aggregate_per_batch: 10 },
      10,
      0.4,
    );
    // Mutant killed: "the receives are taken per batch" / "the pack's units are not used"
    expect(replyFloorPerMillion(10, alone, prices)).toBeCloseTo(20.25, 6);
    expect(replyFloorPerMillion(10, packed, prices)).toBeCloseTo(7.5, 6);
  });

  it('is the sum of its services, each the part a design cannot avoid', async () => {
    const prices = await loadPrices();
    const bill = replyFloorBill(
      10,
      { repliesPerBatch: 1, messagesPerReceive: 1, writeUnitsPerReply: 1 },
      prices,
    );
    // 10 × (send + receive + delete) at $0.40, 10 invocations at $0.20, 10 write units at $0.625
    expect(bill.sqs).toBeCloseTo(12, 6);
    expect(bill.lambda).toBeCloseTo(2, 6);
    expect(bill.dynamodb).toBeCloseTo(6.25, 6);
    expect(bill.total).toBeCloseTo(bill.sqs + bill.lambda + bill.dynamodb, 9);
  });

  it('takes a partial pack in proportion between a reply alone and a whole pack', () => {
    const half = measuredFloorBatching(
      { replies_per_batch: 5.5, reply_receives: 0.5, replies_per_aggregate_per_batch: 5.5 },
      10,
      0.4,
    );
    // Mutant killed: "any pack is a whole pack" — 5.5 of 10 is half way from 1 to 0.4
    expect(half.writeUnitsPerReply).toBeCloseTo(0.7, 6);
    expect(half.messagesPerReceive).toBeCloseTo(2, 6);
  });
});
