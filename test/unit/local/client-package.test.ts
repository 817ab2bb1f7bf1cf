import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../../support/runtime.ts';

/**
 * What `@fanin/client` brings into a producer: the packages its two entry points (the library,
 * packages/client/src/index.ts, and the CLI, local/cli/main.ts) import, found as `npm run build`
 * finds them (esbuild, every package external), and the ranges it declares for them. The packed
 * package installed in a fresh project is test/integration/tooling/packages.test.ts.
 */

const readJson = (file: string) =>
  JSON.parse(readFileSync(join(ROOT, file), 'utf8')) as {
    dependencies?: Record<string, string>;
    devDependencies?: Record<string, string>;
  };

/** The packages an entry point's bundle imports, by name (node: built-ins left out). */
async function importedPackages(entry: string): Promise<string[]> {
  const { metafile } = await build({
    entryPoints: [join(ROOT, entry)],
    bundle: true,
    packages: 'external',
    platform: 'node',
    format: 'esm',
    write: false,
    metafile: true,
    outfile: join(ROOT, 'unused.js'),
    logLevel: 'silent',
  });
  const names = new Set<string>();
  for (const output of Object.values(metafile.outputs)) {
    for (const imported of output.imports) {
      if (!imported.external || imported.path.startsWith('node:')) continue;
      const parts = imported.path.split('/');
      names.add(imported.path.startsWith('@') ? parts.slice(0, 2).join('/') : (parts[0] ?? ''));
    }
  }
  return [...names].sort();
}

describe('@fanin/client: what a producer installs', () => {
  it('imports the AWS SDK, commander, zod and jsonata, and nothing Lambda-only (no Powertools)', async () => {
    // Act
    const [library, cli] = await Promise.all([
      importedPackages('packages/client/src/index.ts'),
      importedPackages('local/cli/main.ts'),
    ]);

    // Assess
    for (const imported of [library, cli]) {
      expect(imported.filter((name) => name.startsWith('@aws-lambda-powertools'))).toEqual([]);
      expect(imported.filter((name) => !/^@aws-sdk\/|^(commander|zod|jsonata)$/.test(name))).toEqual([]);
    }
    expect(cli).toContain('commander');
    expect(library).toContain('@aws-sdk/client-sqs');
  });

  it('both packages declare each dependency as a compatible range from the version the repository pins', () => {
    const root = readJson('package.json');
    const pinned = { ...root.devDependencies, ...root.dependencies };
    for (const pkg of ['packages/client/package.json', 'packages/cdk/package.json']) {
      for (const [name, range] of Object.entries(readJson(pkg).dependencies ?? {})) {
        expect(range, `${pkg}: ${name}`).toBe(`^${pinned[name]}`);
      }
    }
  });
});
