import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { App, Stack } from 'aws-cdk-lib';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handlerCode } from '../../../infra/handler-code.ts';

/**
 * Where a handler's code comes from (infra/handler-code.ts): the asset CDK stages for it, built the
 * way `cdk synth` builds it (bundling on), then imported by Node as Lambda imports `index.handler`.
 */

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const DEFINITIONS = JSON.stringify([{ name: 'loan', completion: { strategy: 'all' } }]);

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'fanin-handler-code-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Synthesizes one function with this code and returns its staged asset folder. */
function stage(code: lambda.Code): string {
  const outdir = mkdtempSync(path.join(dir, 'out-'));
  const stack = new Stack(new App({ outdir }), 'Code');
  new lambda.Function(stack, 'Fn', { code, handler: 'index.handler', runtime: lambda.Runtime.NODEJS_24_X });
  const assembly = stack.node.root as App;
  assembly.synth();
  const assets = readdirSync(outdir).filter((name) => name.startsWith('asset.'));
  expect(assets).toHaveLength(1);
  return path.join(outdir, assets[0] ?? '');
}

/** The type of what `index.mjs` of an asset exports as `handler`, imported by a fresh Node process. */
function handlerType(asset: string): string {
  const stdout = execFileSync(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `const m = await import(${JSON.stringify(path.join(asset, 'index.mjs'))}); console.log(typeof m.handler);`,
    ],
    { env: { PATH: process.env.PATH ?? '' }, encoding: 'utf8' },
  );
  return stdout.trim();
}

describe('handler code', () => {
  it('prefers the pre-bundled handler, with the definitions set before the bundle is evaluated', () => {
    // GIVEN a package root holding a pre-bundled reply handler that reads the definitions when it is
    // evaluated (as a bundle whose modules read the environment at import would), and no sources
    const root = path.join(dir, 'package');
    mkdirSync(path.join(root, 'dist/handlers/reply'), { recursive: true });
    writeFileSync(
      path.join(root, 'dist/handlers/reply/handler.mjs'),
      'const seen = process.env.FANIN_DEFINITIONS;\nexport const handler = async () => seen;\n',
    );
    // WHEN its code is staged and the handler invoked
    const asset = stage(handlerCode(root, 'reply', DEFINITIONS));
    const result = execFileSync(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `const m = await import(${JSON.stringify(path.join(asset, 'index.mjs'))}); console.log(await m.handler());`,
      ],
      { env: { PATH: process.env.PATH ?? '' }, encoding: 'utf8' },
    );
    // THEN it saw the definitions at evaluation (mutant killed: index.mjs importing the handler
    // before definitions.mjs), and the asset is the four files the stack deploys
    expect(result.trim()).toBe(DEFINITIONS);
    expect(readdirSync(asset).sort()).toEqual(['definitions.mjs', 'handler.mjs', 'index.mjs']);
  }, 60_000);

  it('bundles functions/<name>.ts at synth in a clone of the repository', () => {
    // GIVEN this repository (no dist/handlers at its root) WHEN the distributor's code is staged
    const asset = stage(handlerCode(ROOT, 'distributor', DEFINITIONS));
    // THEN esbuild bundled it with its source map, and Node imports it as Lambda does
    expect(readdirSync(asset).sort()).toEqual([
      'definitions.mjs',
      'handler.mjs',
      'handler.mjs.map',
      'index.mjs',
    ]);
    expect(handlerType(asset)).toBe('function');
  }, 60_000);

  it('names both places it looked when a handler has no code', () => {
    expect(() => handlerCode(path.join(dir, 'empty'), 'timer', DEFINITIONS)).toThrow(
      /neither .*dist\/handlers\/timer\/handler\.mjs \(run `npm run build`\) nor .*functions\/timer\.ts exists/,
    );
  });
});
