/**
 * Rendering the reports again (`npm run bench:render`): from the JSON in a folder, a full run's and a
 * quick run's files under their own names; the committed reports are what their committed JSON renders to.
 */
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
