/**
 * `npm run build`: the three npm packages of this repository, each into its own `dist/` (gitignored).
 *
 * - `packages/cdk` (`@fanin/cdk`): the construct library as one ES module (`dist/index.js`,
 *   `aws-cdk-lib`, `constructs` and the other packages left as imports), its declarations
 *   (`dist/types/`), and every Lambda handler pre-bundled (`dist/handlers/<name>/handler.mjs` with
 *   its source map), so `Fanin` in another CDK app needs neither esbuild nor fanin's lockfile.
 * - `packages/client` (`@fanin/client`): the client library (`dist/index.js`, `dist/types/`) and
 *   the `fanin` CLI (`dist/cli.js`, run by `bin/fanin.js`: plain JavaScript, no TypeScript loader).
 * - `packages/testing` (`@fanin/testing`): the test kit (`dist/index.js`, `dist/types/`): the
 *   handlers and use cases over the simulation's models, so it depends on Powertools like a handler.
 *
 * It then checks what it built: every package a built module imports is declared in that
 * package.json as a compatible range from the version this repository pins (a missing one would fail only at a user's), and
 * prints each file's size. `--quiet` prints only the summary line.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Metafile } from 'esbuild';
import { HandlerName } from '../infra/fanin-function.ts';
import { HANDLER_BUNDLE, handlerBuildOptions, prebuiltHandlerDir } from '../infra/handler-code.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const CDK = path.join(ROOT, 'packages/cdk');
const CLIENT = path.join(ROOT, 'packages/client');
const TESTING = path.join(ROOT, 'packages/testing');
const quiet = process.argv.includes('--quiet');

interface PackageJson {
  name: string;
  version: string;
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
}

const readJson = (file: string): PackageJson => JSON.parse(readFileSync(file, 'utf8')) as PackageJson;
const log = (line: string): void => {
  if (!quiet) console.log(line);
};

/** The library's own modules as one ES module; every package stays an import (declared, checked below). */
async function library(entry: string, outfile: string): Promise<Metafile> {
  const result = await build({
    entryPoints: [entry],
    outfile,
    bundle: true,
    packages: 'external',
    platform: 'node',
    format: 'esm',
    target: 'node20',
    sourcemap: true,
    metafile: true,
    logLevel: 'warning',
  });
  return result.metafile;
}

/** Declarations of a package's entry point, with `.js` specifiers (what every moduleResolution reads). */
function declarations(pkg: string): void {
  const tsc = spawnSync(
    process.execPath,
    [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', path.join(pkg, 'tsconfig.json')],
    { cwd: ROOT, stdio: 'inherit' },
  );
  if (tsc.status !== 0) throw new Error(`tsc -p ${path.relative(ROOT, pkg)}: the errors above`);
  for (const file of walk(path.join(pkg, 'dist/types'))) {
    if (!file.endsWith('.d.ts')) continue;
    const text = readFileSync(file, 'utf8');
    const rewritten = text.replace(/((?:from|import)\s*\(?\s*['"])(\.{1,2}\/[^'"]+)\.ts(['"])/g, '$1$2.js$3');
    if (rewritten !== text) writeFileSync(file, rewritten);
  }
}

function walk(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? walk(path.join(dir, entry.name)) : [path.join(dir, entry.name)],
  );
}

/** The package a bare import specifier names (`@scope/name/sub` → `@scope/name`), or undefined for node: built-ins. */
function packageOf(specifier: string): string | undefined {
  if (specifier.startsWith('node:') || specifier.startsWith('.') || specifier.startsWith('/'))
    return undefined;
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

/**
 * Every package the built modules import is a dependency or peer dependency of `pkg`, declared as
 * the compatible range `^<version>` of the version the repository's package.json pins (the lowest
 * it accepts is the one the tests ran with; the lockfile pins that): a library pinning exactly
 * would give a user's app second copies of every package it also uses. A declared package
 * nothing imports is a warning.
 */
function checkDependencies(pkg: string, metafiles: readonly Metafile[]): void {
  const manifest = readJson(path.join(pkg, 'package.json'));
  const root = readJson(path.join(ROOT, 'package.json'));
  const pinned = { ...root.devDependencies, ...root.dependencies };
  const declared = { ...manifest.dependencies, ...manifest.peerDependencies };
  const imported = new Set<string>();
  for (const metafile of metafiles) {
    for (const output of Object.values(metafile.outputs)) {
      for (const imp of output.imports) {
        const name = imp.external ? packageOf(imp.path) : undefined;
        if (name) imported.add(name);
      }
    }
  }
  const problems: string[] = [];
  for (const name of imported) {
    if (!(name in declared)) problems.push(`imports ${name}, which its package.json does not declare`);
  }
  for (const [name, version] of Object.entries(manifest.dependencies ?? {})) {
    // Harmless for users (one package more to install), so a warning, not a failure.
    if (!imported.has(name))
      console.warn(`warning: ${manifest.name} declares ${name}, which nothing imports`);
    if (version !== `^${pinned[name]}`)
      problems.push(`declares ${name}@${version}, not ^${pinned[name]} (the version the repository pins)`);
  }
  for (const [name, range] of Object.entries(manifest.peerDependencies ?? {})) {
    // The version fanin is built and tested with is the lowest it accepts.
    if (range !== `^${pinned[name]}`) problems.push(`peer ${name}@${range} is not ^${pinned[name]}`);
  }
  if (problems.length > 0) {
    throw new Error(`${manifest.name}: ${problems.join('; ')}`);
  }
}

const kib = (bytes: number): string => `${(bytes / 1024).toFixed(0).padStart(6)} KiB`;

function report(pkg: string): number {
  let total = 0;
  for (const file of walk(path.join(pkg, 'dist')).sort()) {
    const size = statSync(file).size;
    total += size;
    if (!file.endsWith('.d.ts')) log(`  ${kib(size)}  ${path.relative(ROOT, file)}`);
  }
  return total;
}

async function main(): Promise<void> {
  const versions = [CDK, CLIENT, TESTING].map((pkg) => readJson(path.join(pkg, 'package.json')));
  // One version for the repository and its packages: `fanin --version` reports the repository's.
  const { version } = readJson(path.join(ROOT, 'package.json'));
  for (const v of versions) {
    if (v.version !== version) throw new Error(`${v.name} is ${v.version} but the repository is ${version}`);
  }
  for (const pkg of [CDK, CLIENT, TESTING]) {
    rmSync(path.join(pkg, 'dist'), { recursive: true, force: true });
    // npm pack takes files from the package's own folder (both copies are gitignored).
    for (const file of ['LICENSE', 'CHANGELOG.md']) copyFileSync(path.join(ROOT, file), path.join(pkg, file));
  }

  // The construct library and its pre-bundled handlers.
  const handlers = Object.values(HandlerName);
  await Promise.all(
    handlers.map((name) => {
      const outDir = prebuiltHandlerDir(CDK, name);
      mkdirSync(outDir, { recursive: true });
      return build(
        handlerBuildOptions(path.join(ROOT, 'functions', `${name}.ts`), path.join(outDir, HANDLER_BUNDLE)),
      );
    }),
  );
  const cdkLibrary = await library(path.join(CDK, 'src/index.ts'), path.join(CDK, 'dist/index.js'));
  checkDependencies(CDK, [cdkLibrary]);
  declarations(CDK);

  // The client library and the CLI.
  const clientLibrary = await library(path.join(CLIENT, 'src/index.ts'), path.join(CLIENT, 'dist/index.js'));
  const cli = await library(path.join(ROOT, 'local/cli/main.ts'), path.join(CLIENT, 'dist/cli.js'));
  checkDependencies(CLIENT, [clientLibrary, cli]);
  declarations(CLIENT);

  // The test kit (the handlers over the simulation's models).
  const testingLibrary = await library(
    path.join(TESTING, 'src/index.ts'),
    path.join(TESTING, 'dist/index.js'),
  );
  checkDependencies(TESTING, [testingLibrary]);
  declarations(TESTING);

  log(`${versions[0]?.name}@${versions[0]?.version}:`);
  const cdkBytes = report(CDK);
  log(`${versions[1]?.name}@${versions[1]?.version}:`);
  const clientBytes = report(CLIENT);
  log(`${versions[2]?.name}@${versions[2]?.version}:`);
  const testingBytes = report(TESTING);
  console.log(
    `built ${versions.map((v) => `${v.name}@${v.version}`).join(' and ')} (${handlers.length} handlers; dist ${kib(cdkBytes).trim()}, ${kib(clientBytes).trim()} and ${kib(testingBytes).trim()})`,
  );
}

await main().catch((error: unknown) => {
  console.error(`build failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
