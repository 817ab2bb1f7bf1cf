/**
 * Mutation check of the guarantees (docs/guarantees.md): applies each one-line mutant listed in
 * scripts/mutants.json to its file, runs the test that should kill it, restores the file, and
 * reports killed / survived. Exits 1 when any mutant survives or no longer applies.
 *
 * Usage: npm run mutants [-- <name filter>]
 *
 * Entries: { "name", "file", "search", "replace", "test" } where `search` must occur exactly once
 * in `file` and `test` is a vitest file path, optionally followed by ` -t <test name filter>`.
 * The file is restored after every mutant, also when the run fails or is interrupted.
 */
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';

interface Mutant {
  readonly name: string;
  readonly file: string;
  readonly search: string;
  readonly replace: string;
  readonly test: string;
}

type Verdict = 'killed' | 'survived' | 'not applicable';

const root = process.cwd();
const list = JSON.parse(readFileSync(resolve(root, 'scripts/mutants.json'), 'utf8')) as Mutant[];
const filter = process.argv[2];
const mutants = filter ? list.filter((m) => m.name.includes(filter)) : list;

/** The file currently mutated and its original text, restored on exit whatever happens. */
let pending: { path: string; original: string } | undefined;
function restore(): void {
  if (pending) {
    writeFileSync(pending.path, pending.original);
    pending = undefined;
  }
}
let child: ReturnType<typeof spawn> | undefined;
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.on(signal, () => {
    child?.kill('SIGTERM');
    restore();
    process.exit(130);
  });
}
process.on('exit', restore);

/** The vitest arguments of an entry's `test`: the file, then ` -t <filter>` if given. */
function testArgs(test: string): string[] {
  const [file, ...rest] = test.split(/\s+-t\s+/);
  const args = ['vitest', 'run', (file ?? '').trim()];
  if (rest.length > 0) args.push('-t', rest.join(' -t ').trim());
  return args;
}

function run(args: string[]): Promise<{ code: number; output: string }> {
  return new Promise((done) => {
    let output = '';
    child = spawn('npx', args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.on('close', (code) => {
      child = undefined;
      done({ code: code ?? 1, output });
    });
  });
}

async function check(mutant: Mutant): Promise<Verdict> {
  const path = resolve(root, mutant.file);
  const original = readFileSync(path, 'utf8');
  const occurrences = original.split(mutant.search).length - 1;
  if (occurrences !== 1) {
    console.log(`  "${mutant.search}" occurs ${occurrences} times in ${mutant.file} (must be once)`);
    return 'not applicable';
  }
  pending = { path, original };
  try {
    writeFileSync(
      path,
      original.replace(mutant.search, () => mutant.replace),
    );
    const { code, output } = await run(testArgs(mutant.test));
    // A test file that finds no test (a stale -t filter) exits 1 too: that is not a kill. A
    // filter that skips every test of the file (vitest exits 0) is not a survival either.
    if (/No test files found|No test found/.test(output) || ranNothing(output)) {
      console.log(`  the test "${mutant.test}" matched nothing`);
      return 'not applicable';
    }
    return code === 0 ? 'survived' : 'killed';
  } finally {
    restore();
  }
}

/** True when vitest's summary counts only skipped tests: the `-t` filter matched none. */
function ranNothing(output: string): boolean {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: vitest colours its summary
  const plain = output.replace(/\u001b\[[0-9;]*m/g, '');
  const summary = plain.split('\n').find((line) => /^\s*Tests\s/.test(line));
  return summary !== undefined && /skipped/.test(summary) && !/passed|failed/.test(summary);
}

const results: { name: string; verdict: Verdict }[] = [];
for (const mutant of mutants) {
  console.log(`mutant: ${mutant.name}\n  ${mutant.file}: ${mutant.test}`);
  const verdict = await check(mutant);
  console.log(`  -> ${verdict}`);
  results.push({ name: mutant.name, verdict });
}
const killed = results.filter((r) => r.verdict === 'killed').length;
console.log(`\n${killed} of ${results.length} mutants killed`);
for (const r of results.filter((r) => r.verdict !== 'killed')) console.log(`  ${r.verdict}: ${r.name}`);
process.exitCode = killed === results.length ? 0 : 1;
