/**
 * The unit tests mirror the source: every module with logic under the source folders has its own
 * unit test at `test/unit/<same path>.test.ts`. A module without logic (types only, re-exports, a
 * constant table, an entry point that only wires and calls) is listed in
 * `scripts/test-layout.json` with the reason it needs no test of its own. `npm run lint` runs
 * this check: it fails on a module that has neither, on a listed module that no longer exists,
 * and on a listed module that has a test after all (the list would say something false).
 *
 *   npx tsx scripts/test-layout.ts
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
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
  const modules = SOURCE_ROOTS.flatMap(modulesUnder)
    .map((p) => relative('.', p))
    .sort();
  const exempt = JSON.parse(readFileSync(join(root, 'scripts/test-layout.json'), 'utf8')) as Record<
    string,
    string
  >;
  const findings = layoutFindings(modules, (path) => existsSync(join(root, path)), exempt);
  const problems = [
    ...findings.untested.map(
      (m) => `${m}: no unit test at ${mirroredTest(m)}, and not listed as without logic`,
    ),
    ...findings.listedButGone.map((m) => `${m}: listed in scripts/test-layout.json but no such module`),
    ...findings.listedButTested.map((m) => `${m}: listed as without logic, but ${mirroredTest(m)} exists`),
  ];
  if (problems.length > 0) {
    for (const problem of problems) console.error(problem);
    console.error(`test layout: ${problems.length} problem(s) (docs/testing.md, "Where a test goes")`);
    process.exit(1);
  }
  const tested = modules.length - Object.keys(exempt).length;
  console.log(
    `test layout: ${tested} of ${modules.length} modules have their mirrored unit test, ` +
      `${Object.keys(exempt).length} listed without logic`,
  );
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) main();
