/**
 * The arrival section: which reply batching settings count as drained, aligned or straddled, how a
 * setting is named, and the section rendered from a run's results.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  alignedDrain,
  arrivalSection,
  drained,
  settingText,
  straddled,
} from '../../../../bench/report/arrival.ts';
import type { Results } from '../../../../bench/report/schema.ts';

const eventSource = { drain_interval_seconds: 0, batching_window_seconds: 10, batch_size: 1_000 };
const aligned = { drain_interval_seconds: 60, batching_window_seconds: 0, batch_size: 1_000 };
const cut = { ...aligned, drain_phase: 'straddled' as const };

describe('reply batching settings in the arrival section', () => {
  it('tells a drained setting from an event source, and a straddled drain from an aligned one', () => {
    expect([drained(eventSource), drained(aligned), drained(cut)]).toEqual([false, true, true]);
    expect([straddled(eventSource), straddled(aligned), straddled(cut)]).toEqual([false, false, true]);
    expect([alignedDrain(eventSource), alignedDrain(aligned), alignedDrain(cut)]).toEqual([
      false,
      true,
      false,
    ]);
  });

  it('names a setting by its window, or by its drain interval', () => {
    const row = (b: typeof aligned) => ({ ...b }) as unknown as Parameters<typeof settingText>[0];
    expect(settingText(row(eventSource))).toBe('a 10 s window and batches of 1,000');
    expect(settingText(row(aligned))).toBe('replies drained every 60 s in batches of 1,000');
  });
});

describe('the arrival section of a full run', () => {
  const results = JSON.parse(
    readFileSync(new URL('../../../../bench/results/latest.json', import.meta.url), 'utf8'),
  ) as Results;
  const text = arrivalSection(results).join('\n');

  it('has the patterns and the batching window headings', () => {
    expect(text).toContain('## Arrival patterns');
    expect(text).toContain('### Batching window');
  });

  it("gives every pattern's end-to-end cost and every setting's row", () => {
    for (const p of ['together', 'independent', 'spread'] as const) {
      const dollars = results.arrival[p].cost_per_million_aggregates_usd.toFixed(2);
      expect(text).toContain(`$${dollars}`);
    }
    const settings = Object.values(results.arrival).reduce((n, a) => n + a.by_batching.length, 0);
    const rows = text.split('\n').filter((l) => /^\| `(together|independent|spread)` \|/.test(l));
    expect(rows).toHaveLength(settings);
  });
});
