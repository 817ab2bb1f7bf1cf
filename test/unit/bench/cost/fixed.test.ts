/** What an idle deployment costs a month, item by item, and README's stated total. */
import { describe, expect, it } from 'vitest';
import { fixedMonthly, readmeAtRestTotal } from '../../../../bench/cost/fixed.ts';
import { loadPrices } from '../../../../bench/cost/prices.ts';

const DEFAULTS = { replyPartitions: 2, sweepIntervalSeconds: 60, distributorIntervalSeconds: 60 };
const usdOf = (bill: ReturnType<typeof fixedMonthly>, item: string) =>
  bill.items.find((i) => i.item === item)?.usd;

describe('the monthly bill of an idle deployment', () => {
  it('is $9.14 with the defaults, most of it the 46 alarms ($4.60) and the dashboard ($3.00)', async () => {
    const bill = fixedMonthly(await loadPrices(), DEFAULTS);
    expect(usdOf(bill, 'CloudWatch alarms')).toBeCloseTo(4.6, 9);
    expect(usdOf(bill, 'CloudWatch dashboard')).toBe(3);
    // 5 queues × 5 pollers × 3 polls/min × 43,200 min = 3.24 M receives at $0.40 per million
    expect(usdOf(bill, 'SQS empty receives (idle polling)')).toBeCloseTo(1.296, 9);
    // 43,200 sweeps: $0.00864 of requests + 43,200 × 0.1 s × 0.5 GB × $1.33334e-5
    expect(usdOf(bill, 'Sweeper invocations')).toBeCloseTo(0.037440144, 9);
    // 43,200 sweeps × 8 queries × 0.5 RRU at $0.125 per million
    expect(usdOf(bill, 'Sweeper reads')).toBeCloseTo(0.0216, 9);
    // 43,200 × 0.5 KB = 0.0206 GB at $0.50
    expect(usdOf(bill, 'Sweeper logs')).toBeCloseTo(0.0102996826, 9);
    // 43,200 cycles × (2 depth reads + 1 receive) at $0.40 per million
    expect(usdOf(bill, 'Distributor SQS requests')).toBeCloseTo(0.05184, 9);
    // 86,400 RRU at $0.125 + 86,400 WRU at $0.625 per million
    expect(usdOf(bill, 'Distributor table')).toBeCloseTo(0.0648, 9);
    expect(usdOf(bill, 'Distributor invocations')).toBeCloseTo(0.051840216, 9);
    expect(bill.total).toBeCloseTo(9.1441197252, 9);
    expect(bill.total).toBeCloseTo(
      bill.items.reduce((sum, i) => sum + i.usd, 0),
      9,
    );
  });

  it('says how each item is counted, with the figures it multiplies', async () => {
    const bill = fixedMonthly(await loadPrices(), DEFAULTS);
    const how = Object.fromEntries(bill.items.map((i) => [i.item, i.how]));
    expect(how['CloudWatch alarms']).toBe('40 + 3N = 46 standard alarms × $0.1');
    expect(how['SQS empty receives (idle polling)']).toBe(
      '5 consumed queues × 5 pollers × 3 long polls/min = 3.24 M requests, 0.26 $ per queue',
    );
    expect(how['Sweeper invocations']).toBe('43,200 × ~100 ms');
    expect(how['Distributor invocations']).toBe('43,200 × ~150 ms');
  });

  it('adds about 60 cents a month per extra reply partition', async () => {
    const prices = await loadPrices();
    const two = fixedMonthly(prices, DEFAULTS);
    const three = fixedMonthly(prices, { ...DEFAULTS, replyPartitions: 3 });
    // 3 alarms $0.30, one more polled queue $0.2592, a depth read $0.01728 and an update $0.027 a cycle
    expect(three.total - two.total).toBeCloseTo(0.60348, 9);
    expect(usdOf(three, 'Sweeper reads')).toBe(usdOf(two, 'Sweeper reads'));
  });

  it("scales the sweeper's items with how often it runs, and leaves the rest", async () => {
    const prices = await loadPrices();
    const minute = fixedMonthly(prices, DEFAULTS);
    const half = fixedMonthly(prices, { ...DEFAULTS, sweepIntervalSeconds: 30 });
    for (const item of ['Sweeper invocations', 'Sweeper reads', 'Sweeper logs']) {
      expect(usdOf(half, item)).toBeCloseTo(2 * (usdOf(minute, item) ?? Number.NaN), 9);
    }
    expect(usdOf(half, 'Distributor table')).toBe(usdOf(minute, 'Distributor table'));
    expect(half.items.find((i) => i.item === 'Sweeper invocations')?.how).toBe('86,400 × ~100 ms');
  });
});

describe("README's total at rest", () => {
  it('is read from "What it costs at rest", and is the default bill to the cent', async () => {
    const bill = fixedMonthly(await loadPrices(), DEFAULTS);
    const readme = await readmeAtRestTotal();
    expect(readme).toBeDefined();
    expect(readme).toBeCloseTo(bill.total, 2);
  });
});
