import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { App, Stack } from 'aws-cdk-lib';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  assetWrapper,
  HANDLER_BUNDLE,
  handlerBuildOptions,
  handlerCode,
} from '../../../infra/handler-code.ts';
import { handlerEnvironment } from '../../../infra/handler-environment.ts';
import { completionLeaseSeconds, QueueRole, resolvePartitioning } from '../../../shared/topology/topology.ts';

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

/**
 * A handler asset carries the definitions itself (Lambda's environment is limited to 4 KB): its
 * `index.mjs` imports `definitions.mjs` (which sets FANIN_DEFINITIONS), then the bundle. This
 * builds assets the way the stack and `npm run build` do (`handlerBuildOptions`, `assetWrapper`)
 * with the local esbuild and runs them in a child Node process: the configuration loader finds the
 * definitions and the rest of the environment contract, and a real handler module loads without a
 * CommonJS `require` failure.
 */

const BUNDLED_DEFINITIONS = [
  { name: 'loan', completion: { strategy: 'all' } },
  { name: 'audit', completion: { strategy: 'timeout' }, timeoutSeconds: 60 },
];
const url = (name: string): string => `https://sqs.us-east-1.amazonaws.com/111122223333/${name}`;
/** The environment the stack gives every handler (built by the stack's own function), with values. */
const ENV = {
  PATH: process.env.PATH ?? '',
  AWS_REGION: 'us-east-1',
  ...handlerEnvironment({
    tableName: 'fanin-state',
    queueUrls: Object.fromEntries(
      Object.values(QueueRole).map((role) => [role, url(`fanin-${role}`)]),
    ) as Record<QueueRole, string>,
    replyQueueUrls: [url('fanin-reply-0')],
    bucketName: 'fanin-payloads-1a2b3c',
    partitioning: resolvePartitioning({ highWatermark: 50 }),
    completionLeaseSeconds: completionLeaseSeconds(30),
    recipientAccounts: ['444455556666'],
    serviceName: 'fanin',
  }),
};

describe('FaninFunction bundle', () => {
  let dir: string;

  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'fanin-bundle-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** Builds an asset directory for `entry`; returns its `index.mjs`. */
  async function bundle(entry: string, name: string): Promise<string> {
    const asset = path.join(dir, name);
    mkdirSync(asset, { recursive: true });
    await build({ ...handlerBuildOptions(entry, path.join(asset, HANDLER_BUNDLE)), logLevel: 'silent' });
    for (const [file, text] of Object.entries(assetWrapper(JSON.stringify(BUNDLED_DEFINITIONS)))) {
      writeFileSync(path.join(asset, file), text);
    }
    return path.join(asset, 'index.mjs');
  }

  it('sets FANIN_DEFINITIONS before any bundled module reads the environment', async () => {
    // GIVEN a module that loads the configuration at import, as a handler's first invocation does
    const entry = path.join(dir, 'entry.ts');
    writeFileSync(
      entry,
      [
        `import { loadConfig } from ${JSON.stringify(path.join(ROOT, 'shared/config.ts'))};`,
        'const config = loadConfig();',
        'console.log(JSON.stringify({',
        '  definitions: [...config.definitions.keys()],',
        '  backlog: config.queueUrls.backlog,',
        '  bucket: config.bucketName,',
        '  highWatermark: config.partitioning?.highWatermark,',
        '}));',
        'export const handler = () => undefined;',
      ].join('\n'),
    );
    const out = await bundle(entry, 'config');
    // WHEN it runs with the stack's environment, which has no FANIN_DEFINITIONS
    const stdout = execFileSync(process.execPath, [out], { env: ENV, encoding: 'utf8' });
    // THEN the asset's definitions are there, and the rest of the contract reads back
    expect(JSON.parse(stdout)).toEqual({
      definitions: ['loan', 'audit'],
      backlog: url('fanin-backlog'),
      bucket: 'fanin-payloads-1a2b3c',
      highWatermark: 50,
    });
  });

  it.each(['reply', 'sweeper', 'distributor'])(
    'loads the real %s handler as an ES module',
    async (name) => {
      // GIVEN the handler's asset built like the stack builds it
      const out = await bundle(path.join(ROOT, 'functions', `${name}.ts`), name);
      // WHEN its module is imported THEN it exports a handler function
      const stdout = execFileSync(
        process.execPath,
        [
          '--input-type=module',
          '-e',
          `const m = await import(${JSON.stringify(out)}); console.log(typeof m.handler);`,
        ],
        { env: ENV, encoding: 'utf8' },
      );
      expect(stdout.trim()).toBe('function');
    },
    60_000,
  );
});
