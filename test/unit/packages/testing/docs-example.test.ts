import { readFileSync } from 'node:fs';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { simulate } from '../../../../packages/testing/src/index.ts';
import { kitExamples } from './doc-examples.ts';

/**
 * docs/definitions.md's kit examples run as written: every ```ts block importing `@fanin/testing`,
 * with the definitions its section shows before it, its types stripped, its imports bound to the
 * kit and vitest's expect, and every test it declares passes. A change to the kit's API, to the
 * engine or to a definition of the page that makes the page wrong fails here.
 */

const page = readFileSync(new URL('../../../../docs/definitions.md', import.meta.url), 'utf8');
const examples = kitExamples(page);

const AsyncFunction = Object.getPrototypeOf(async () => {}).constructor as new (
  ...args: string[]
) => (...values: unknown[]) => Promise<void>;

/** The tests one example declares (`it(name, fn)`), its TypeScript compiled to JavaScript first. */
async function declared(source: string): Promise<{ name: string; fn: () => Promise<void> }[]> {
  const tests: { name: string; fn: () => Promise<void> }[] = [];
  const { outputText } = ts.transpileModule(source, {
    compilerOptions: { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext },
  });
  await new AsyncFunction('simulate', 'expect', 'it', outputText)(
    simulate,
    expect,
    (name: string, fn: () => Promise<void>) => tests.push({ name, fn }),
  );
  return tests;
}

const runs = await Promise.all(examples.map(async (e) => ({ ...e, tests: await declared(e.source) })));

describe('docs/definitions.md, the kit on each example', () => {
  it('shows the kit on every strategy and feature example, each declaring tests', () => {
    expect(runs.map((r) => r.section)).toEqual([
      'Completion strategies (`completion.strategy`)',
      'Aggregation algorithms (`aggregation.algorithm`)',
      'Inactivity timeout',
      'Settling after the deadline',
      'Periodic snapshots',
      'Discard or release on timeout',
      'Completion predicate',
      'Any of several rules',
      'Failed replies',
      "A request's own parameters",
      'Testing a definition',
    ]);
    for (const r of runs) expect(r.tests.length, `${r.section} (line ${r.line})`).toBeGreaterThan(0);
    expect(runs.flatMap((r) => r.tests)).toHaveLength(18);
  });

  for (const { section, line, tests } of runs) {
    for (const { name, fn } of tests) it(`${section} (line ${line}) runs as written: ${name}`, fn);
  }
});
