/**
 * Rendering the reports again (`npm run bench:render`): from the JSON in a folder, a full run's and a
 * quick run's files under their own names; the committed reports are what their committed JSON renders to.
 * And the docs that quote "the last full run" quote the committed one: a full run committed without
 * its figures carried into README.md, docs/deploying.md and docs/costs.md fails here.
 */
import { readFileSync } from 'node:fs';
import { copyFile, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { reportNames, rerender } from '../../../../bench/report/files.ts';

const committed = new URL('../../../../bench/results/', import.meta.url);
const dirs: string[] = [];
/** A fresh folder holding copies of the committed `names`. */
async function folderWith(...names: string[]): Promise<URL> {
  const dir = await mkdtemp(join(tmpdir(), 'fanin-render-'));
  dirs.push(dir);
  for (const name of names) await copyFile(new URL(name, committed), join(dir, name));
  return pathToFileURL(`${dir}/`);
}

afterEach(async () => {
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

describe('rendering the reports again', () => {
  it('reproduces the committed reports and charts byte for byte from the committed JSON', async () => {
    const dir = await folderWith('latest.json', 'quick.json');
    const written = await rerender(dir);
    expect(written).toEqual(['latest.md', 'scale.svg', 'quick.md', 'quick-scale.svg']);
    for (const name of written) {
      expect(await readFile(new URL(name, dir), 'utf8'), name).toBe(
        await readFile(new URL(name, committed), 'utf8'),
      );
    }
  });

  it('renders only the runs whose JSON is there, and nothing in a folder without any', async () => {
    const quick = await folderWith('quick.json');
    expect(await rerender(quick)).toEqual(['quick.md', 'quick-scale.svg']);
    expect((await readdir(quick)).sort()).toEqual(['quick-scale.svg', 'quick.json', 'quick.md']);
    expect(await rerender(await folderWith())).toEqual([]);
  });

  it('names a full run latest and a quick run quick', () => {
    expect(reportNames(false)).toEqual({ json: 'latest.json', markdown: 'latest.md', svg: 'scale.svg' });
    expect(reportNames(true)).toEqual({ json: 'quick.json', markdown: 'quick.md', svg: 'quick-scale.svg' });
  });
});

describe('the docs quote the committed full run', () => {
  const r = JSON.parse(readFileSync(new URL('latest.json', committed), 'utf8'));
  /** `path`'s text, its line breaks and runs of spaces read as one space. */
  const text = (path: string) =>
    readFileSync(new URL(`../../../../${path}`, import.meta.url), 'utf8').replace(/\s+/g, ' ');
  /** The phrases `path` does not hold. */
  const missingFrom = (path: string, phrases: readonly string[]) =>
    phrases.filter((phrase) => !text(path).includes(phrase));
  const usd = (n: number) => `$${n.toFixed(2)}`;
  /** A figure as the docs round it: at most `places` decimals, no trailing zeros. */
  const num = (n: number, places = 2) => String(Math.round(n * 10 ** places) / 10 ** places);
  /** A latency as the docs give it: ms below a second, one decimal below ten, whole seconds above. */
  const latency = (ms: number) =>
    ms < 1_000 ? `${ms} ms` : ms < 10_000 ? `${(ms / 1_000).toFixed(1)} s` : `${Math.round(ms / 1_000)} s`;
  type Row = (typeof r.arrival.independent.by_batching)[number];
  const cost = (row: { cost_per_million_aggregates_usd: number }) => usd(row.cost_per_million_aggregates_usd);
  const independent = r.arrival.independent;
  const together = r.arrival.together;
  const rows = (pattern: 'independent' | 'spread'): Row[] => r.arrival[pattern].by_batching;
  const drained = (phase: string) => rows('independent').find((b: Row) => b.drain_phase === phase);
  const tenSeconds = rows('independent').find((b: Row) => b.batching_window_seconds === 10 && !b.drain_phase);
  const stepFunctions = usd(r.cost.step_functions_standard.total_per_million);
  const allIn = (seconds: number) => r.timers.by_open_seconds[String(seconds)].all_in_usd_per_million;
  const thirtyDays = (allIn(2_592_000) - allIn(60)) / allIn(60);
  const scale = (fanOut: number) =>
    num(r.scale.find((p: { fan_out: number }) => p.fan_out === fanOut).fanin.write_units_per_reply, 1);

  it("README's benchmark paragraph gives the headline cost, the Step Functions anchor and the 30-day increase", () => {
    expect(
      missingFrom('README.md', [
        `**${cost(independent)} per million aggregates**`,
        `against ${stepFunctions} on Step Functions Standard`,
      ]),
    ).toEqual([]);
    expect(text('README.md')).toContain('a 30-day deadline costs within 0.2 % of a 1-minute one');
    expect(thirtyDays).toBeLessThan(0.002);
  });

  it("deploying.md's last-full-run paragraph gives its write units, latency, costs and scale figures", () => {
    expect(
      missingFrom('docs/deploying.md', [
        `with replies arriving independently, ${num(independent.write_units_per_reply['10'])} write units per reply at fan-out 10`,
        `completion ${latency(r.completion_latency_ms.p50)} p50 after the last reply`,
        `${cost(independent)} per million aggregates at the defaults`,
        `one per batch is ${usd(independent.reply_floor_per_million_aggregates_usd)}`,
        `with a 10 s window and batches of 1,000, ${cost(tenSeconds)} at ${latency(tenSeconds.completion_latency_ms.p50)} p50`,
        `and ${cost(drained('aligned'))} with the reply partitions drained`,
        `together, ${num(together.write_units_per_reply['10'])} write units per reply`,
        `and ${cost(together)}; `,
        `${scale(10)} write units per reply at fan-out 10 for small replies and ${scale(10_000)} at 10,000`,
        `against ${stepFunctions} on Step Functions Standard.`,
      ]),
    ).toEqual([]);
  });

  it("costs.md gives the run's costs, own work, open-time costs and anchors as the run measured them", () => {
    const paced = (b: Row | undefined) => usd(b?.cost_per_million_aggregates_usd_timers_paced ?? Number.NaN);
    const pacedDrained = independent.other_batching_windows.filter((b: Row) => b.drain_phase);
    expect(
      missingFrom('docs/costs.md', [
        `**${cost(together)} per million aggregates** when a responder answers an aggregate's sub-requests ` +
          `together (${num(together.write_units_per_reply['10'])} write units per reply)`,
        `**${cost(independent)}** when each reply arrives on its own at the defaults ` +
          `(${num(independent.write_units_per_reply['10'])} write units per reply)`,
        `**${cost(drained('aligned'))} to ${cost(drained('straddled'))}**`,
        `The last full run: ${usd(independent.own_work_per_million_aggregates_usd)} with replies independent ` +
          `(${cost(independent)} against ${usd(independent.reply_floor_per_million_aggregates_usd)}) ` +
          `and ${usd(together.own_work_per_million_aggregates_usd)} together ` +
          `(${cost(together)} against ${usd(together.reply_floor_per_million_aggregates_usd)})`,
        `| 30 days | 2,880 | $954.23 | 1 | ${usd(r.timers.by_open_seconds['2592000'].usd_per_million_aggregates)} | ` +
          `$980.89 (30.9×) | ${usd(allIn(2_592_000))} (+${(thirtyDays * 100).toFixed(2)} %) |`,
        `| 1 min | 1 | $5.12 | 1 | ${usd(r.timers.by_open_seconds['60'].usd_per_million_aggregates)} | $31.78 | ${usd(allIn(60))} |`,
        `so it is ${stepFunctions} per million at every deadline`,
        `rate (${r.arrival_setup.offered_replies_per_second} replies/s;`,
        `the drained rows come to ${pacedDrained.map(paced).join(' and ')}.`,
      ]),
    ).toEqual([]);
  });

  it("costs.md's batching table gives every setting the run measured, each figure as measured", () => {
    const line = (b: Row) => {
      const figures = [
        latency(b.completion_latency_ms.p50),
        num(b.reply_receives_per_reply),
        num(b.write_units_per_reply),
        b.drain_phase ? `**${cost(b)}**` : cost(b),
      ];
      return `| ${figures.join(' | ')} |`;
    };
    const table = (pattern: 'independent' | 'spread') => rows(pattern).map(line);
    expect(missingFrom('docs/costs.md', [...table('independent'), ...table('spread')])).toEqual([]);
  });
});
