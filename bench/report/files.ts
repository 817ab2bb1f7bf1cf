import { readFile, writeFile } from 'node:fs/promises';
import { renderMarkdown, renderScaleSvg } from './markdown.ts';
import type { Results } from './schema.ts';

/** A run's files: `latest.{json,md}` and `scale.svg`, or `quick.{json,md}` and `quick-scale.svg`. */
export const reportNames = (quick: boolean) =>
  quick
    ? { json: 'quick.json', markdown: 'quick.md', svg: 'quick-scale.svg' }
    : { json: 'latest.json', markdown: 'latest.md', svg: 'scale.svg' };

/** Writes a run's markdown report and scale chart into `dir`, beside its JSON; returns their names. */
export async function writeReport(results: Results, dir: URL): Promise<string[]> {
  const names = reportNames(results.quick);
  await writeFile(new URL(names.svg, dir), renderScaleSvg(results));
  await writeFile(new URL(names.markdown, dir), renderMarkdown(results, names.svg));
  return [names.markdown, names.svg];
}

/**
 * Renders the reports of the runs recorded in `dir` (`npm run bench:render`) again from their JSON,
 * measuring nothing: a full run's, a quick run's, whichever are there. Returns the files written.
 */
export async function rerender(dir: URL): Promise<string[]> {
  const written: string[] = [];
  for (const quick of [false, true]) {
    const text = await readFile(new URL(reportNames(quick).json, dir), 'utf8').catch(() => undefined);
    if (text !== undefined) written.push(...(await writeReport(JSON.parse(text) as Results, dir)));
  }
  return written;
}
