/** The parts of the results that `assemble` works out itself, beside those it takes from each phase. */
import { describe, expect, it } from 'vitest';
import { loadPrices } from '../../../../bench/cost/prices.ts';
import {
  headlinePhase,
  type Measured,
  naiveBaseline,
  scaleFigures,
  storeCapacity,
} from '../../../../bench/run/assemble.ts';
import type { ScalePoint } from '../../../../bench/run/scale.ts';
import type { ArrivalPhaseResult, CapacitySample } from '../../../../bench/workload/phases.ts';

const sample = (writesPerSecond: number, perSecond: number[]): CapacitySample => ({
  writes: writesPerSecond * 4,
  elapsedMs: 4_000.4,
  writesPerSecond,
  perSecond,
});

describe("the results' store capacity", () => {
  const capacity = (before: number, after: number) =>
    storeCapacity(
      {
        before: sample(before, [90, 110]),
        after: sample(after, [130, 100]),
        concurrency: 8,
        durationMs: 4_000,
      },
      55,
    );

  it('takes the mean of the windows before and after, and the fraction of it the replies took', () => {
    const { mean, meaningful, figures } = capacity(100, 120);
    expect(mean).toBe(110);
    expect(meaningful).toBe(true);
    expect(figures).toMatchObject({
      concurrency: 8,
      window_ms: 4_000,
      before: { puts_per_second: 100, per_second: [90, 110], duration_ms: 4_000 },
      mean_puts_per_second: 110,
      // 20 apart over a mean of 110.
      spread: 0.182,
      per_second_range: [90, 130],
      // 55 replies/s over the faster and the slower window.
      fraction_range: [0.458, 0.55],
    });
  });

  it('calls a fraction meaningless when the windows are more than a quarter apart', () => {
    // 60 apart over a mean of 130: 0.46.
    expect(capacity(100, 160).meaningful).toBe(false);
    expect(capacity(100, 160).figures.meaningful).toBe(false);
  });
});

describe("the results' headline phase", () => {
  const phase = (pattern: string, windowSeconds: number, replies: number) =>
    ({
      pattern,
      batchingWindowSeconds: windowSeconds,
      batchSize: 10,
      drainIntervalSeconds: 0,
      aggregates: 10,
      replies,
    }) as unknown as ArrivalPhaseResult;
  const input = (arrival: ArrivalPhaseResult[]) =>
    ({ arrival, defaultBatching: { windowSeconds: 1, batchSize: 10 } }) as unknown as Measured;

  it("is the headline pattern's phase at the topology's batching and fan-out 10", () => {
    const headline = phase('independent', 1, 100);
    const phases = [
      phase('spread', 1, 100),
      phase('independent', 2, 100),
      phase('independent', 1, 1_000),
      headline,
    ];
    expect(headlinePhase(input(phases))).toBe(headline);
  });

  it('fails when no phase is that one', () => {
    expect(() => headlinePhase(input([phase('spread', 1, 100)]))).toThrow('no headline arrival phase');
  });
});

describe("the results' scale figures", () => {
  const point = (fanOut: number, writeUnitsPerReply: number, ratio: number) =>
    ({ fanOut, fanin: { writeUnitsPerReply }, ratio }) as ScalePoint;

  it('gives write units per reply and the baseline ratio by fan-out, and the fit of the units', () => {
    expect(scaleFigures([point(10, 0.7, 1.71234), point(100, 0.25, 8.389)])).toEqual({
      write_units_per_reply: { '10': 0.7, '100': 0.25 },
      baseline_ratio: { '10': 1.71, '100': 8.39 },
      write_units_fit: { per_reply: 0.2, per_aggregate: 5 },
    });
  });
});

describe("the naive baseline's bill", () => {
  it("prices the baseline's own units per aggregate, as DynamoDB on demand", async () => {
    const prices = await loadPrices();
    const bill = naiveBaseline(
      {
        aggregates: 10,
        replies: 100,
        elapsedMs: 1,
        counters: {
          'ddb.wcu|naive|UpdateItem': 200,
          'ddb.rcu|naive|GetItem': 5,
          'ddb.wcu|fanin|PutItem': 99,
        },
      },
      prices,
    );
    expect(bill.usage_per_aggregate).toEqual({ write_units: 20, read_units: 0.5 });
    const { write_request_unit_per_million: w, read_request_unit_per_million: r } = prices.dynamodb;
    expect(bill.per_million_aggregates).toBeCloseTo(20 * w + 0.5 * r, 2);
  });
});
