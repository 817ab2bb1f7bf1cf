/** The scale section: one row per fan-out, and what it says of a sampled baseline. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { scaleSection } from '../../../../bench/report/scale.ts';
import type { Results } from '../../../../bench/report/schema.ts';

const results = JSON.parse(
  readFileSync(new URL('../../../../bench/results/latest.json', import.meta.url), 'utf8'),
) as Results;
const text = (r: Results) => scaleSection(r, 'scale.svg').join('\n');

describe('the scale section', () => {
  it('has one table row per fan-out, the sampled baseline marked', () => {
    const rows = scaleSection(results, 'scale.svg').filter((l) => /^\| [\d,]+ \|/.test(l));
    expect(rows.map((l) => l.split(' | ')[0])).toEqual(['| 10', '| 100', '| 1,000', '| 10,000']);
    expect(rows.filter((l) => l.includes(' * |'))).toHaveLength(1);
  });

  it('explains the sampling and its check when a point is sampled', () => {
    expect(text(results)).toContain('there the baseline is sampled at 200 reply positions');
    expect(text(results)).toContain('Checked at fan-out 1,000, where both are run: replayed 11.563');
  });

  it('says every point was replayed, and how the sampling compares, when none is sampled', () => {
    const replayed = {
      ...results,
      scale: results.scale.map((p) => ({ ...p, baseline: { ...p.baseline, method: 'replayed' } })),
    };
    expect(text(replayed)).toContain('Every baseline point here was replayed reply by reply');
    expect(text(replayed)).toContain('gives 11.53 write units per reply at fan-out 1,000 (100 positions)');
  });
});
