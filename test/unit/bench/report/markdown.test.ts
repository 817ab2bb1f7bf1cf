/**
 * The report rendered from a recorded run: the sections of the last full run's report
 * (bench/results/latest.md) come again from its JSON.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { renderMarkdown } from '../../../../bench/report/markdown.ts';

const file = (name: string) =>
  readFileSync(new URL(`../../../../bench/results/${name}`, import.meta.url), 'utf8');
const headings = (md: string) => md.split('\n').filter((l) => l.startsWith('#'));

describe('the markdown report of the last full run', () => {
  const results = JSON.parse(file('latest.json'));

  it('has every section the recorded report has, in order', () => {
    expect(headings(renderMarkdown(results, 'scale.svg'))).toEqual(headings(file('latest.md')));
  });

  it('gives the headline cost per million aggregates', () => {
    const dollars = results.cost_per_million_aggregates_usd.toFixed(2);
    expect(renderMarkdown(results, 'scale.svg')).toContain(`| cost per million aggregates | $${dollars} |`);
  });
});
