/** The scale chart: drawn from a run's scale curve, its sampled baseline points told apart. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { Results } from '../../../../bench/report/schema.ts';
import { renderScaleSvg } from '../../../../bench/report/svg.ts';

const file = (name: string) =>
  readFileSync(new URL(`../../../../bench/results/${name}`, import.meta.url), 'utf8');

describe('the scale chart', () => {
  const results = JSON.parse(file('latest.json')) as Results;

  it('draws the recorded chart of the last full run', () => {
    expect(renderScaleSvg(results)).toBe(file('scale.svg'));
  });

  it('says which points are sampled only when a baseline point was not replayed', () => {
    const replayed = {
      ...results,
      scale: results.scale.map((p) => ({ ...p, baseline: { ...p.baseline, method: 'replayed' } })),
    };
    expect(renderScaleSvg(results)).toContain('hollow: sampled, not replayed');
    expect(renderScaleSvg(replayed)).not.toContain('hollow: sampled');
    const hollow = (svg: string) => (svg.match(/<circle[^>]*fill="white"/g) ?? []).length;
    expect(hollow(renderScaleSvg(results))).toBe(1);
    expect(hollow(renderScaleSvg(replayed))).toBe(0);
  });
});
