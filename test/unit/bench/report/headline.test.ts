/** The report's title and provenance, and the headline table: each contract figure with what it is. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { headlineSection, introSection } from '../../../../bench/report/headline.ts';
import type { BatchingComparison, Results } from '../../../../bench/report/schema.ts';

const results = JSON.parse(
  readFileSync(new URL('../../../../bench/results/latest.json', import.meta.url), 'utf8'),
) as Results;
const text = (r: Results) => headlineSection(r).join('\n');
/** The headline table's row for `figure`: its value cell and its explanation. */
const rowOf = (r: Results, figure: string) => {
  const line = headlineSection(r).find((l) => l.startsWith(`| ${figure} |`)) ?? '';
  const [, value, what] = line.split(' | ');
  return { value, what };
};
const base = results.arrival.independent.by_batching[0] as BatchingComparison;
const setting = (over: Partial<BatchingComparison>): BatchingComparison => ({ ...base, ...over });
/** The results with the headline pattern's batching settings replaced. */
const withSettings = (rows: BatchingComparison[]): Results => ({
  ...results,
  headline_pattern: 'independent',
  arrival: { ...results.arrival, independent: { ...results.arrival.independent, by_batching: rows } },
});

describe("the report's title and provenance", () => {
  it('names the run, and gives the commit shortened to twelve characters', () => {
    const r = { ...results, quick: true, commit: '0123456789abcdef0123' };
    const lines = introSection(r);
    expect(lines[0]).toBe('# fanin benchmark — quick run');
    expect(lines[2]).toContain('commit `0123456789ab` ·');
    expect(introSection({ ...results, quick: false })[0]).toBe('# fanin benchmark — full run');
  });

  it('says where the endpoint came from when no emulator was started', () => {
    const r = { ...results, machine: { ...results.machine, emulators: [] } };
    expect(introSection(r)[2]).toContain('emulators: none (endpoint from the environment) ·');
  });
});

describe('the headline figures', () => {
  it("compares Step Functions' bill with fanin's as a ratio with one decimal", () => {
    const r: Results = {
      ...results,
      cost_per_million_aggregates_usd: 20,
      cost: {
        ...results.cost,
        step_functions_standard: { ...results.cost.step_functions_standard, total_per_million: 250 },
      },
    };
    expect(rowOf(r, 'cost per million aggregates').value).toBe('$20.00');
    expect(text(r)).toContain('Step Functions Standard with callback tokens: $250.00 (12.5×).');
  });

  it('gives the paced timer firing beside the batched one only when it was measured', () => {
    const paced = { ...results, cost: { ...results.cost, fanin_total_per_million_timers_paced: 1234.5 } };
    expect(text(paced)).toContain('(with the firing of requests paced one at a time instead: $1,234.50)');
    // Results of a run that measured no paced firing have no such field.
    const none = {
      ...results,
      cost: { ...results.cost, fanin_total_per_million_timers_paced: undefined },
    } as unknown as Results;
    expect(text(none)).toContain("the deadline timer's firing included; details below.");
  });

  it("names the cheapest batching setting when one is cheaper than the topology's", () => {
    const r = withSettings([
      setting({ cost_per_million_aggregates_usd: 30 }),
      setting({ batching_window_seconds: 2, batch_size: 100, cost_per_million_aggregates_usd: 25 }),
      setting({
        batching_window_seconds: 10,
        batch_size: 1000,
        cost_per_million_aggregates_usd: 20,
        completion_latency_ms: { p50: 12_340, p99: 20_000, samples: 80 },
      }),
    ]);
    expect(text(r)).toContain(
      'The cheapest setting measured with replies independent: a 10 s window and batches of 1,000, ' +
        '$20.00 (latency p50 12.3 s; see "Batching window").',
    );
  });

  it("says nothing of other settings when none is cheaper than the topology's", () => {
    const r = withSettings([
      setting({ cost_per_million_aggregates_usd: 30 }),
      setting({ batching_window_seconds: 2, cost_per_million_aggregates_usd: 31 }),
    ]);
    expect(text(r)).not.toContain('The cheapest setting');
    expect(text(withSettings([base]))).not.toContain('The cheapest setting');
  });

  it('gives a drain in the middle of the sending beside the cheapest drain, not as a setting of its own', () => {
    const drain = { drain_interval_seconds: 60, batch_size: 1000 };
    const r = withSettings([
      setting({ cost_per_million_aggregates_usd: 30 }),
      setting({
        ...drain,
        drain_phase: 'aligned',
        cost_per_million_aggregates_usd: 15,
        reply_receives_per_reply: 0.1,
        completion_latency_ms: { p50: 35_000, p99: 46_000, samples: 80 },
      }),
      setting({
        ...drain,
        drain_phase: 'straddled',
        cost_per_million_aggregates_usd: 10,
        aggregates_split_across_drains: 30,
        reply_receives_per_reply: 0.125,
        completion_latency_ms: { p50: 52_000, p99: 61_000, samples: 80 },
      }),
    ]);
    // The straddled row is cheaper still, but it is the aligned drain timed otherwise.
    expect(text(r)).toContain(
      'replies drained every 60 s in batches of 1,000, $15.00 (latency p50 35 s, its replies sent just ' +
        'after a drain), $10.00 when a drain comes in the middle of the sending (30 aggregates split ' +
        'across drains, 8 messages per receive against 10, latency p50 52 s; see "Batching window").',
    );
  });

  it('puts the latency down to the reply batching window only when there is one', () => {
    const latency = (seconds: number) =>
      rowOf(
        { ...results, arrival_setup: { ...results.arrival_setup, default_batching_window_seconds: seconds } },
        'completion latency p50 / p99',
      ).what;
    expect(latency(2)).toContain('It is mostly the reply batching window (2 s) running out: see');
    expect(latency(0)).toContain('No reply batching window by default: see');
  });

  it('gives the latency percentiles in whole milliseconds over the aggregates sampled', () => {
    const latency = { ...results.completion_latency_ms, p50: 258.6, p99: 1465.2, samples: 42 };
    const r = { ...results, completion_latency_ms: latency };
    const row = rowOf(r, 'completion latency p50 / p99');
    expect(row.value).toBe('259 / 1,465 ms');
    expect(row.what).toContain('over 42 aggregates.');
  });

  it("reports the fraction of the store's capacity only when the capacity held between the windows", () => {
    const fraction = (value: number | null, spread: number) =>
      rowOf(
        {
          ...results,
          fraction_of_store_capacity: value,
          store_capacity: { ...results.store_capacity, spread },
        } as Results,
        'fraction of store capacity',
      ).value;
    expect(fraction(0.12345, 0.05)).toBe('0.123');
    expect(fraction(null, 0.3)).toBe('not reported (capacity moved 30 % between the windows)');
  });

  it('gives the scale curve up to its largest fan-out, beside the baseline by fan-out', () => {
    const r = {
      ...results,
      write_units_per_reply: { '10': 0.7, '1000': 0.166 },
      baseline_ratio: { '10': 1.714, '1000': 67.5 },
      scale: [{ fan_out: 10 }, { fan_out: 1000 }] as Results['scale'],
    };
    const row = rowOf(r, 'scale curve, write units per reply');
    expect(row.value).toBe('0.7 @10, 0.17 @1000');
    expect(row.what).toContain('fan-out 10 to 1,000, beside the naive baseline (1.71× @10, 67.5× @1000;');
  });
});
