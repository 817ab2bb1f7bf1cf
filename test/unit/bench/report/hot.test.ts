/** The hot-aggregate section: both layouts side by side, and a row per layout of the AWS model. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { hotSection } from '../../../../bench/report/hot.ts';
import type { Results } from '../../../../bench/report/schema.ts';

const results = JSON.parse(
  readFileSync(new URL('../../../../bench/results/latest.json', import.meta.url), 'utf8'),
) as Results;
const lines = hotSection(results);

describe('the hot-aggregate section', () => {
  it('gives each figure for both layouts, the busiest key share in bold', () => {
    const h = results.hot_aggregate;
    expect(lines).toContain(
      `| figure | writeShards ${h.measured.write_shards} | writeShards 8 | what it is |`,
    );
    const share = lines.find((l) => l.startsWith('| busiest key share of the write units |')) ?? '';
    const percent = (n: number) => `**${(n * 100).toFixed(1)} %**`;
    expect(share).toContain(`${percent(h.measured.busiest_key_share)} (${h.measured.busiest_key})`);
    expect(share).toContain(`${percent(h.sharded.busiest_key_share)} (${h.sharded.busiest_key})`);
  });

  it('lists the write units by key in key order, shard 0 first', () => {
    const row = lines.find((l) => l.startsWith('| write units by partition key |')) ?? '';
    const sharded = row.split(' | ')[2]?.split(' · ') ?? [];
    expect(sharded).toHaveLength(Object.keys(results.hot_aggregate.sharded.units_by_key).length);
    expect(sharded[0]).toBe(String(Math.round(results.hot_aggregate.sharded.units_by_key['shard 0'] ?? 0)));
  });

  it('orders the write and the read units by key alike: each shard, then its counter', () => {
    const units = { 'counter 1': 5, 'shard 1': 4, 'counter 0': 3, 'shard 0': 2, 'shard 10': 6 };
    const sharded = { ...results.hot_aggregate.sharded, units_by_key: units, read_units_by_key: units };
    const r = { ...results, hot_aggregate: { ...results.hot_aggregate, sharded } };
    const cell = (label: string) =>
      hotSection(r)
        .find((l) => l.startsWith(`| ${label} |`))
        ?.split(' | ')[2];
    expect(cell('write units by partition key')).toBe('2 · 3 · 4 · 5 · 6');
    expect(cell('read units by partition key')).toBe('2 · 3 · 4 · 5 · 6');
  });

  it('has one model row per layout, its bound in bold and the binding limit named', () => {
    const rows = lines.filter((l) => l.startsWith('| writeShards '));
    expect(rows).toHaveLength(results.hot_aggregate.model.length);
    const first = results.hot_aggregate.model[0];
    expect(rows[0]).toContain(`| **${Math.round(first?.bounds.bound ?? 0).toLocaleString('en-US')}** |`);
    expect(rows[0]).toContain(`| ${first?.bounds.binding_constraint} |`);
  });
});
