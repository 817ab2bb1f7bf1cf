/**
 * The unit tests mirror the source: every module with logic under the source folders has its own
 * unit test at `test/unit/<same path>.test.ts`. A module without logic (types only, re-exports, a
 * constant table, an entry point that only wires and calls) is listed in `scripts/test-layout.json`
 * under `withoutLogic`, with the reason it needs no test of its own. Modules with logic still
 * waiting for their test are listed under `notYetTested`: a list that may only shrink. `npm run
 * lint` runs this check: it fails on a module that has neither a test nor an entry, on an entry
 * that names no module, and on an entry for a module that has its test (the list would say
 * something false, or a finished test would stay listed as missing).
 *
 *   npx tsx scripts/test-layout.ts
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The folders whose modules are the product, its tools and its simulation. */
const SOURCE_ROOTS = [
  'shared',
  'functions',
  'local',
  'infra',
  'sim',
  'bench',
  'packages/cdk/src',
  'packages/client/src',
  'packages/testing/src',
  'scripts',
];

const root = fileURLToPath(new URL('..', import.meta.url));

function modulesUnder(dir: string): string[] {
  const absolute = join(root, dir);
  if (!existsSync(absolute)) return [];
  return readdirSync(absolute).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(join(root, path)).isDirectory()) return modulesUnder(path);
    return name.endsWith('.ts') && !name.endsWith('.d.ts') && !name.endsWith('.test.ts') ? [path] : [];
  });
}

/** The unit test a module's logic is pinned by. */
export function mirroredTest(module: string): string {
  return join('test/unit', module.replace(/\.ts$/, '.test.ts'));
}

export interface LayoutFindings {
  readonly untested: readonly string[];
  readonly listedButGone: readonly string[];
  readonly listedButTested: readonly string[];
}

/** What is wrong with the layout, given the modules, the tests that exist and the exemptions. */
export function layoutFindings(
  modules: readonly string[],
  testExists: (path: string) => boolean,
  exempt: Readonly<Record<string, string>>,
): LayoutFindings {
  const known = new Set(modules);
  return {
    untested: modules.filter((m) => !testExists(mirroredTest(m)) && exempt[m] === undefined),
    listedButGone: Object.keys(exempt).filter((m) => !known.has(m)),
    listedButTested: Object.keys(exempt).filter((m) => known.has(m) && testExists(mirroredTest(m))),
  };
}

function main(): void {
  const modules = SOURCE_ROOTS.flatMap(modulesUnder).sort();
  const lists = JSON.parse(readFileSync(join(root, 'scripts/test-layout.json'), 'utf8')) as {
    withoutLogic: Record<string, string>;
    notYetTested: Record<string, string>;
  };
  const exempt = { ...lists.withoutLogic, ...lists.notYetTested };
  const findings = layoutFindings(modules, (path) => existsSync(join(root, path)), exempt);
  const problems = [
    ...findings.untested.map(
      (m) => `${m}: no unit test at ${mirroredTest(m)}, and not listed in scripts/test-layout.json`,
    ),
    ...findings.listedButGone.map((m) => `${m}: listed in scripts/test-layout.json but no such module`),
    ...findings.listedButTested.map(
      (m) => `${m}: listed in scripts/test-layout.json, but ${mirroredTest(m)} exists`,
    ),
  ];
  if (problems.length > 0) {
    for (const problem of problems) console.error(problem);
    console.error(`test layout: ${problems.length} problem(s) (docs/testing.md, "Where a test goes")`);
    process.exit(1);
  }
  const without = Object.keys(lists.withoutLogic).length;
  const waiting = Object.keys(lists.notYetTested).length;
  console.log(
    `test layout: ${modules.length - without - waiting} of ${modules.length} modules have their mirrored unit test; ` +
      `${without} have no logic; ${waiting} with logic are not yet tested`,
  );
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) main();
