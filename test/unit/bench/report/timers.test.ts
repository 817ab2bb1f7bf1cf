/** The long-lived aggregates: one row per deadline measured, named in words, and the headline's sentence. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { Results } from '../../../../bench/report/schema.ts';
import { longDeadlineText, openTimeSection } from '../../../../bench/report/timers.ts';

const results = JSON.parse(
  readFileSync(new URL('../../../../bench/results/latest.json', import.meta.url), 'utf8'),
) as Results;

describe('the long-lived aggregates section', () => {
  it('gives one row per deadline, shortest first, each named in words', () => {
    const rows = openTimeSection(results).filter((l) => /^\| (\d+ (min|h|days?)) \|/.test(l));
    expect(rows.map((l) => l.split(' | ')[0])).toEqual([
      '| 1 min',
      '| 1 h',
      '| 1 day',
      '| 7 days',
      '| 30 days',
    ]);
  });

  it('has no section, and the headline no sentence, when no deadline was measured', () => {
    const none = { ...results, timers: { ...results.timers, by_open_seconds: undefined } } as Results;
    expect(openTimeSection(none)).toEqual([]);
    expect(longDeadlineText(none)).toBe('');
  });

  it("compares the longest deadline's all-in cost with the 1-minute one's for the headline", () => {
    const longest = results.timers.by_open_seconds?.['2592000'];
    const text = longDeadlineText(results);
    expect(text).toContain('a deadline of 30 days');
    expect(text).toContain(`$${longest?.all_in_usd_per_million.toFixed(2)} per million all-in`);
    expect(text).toContain('than with a deadline of 1 min');
  });
});
