/**
 * The hot-aggregate model: its bounds from DynamoDB's per-key limits (1,000 write and 3,000 read units
 * a second) and from the consumers, and the simulation's sustained rate under them.
 */
import { describe, expect, it } from 'vitest';
import {
  type AwsLimits,
  type HotDesign,
  hotBounds,
  simulateHot,
} from '../../../../bench/model/hot-aggregate.ts';

const limits: AwsLimits = {
  keyWriteUnitsPerSecond: 1_000,
  keyReadUnitsPerSecond: 3_000,
  callMs: 8,
  overheadMs: 10,
  throttleRetries: 10,
  visibilityTimeoutSeconds: 181,
};
const design: HotDesign = {
  name: 'one key',
  shards: 1,
  replyUnits: 1,
  headerKeyWriteUnitsPerReply: 0,
  headerKeyReadUnitsPerReply: 0,
  batch: 10,
  consumers: 5,
  roundTrips: 1,
};

describe('the hot-aggregate bounds', () => {
  it('one write unit per reply on one key: 1,000 replies a second, the keys binding', () => {
    const b = hotBounds({ ...design, consumers: 100 }, limits);
    expect(b.writeBound).toBe(1_000);
    expect(b.readBound).toBe(Number.POSITIVE_INFINITY);
    expect(b.bindingConstraint).toBe('writeBound');
  });

  it('spreads the reply units over the shards, the header key keeping its own writes', () => {
    const b = hotBounds({ ...design, shards: 4, headerKeyWriteUnitsPerReply: 0.25 }, limits);
    expect(b.busiestKeyWriteUnitsPerReply).toBe(0.5);
    expect(b.writeBound).toBe(2_000);
  });

  it('bounds by the consumers: consumers × batch over an invocation of round trips and overhead', () => {
    const b = hotBounds({ ...design, shards: 8 }, limits);
    expect(b.consumerBound).toBeCloseTo((5 * 10 * 1000) / 18, 6);
    expect(b.bindingConstraint).toBe('consumerBound');
    expect(b.bound).toBe(b.consumerBound);
  });

  it('bounds by the reads on the header key when they are the tighter limit', () => {
    const b = hotBounds({ ...design, shards: 8, consumers: 1_000, headerKeyReadUnitsPerReply: 6 }, limits);
    expect(b.readBound).toBe(500);
    expect(b.bindingConstraint).toBe('readBound');
  });
});

describe('the hot-aggregate simulation', () => {
  it('sustains no more than the write bound on one key, and is the same for the same seed', () => {
    const hot = { ...design, consumers: 100 };
    const run = simulateHot(hot, limits, 20_000);
    expect(run.sustainedRepliesPerSecond).toBeLessThanOrEqual(1_000 * 1.05);
    expect(run.sustainedRepliesPerSecond).toBeGreaterThan(500);
    expect(simulateHot(hot, limits, 20_000)).toEqual(run);
  });
});
