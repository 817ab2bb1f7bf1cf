import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleBanner } from '../../../infra/fanin-function.ts';
import { handlerEnvironment } from '../../../infra/handler-environment.ts';
import { completionLeaseSeconds, QueueRole, resolvePartitioning } from '../../../shared/topology/topology.ts';

/**
 * The bundle the stack deploys carries the definitions itself (Lambda's environment is limited to
 * 4 KB). This builds bundles the way FaninFunction does (ESM, the same banner) with the local esbuild
 * and runs them in a child Node process: the configuration loader finds the definitions, and a real
 * handler module loads without a CommonJS `require` failure.
 */

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const DEFINITIONS = [
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

  async function bundle(entry: string, outfile: string): Promise<string> {
    const out = path.join(dir, outfile);
    await build({
      entryPoints: [entry],
      outfile: out,
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      mainFields: ['module', 'main'],
      minify: true,
      logLevel: 'silent',
      banner: { js: bundleBanner(JSON.stringify(DEFINITIONS)) },
    });
    return out;
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
      ].join('\n'),
    );
    const out = await bundle(entry, 'config.mjs');
    // WHEN it runs with the stack's environment, which has no FANIN_DEFINITIONS
    const stdout = execFileSync(process.execPath, [out], { env: ENV, encoding: 'utf8' });
    // THEN the definitions compiled into the bundle are there, and the rest of the contract reads back
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
      // GIVEN the handler bundled like the stack bundles it
      const out = await bundle(path.join(ROOT, 'functions', `${name}.ts`), `${name}.mjs`);
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
