/** The AWS model's design of a hot-aggregate layout, from what a run on the emulator measured. */
import { describe, expect, it } from 'vitest';
import { hotDesign } from '../../../../bench/run/hot.ts';
import type { HotMeasurement } from '../../../../bench/workload/hot-aggregate.ts';

// Eight shards: the reply puts are 1 unit a reply, an eighth of them on each key; the busiest key takes 0.2.
const measured = {
  writeShards: 8,
  recordingWriteUnitsPerReply: 1,
  busiestKeyWriteUnitsPerReply: 0.2,
  busiestKeyReadUnitsPerReply: 0.05,
  repliesPerInvocation: 9.6,
  roundTripsPerInvocation: 3.5,
} as HotMeasurement;

describe("a hot aggregate's design", () => {
  it("takes the run's layout: the busiest key's writes besides its share of the reply puts", () => {
    expect(hotDesign(measured, 'as run', 40)).toEqual({
      name: 'as run',
      shards: 8,
      replyUnits: 1,
      // 0.2 less 1/8 of the puts.
      headerKeyWriteUnitsPerReply: expect.closeTo(0.075, 9),
      headerKeyReadUnitsPerReply: 0.05,
      batch: 10,
      consumers: 40,
      roundTrips: 3.5,
    });
  });

  it('spreads those other writes over more shards than were measured', () => {
    // 0.075 a reply on each of 8 keys: 0.6 in all, over 16 keys.
    expect(hotDesign(measured, 'more shards', 160, 16).headerKeyWriteUnitsPerReply).toBeCloseTo(0.0375, 9);
  });

  it('counts no other writes when the busiest key holds no more than its share, and a batch of at least one', () => {
    const design = hotDesign(
      { ...measured, busiestKeyWriteUnitsPerReply: 0.1, repliesPerInvocation: 0.2 },
      'x',
      1,
    );
    expect(design.headerKeyWriteUnitsPerReply).toBe(0);
    expect(design.batch).toBe(1);
  });
});
