import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assetWrapper, HANDLER_BUNDLE, handlerBuildOptions } from '../../../infra/handler-code.ts';
import { handlerEnvironment } from '../../../infra/handler-environment.ts';
import { completionLeaseSeconds, QueueRole, resolvePartitioning } from '../../../shared/topology/topology.ts';

/**
 * A handler asset carries the definitions itself (Lambda's environment is limited to 4 KB): its
 * `index.mjs` imports `definitions.mjs` (which sets FANIN_DEFINITIONS), then the bundle. This
 * builds assets the way the stack and `npm run build` do (`handlerBuildOptions`, `assetWrapper`)
 * with the local esbuild and runs them in a child Node process: the configuration loader finds the
 * definitions and the rest of the environment contract, and a real handler module loads without a
 * CommonJS `require` failure.
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

  /** Builds an asset directory for `entry`; returns its `index.mjs`. */
  async function bundle(entry: string, name: string): Promise<string> {
    const asset = path.join(dir, name);
    mkdirSync(asset, { recursive: true });
    await build({ ...handlerBuildOptions(entry, path.join(asset, HANDLER_BUNDLE)), logLevel: 'silent' });
    for (const [file, text] of Object.entries(assetWrapper(JSON.stringify(DEFINITIONS)))) {
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
