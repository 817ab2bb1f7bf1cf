import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

/**
 * How many seeds the simulation takes to find each mutant of scripts/sim-mutants.json (the format
 * of scripts/mutants.json: name, file, search, replace): applies one mutant, runs
 * `sim/run.ts --find` from seed 1 with a seed budget, restores the file at once (also when
 * interrupted), and reports seeds-to-find per mutant. A mutant not found within the budget
 * survived. It edits source files in place while it runs: run it only when nobody else is
 * testing those files.
 *
 *   npx tsx sim/find-mutants.ts [--seeds 300] [--only <part of a name>] [--file scripts/sim-mutants.json]
 *                               [--baseline 98,170]   the seeds known to fail unmutated (no baseline run)
 */
interface Mutant {
  readonly name: string;
  readonly file: string;
  readonly search: string;
  readonly replace: string;
  /** Seeds to try before calling it survived. @default --seeds */
  readonly seeds?: number;
  /** Extra arguments for sim/run.ts, e.g. `--big` for the mutants only huge aggregates reach. */
  readonly args?: readonly string[];
}

const { values } = parseArgs({
  options: {
    seeds: { type: 'string', default: '300' },
    only: { type: 'string' },
    file: { type: 'string', default: 'scripts/sim-mutants.json' },
    baseline: { type: 'string' },
  },
});

const mutants = (JSON.parse(readFileSync(values.file ?? '', 'utf8')) as Mutant[]).filter(
  (m) => !m.name.startsWith('TODO') && (values.only === undefined || m.name.includes(values.only)),
);
let restore: (() => void) | undefined;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    restore?.();
    process.exit(130);
  });
}

/** Runs sim/run.ts --find over the budget; the last line of its output is its JSON summary. */
function simulate(budget: string, extra: readonly string[]) {
  return spawnSync(
    'npx',
    ['tsx', 'sim/run.ts', '--quiet', '--json', '--start', '1', '--seeds', budget, ...extra],
    {
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    },
  );
}

// The seeds that fail without any mutant are left out of every mutant's search: a mutant is
// found only by a seed the unmutated code passes.
const baselineRun = values.baseline === undefined ? simulate(String(values.seeds), []) : undefined;
const baseline =
  values.baseline !== undefined
    ? values.baseline
        .split(',')
        .filter((s) => s !== '')
        .map(Number)
    : ((
        JSON.parse(String(baselineRun?.stdout).trim().split('\n').at(-1) ?? '{}') as {
          failures?: number[];
        }
      ).failures ?? []);
console.log(
  `baseline: ${baseline.length} seed(s) of ${values.seeds} fail unmutated${baseline.length ? ` (${baseline.join(', ')}), left out` : ''}`,
);
// Its report (seeds per second, interleavings, faults), without the JSON line.
if (baselineRun) console.log(String(baselineRun.stdout).trim().split('\n').slice(1, -1).join('\n'));
const rows: string[] = [];
/** One mutant's line, printed as soon as it is known (a long run shows its progress). */
const row = (text: string) => {
  rows.push(text);
  console.log(text);
};
let survived = 0;
for (const mutant of mutants) {
  const original = readFileSync(mutant.file, 'utf8');
  const count = original.split(mutant.search).length - 1;
  if (count !== 1) {
    row(`not applicable  ${mutant.name}: the search text occurs ${count} times in ${mutant.file}`);
    continue;
  }
  restore = () => writeFileSync(mutant.file, original);
  writeFileSync(mutant.file, original.replace(mutant.search, mutant.replace));
  const budget = String(mutant.seeds ?? Number(values.seeds));
  const began = Date.now();
  let run: ReturnType<typeof spawnSync>;
  try {
    run = simulate(budget, [
      '--find',
      ...(baseline.length > 0 ? ['--skip', baseline.join(',')] : []),
      ...(mutant.args ?? []),
    ]);
  } finally {
    restore();
    restore = undefined;
  }
  const seconds = ((Date.now() - began) / 1000).toFixed(0);
  const last = String(run.stdout).trim().split('\n').at(-1) ?? '';
  let summary: { seeds: number; found: number | null } | undefined;
  try {
    summary = JSON.parse(last) as { seeds: number; found: number | null };
  } catch {
    summary = undefined;
  }
  if (summary === undefined) {
    row(`error           ${mutant.name}: ${String(run.stderr).slice(-400)}`);
  } else if (summary.found === null) {
    survived += 1;
    row(`SURVIVED        ${mutant.name}: no failure in ${summary.seeds} seeds (${seconds} s)`);
  } else {
    const broken = /\[([a-z-]+)\]/.exec(String(run.stdout))?.[1] ?? '?';
    row(
      `found after ${String(summary.seeds).padStart(4)}  ${mutant.name}: seed ${summary.found}, invariant ${broken} (${seconds} s)`,
    );
  }
}
console.log(`${rows.length} mutant(s), ${survived} survived`);
process.exitCode = survived > 0 ? 1 : 0;
