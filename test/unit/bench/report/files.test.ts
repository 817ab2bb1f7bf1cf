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
  /** The phrases `path` does not hold, its line breaks and runs of spaces read as one space. */
  const missingFrom = (path: string, phrases: readonly string[]) => {
    const text = readFileSync(new URL(`../../../../${path}`, import.meta.url), 'utf8').replace(/\s+/g, ' ');
    return phrases.filter((phrase) => !text.includes(phrase));
  };
  const usd = (n: number) => `$${n.toFixed(2)}`;
  const independent = r.arrival.independent;
  const together = r.arrival.together;
  const cost = (row: { cost_per_million_aggregates_usd: number }) => usd(row.cost_per_million_aggregates_usd);
  const drained = (phase: string) =>
    independent.other_batching_windows.find((b: { drain_phase?: string }) => b.drain_phase === phase);
  const stepFunctions = usd(r.cost.step_functions_standard.total_per_million);

  it("README's benchmark paragraph gives the headline cost and the Step Functions anchor", () => {
    expect(
      missingFrom('README.md', [
        `**${cost(independent)} per million aggregates**`,
        `against ${stepFunctions} on Step Functions Standard`,
      ]),
    ).toEqual([]);
  });

  it("deploying.md's last-full-run paragraph gives the defaults', the drained and the together costs", () => {
    expect(
      missingFrom('docs/deploying.md', [
        `${cost(independent)} per million aggregates at the defaults`,
        `and ${cost(drained('aligned'))} with the reply partitions drained`,
        `and ${cost(together)}; `,
        `against ${stepFunctions} on Step Functions Standard.`,
      ]),
    ).toEqual([]);
  });

  it("costs.md gives the run's costs, its own work against the floor, the 30-day cost and every batching row", () => {
    const batchingRows = (['independent', 'spread'] as const).flatMap((pattern) =>
      [r.arrival[pattern], ...r.arrival[pattern].other_batching_windows].map((row) =>
        row.drain_phase ? `| **${cost(row)}** |` : `| ${cost(row)} |`,
      ),
    );
    expect(
      missingFrom('docs/costs.md', [
        `**${cost(together)} per million aggregates**`,
        `**${cost(independent)}** when`,
        `**${cost(drained('aligned'))} to ${cost(drained('straddled'))}**`,
        `The last full run: ${usd(independent.own_work_per_million_aggregates_usd)} with replies independent ` +
          `(${cost(independent)} against ${usd(independent.reply_floor_per_million_aggregates_usd)}) ` +
          `and ${usd(together.own_work_per_million_aggregates_usd)} together`,
        `so it is ${stepFunctions} per million at every deadline`,
        `| ${usd(r.timers.by_open_seconds['2592000'].all_in_usd_per_million)} (+`,
        ...batchingRows,
      ]),
    ).toEqual([]);
  });
});
