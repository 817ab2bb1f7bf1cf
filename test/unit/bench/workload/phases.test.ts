/** The latency percentiles every phase reports (nearest rank), and the headline's reply bodies. */
import { describe, expect, it } from 'vitest';
import { Bodies, percentile } from '../../../../bench/workload/phases.ts';

describe("the phases' figures", () => {
  it('takes the nearest-rank percentile of unsorted values', () => {
    const values = [50, 10, 40, 20, 30, 60, 70, 80, 90, 100];
    expect(percentile(values, 50)).toBe(50);
    expect(percentile(values, 99)).toBe(100);
    expect(percentile(values, 0)).toBe(10);
  });

  it('has no percentile of nothing', () => {
    expect(percentile([], 50)).toBeNaN();
  });

  it('sends kilobyte replies of one kilobyte of JSON, the same body for the same reply', () => {
    const body = Bodies.kilobyte('a1', 'r1');
    expect(Buffer.byteLength(body)).toBe(1024);
    expect(() => JSON.parse(body)).not.toThrow();
    expect(Bodies.kilobyte('a1', 'r1')).toBe(body);
    expect(Bodies.kilobyte('a1', 'r2')).not.toBe(body);
  });
});
