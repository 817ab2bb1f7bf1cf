/** How the saturated run and the paced phases are sized from what the runs before them measured. */
import { describe, expect, it } from 'vitest';
import { QUICK } from '../../../../bench/run/plan.ts';
import { capacityAfterMs, pacing, saturatedAggregatesAfter } from '../../../../bench/run/saturation.ts';

// capacityMs 4 s, at most 60 replies/s offered, 30 aggregates over 12 s.
const plan = QUICK;
const run = (replies: number, releaseToLastResultMs: number) => ({ replies, releaseToLastResultMs });

describe('the saturation sizing', () => {
  it('sizes the saturated run to last a capacity window at the warm-up rate, 30 aggregates at least', () => {
    // 1,000 replies/s for 4 s: 4,000 replies, 400 aggregates of 10.
    expect(saturatedAggregatesAfter(run(200, 200), plan)).toBe(400);
    // 50 replies/s for 4 s: 20 aggregates, raised to 30.
    expect(saturatedAggregatesAfter(run(100, 2_000), plan)).toBe(30);
  });

  it('times the window after the saturated run as long as the run, within half to twice a window', () => {
    expect(capacityAfterMs(run(0, 3_000), plan)).toBe(3_000);
    expect(capacityAfterMs(run(0, 500), plan)).toBe(2_000);
    expect(capacityAfterMs(run(0, 60_000), plan)).toBe(8_000);
  });

  it("paces the paced phases at half the saturated rate, within 10 and the plan's most", () => {
    // 80 replies/s saturated: 40 offered; 40 × 12 s / 10 = 48 aggregates, the plan's 30 at most.
    expect(pacing(run(800, 10_000), plan)).toEqual({ pace: 40, arrivalAggregates: 30 });
    expect(pacing(run(2_000, 1_000), plan).pace).toBe(60);
  });

  it('runs fewer aggregates, 20 at least, when a slow machine lowers the pace', () => {
    // 10 replies/s saturated: 5, raised to 10; 10 × 12 s / 10 = 12 aggregates, raised to 20.
    expect(pacing(run(100, 10_000), plan)).toEqual({ pace: 10, arrivalAggregates: 20 });
    // 50 replies/s saturated: 25; 25 × 12 s / 10 = 30.
    expect(pacing(run(500, 10_000), { ...plan, arrivalAggregates: 100 })).toEqual({
      pace: 25,
      arrivalAggregates: 30,
    });
  });
});
