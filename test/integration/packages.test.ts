import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Finished, ROOT, type RuntimeProcess, runProcess, startRuntime } from '../support/runtime.ts';

/**
 * The two npm packages as another project gets them: `npm run build`, `npm pack` of both, the
 * tarballs installed into a scratch CDK app and a scratch Node producer in a temporary folder
 * (outside this repository, so nothing resolves to its node_modules: no esbuild, no tsx, no
 * lockfile of ours). Dependencies come from the local npm cache (`--prefer-offline`).
 */

const run = promisify(execFile);
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const rootPackage = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as {
  version: string;
  devDependencies: Record<string, string>;
};
const VERSION = rootPackage.version;
const DEFINITIONS = [
  {
    name: 'quotes',
    completion: { strategy: 'all' },
    fanOut: { type: 'recipient-list', recipients: ['bank-a', 'bank-b'] },
  },
];

let dir: string;
let tarballs: { cdk: string; client: string };

async function npm(cwd: string, ...args: string[]): Promise<string> {
  const { stdout } = await run(NPM, args, { cwd, maxBuffer: 64 * 1024 * 1024, env: process.env });
  return stdout;
}

/** Runs a command in a folder to its end (killed after two minutes), collecting its output. */
function exec(
  command: string,
  args: readonly string[],
  options: { cwd: string; env?: NodeJS.ProcessEnv },
): Promise<Finished> {
  return runProcess(command, args, options);
}

/**
 * Type-checks `check.ts` in a scratch project as a TypeScript user of the package would (strict,
 * NodeNext, with the repository's compiler). Each check holds a `@ts-expect-error`, so declarations
 * that resolve to `any` fail it as surely as missing ones.
 */
async function typecheck(project: string, source: string): Promise<Finished> {
  await writeFile(join(project, 'check.ts'), source);
  await writeFile(
    join(project, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        strict: true,
        module: 'nodenext',
        moduleResolution: 'nodenext',
        target: 'es2022',
        noEmit: true,
        types: ['node'],
        // Other packages' declarations are theirs to check; fanin's are exercised by check.ts.
        skipLibCheck: true,
      },
      files: ['check.ts'],
    }),
  );
  return exec(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json'], {
    cwd: project,
  });
}

/** A scratch project: its own package.json, then `npm install` from the local cache. */
async function scratch(name: string, dependencies: Record<string, string>): Promise<string> {
  const project = join(dir, name);
  await mkdir(project);
  await writeFile(
    join(project, 'package.json'),
    JSON.stringify({ name, private: true, type: 'module', dependencies }, null, 2),
  );
  await npm(project, 'install', '--prefer-offline', '--no-audit', '--no-fund');
  return project;
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'fanin-packages-'));
  await npm(ROOT, 'run', 'build', '--', '--quiet');
  const packed = JSON.parse(
    await npm(ROOT, 'pack', './packages/cdk', './packages/client', '--pack-destination', dir, '--json'),
  ) as { name: string; filename: string }[];
  const file = (name: string): string => join(dir, packed.find((p) => p.name === name)?.filename ?? name);
  tarballs = { cdk: file('@fanin/cdk'), client: file('@fanin/client') };
}, 600_000);
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('@fanin/cdk in another CDK app', () => {
  let app: string;
  let outdir: string;
  let template: { Resources: Record<string, { Type: string; Properties: Record<string, unknown> }> };

  beforeAll(async () => {
    app = await scratch('scratch-cdk-app', {
      '@fanin/cdk': `file:${tarballs.cdk}`,
      'aws-cdk-lib': rootPackage.devDependencies['aws-cdk-lib'] ?? 'missing',
      constructs: rootPackage.devDependencies.constructs ?? 'missing',
      '@types/node': rootPackage.devDependencies['@types/node'] ?? 'missing',
    });
    await writeFile(
      join(app, 'app.mjs'),
      [
        "import { App, Stack } from 'aws-cdk-lib';",
        "import { Fanin } from '@fanin/cdk';",
        'const app = new App({ outdir: process.argv[2] });',
        "const stack = new Stack(app, 'Scratch');",
        `new Fanin(stack, 'Fanin', { definitions: ${JSON.stringify(DEFINITIONS)} });`,
        'app.synth();',
      ].join('\n'),
    );
    outdir = join(app, 'cdk.out');
    const synth = await exec(process.execPath, ['app.mjs', outdir], { cwd: app });
    expect(synth.stderr).not.toMatch(/Error|LockFileDoesntExist/);
    expect(synth.code).toBe(0);
    template = JSON.parse(await readFile(join(outdir, 'Scratch.template.json'), 'utf8')) as typeof template;
  }, 600_000);

  /** The staged asset folder of a function's code, from the app's asset manifest. */
  async function assetDir(fn: { Properties: Record<string, unknown> }): Promise<string> {
    const assets = JSON.parse(await readFile(join(outdir, 'Scratch.assets.json'), 'utf8')) as {
      files: Record<string, { source: { path: string; packaging: string } }>;
    };
    const key = String((fn.Properties.Code as { S3Key?: unknown } | undefined)?.S3Key);
    const asset = assets.files[key.replace(/\.zip$/, '')];
    if (asset?.source.packaging !== 'zip') throw new Error(`code ${key} is not a directory asset of the app`);
    return join(outdir, asset.source.path);
  }

  it('installs without esbuild, TypeScript sources or a lockfile of ours', async () => {
    // Kills: the handlers bundled at the user's synth (the package would need esbuild and functions/).
    expect(existsSync(join(app, 'node_modules/esbuild'))).toBe(false);
    const installed = join(app, 'node_modules/@fanin/cdk');
    expect(existsSync(join(installed, 'package-lock.json'))).toBe(false);
    expect(existsSync(join(installed, 'functions'))).toBe(false);
    const manifest = JSON.parse(await readFile(join(installed, 'package.json'), 'utf8')) as Record<
      string,
      unknown
    >;
    expect(manifest).toMatchObject({
      version: VERSION,
      license: 'Apache-2.0',
      peerDependencies: { 'aws-cdk-lib': expect.any(String), constructs: expect.any(String) },
      exports: { '.': { types: expect.stringMatching(/\.d\.ts$/), import: './dist/index.js' } },
    });
    expect(manifest.private).toBeUndefined();
    expect(existsSync(join(installed, 'LICENSE'))).toBe(true);
  });

  it('loads from a CommonJS app too (require of an ES module, Node 20.19 and later)', async () => {
    const required = await exec(process.execPath, ['-e', "console.log(typeof require('@fanin/cdk').Fanin)"], {
      cwd: app,
    });
    expect(required.stdout.trim()).toBe('function');
  });

  it('synthesizes the six handlers as asset code with the pre-bundled handler and the definitions', async () => {
    const functions = Object.values(template.Resources).filter((r) => r.Type === 'AWS::Lambda::Function');
    expect(functions).toHaveLength(6);
    for (const fn of functions) {
      expect(fn.Properties).toMatchObject({ Handler: 'index.handler', Runtime: 'nodejs24.x' });
      // The code is a directory asset of this app, zipped at publish (nothing bundled at deploy time).
      const files = await readdir(await assetDir(fn));
      expect(files.sort()).toEqual(['definitions.mjs', 'handler.mjs', 'handler.mjs.map', 'index.mjs']);
    }
  });

  it('gives a TypeScript app the construct and its props with their types', async () => {
    const checked = await typecheck(
      app,
      [
        "import { App, Stack } from 'aws-cdk-lib';",
        "import { Fanin, type FaninProps } from '@fanin/cdk';",
        `const props: FaninProps = { definitions: ${JSON.stringify(DEFINITIONS)} };`,
        "const fanin: Fanin = new Fanin(new Stack(new App(), 'Typed'), 'Fanin', props);",
        'const arn: string = fanin.functions.reply.functionArn;',
        '// @ts-expect-error an unknown completion strategy',
        "const wrong: FaninProps = { definitions: [{ name: 'x', completion: { strategy: 'sometimes' } }] };",
        'console.log(arn, wrong);',
      ].join('\n'),
    );
    expect(checked.stdout).toBe('');
    expect(checked.code).toBe(0);
  }, 300_000);

  it("loads a handler from the app's staged asset with the definitions given at synth", async () => {
    // GIVEN the reply handler's asset as Lambda would unzip it
    const reply = Object.values(template.Resources).find(
      (r) =>
        r.Type === 'AWS::Lambda::Function' && String(r.Properties.Description).includes('records replies'),
    );
    if (!reply) throw new Error('no reply handler in the template');
    const index = join(await assetDir(reply), 'index.mjs');
    // WHEN Node imports its index.mjs (what the Lambda runtime does for `index.handler`)
    const loaded = await exec(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `const m = await import(${JSON.stringify(index)}); console.log(JSON.stringify({ handler: typeof m.handler, definitions: JSON.parse(process.env.FANIN_DEFINITIONS).map((d) => d.name) }));`,
      ],
      { cwd: dir, env: { PATH: process.env.PATH ?? '' } },
    );
    // THEN it exports the handler, and the definitions were set before the bundle ran
    expect(loaded.stderr).toBe('');
    expect(JSON.parse(loaded.stdout)).toEqual({ handler: 'function', definitions: ['quotes'] });
  });
});

describe('@fanin/client in a plain Node producer', () => {
  const prefix = `pkg-${Date.now().toString(36)}-${randomBytes(2).toString('hex')}`;
  let producer: string;
  let runtime: RuntimeProcess | undefined;

  beforeAll(async () => {
    const config = join(dir, 'fanin.config.json');
    await writeFile(
      config,
      JSON.stringify({
        replyPartitions: 1,
        responderQueues: ['responder'],
        definitions: [
          {
            name: 'ask',
            completion: { strategy: 'all' },
            fanOut: { type: 'recipient-list', recipients: ['{prefix}-responder'] },
            timeoutSeconds: 120,
          },
        ],
      }),
    );
    [producer, runtime] = await Promise.all([
      scratch('scratch-producer', {
        '@fanin/client': `file:${tarballs.client}`,
        '@types/node': rootPackage.devDependencies['@types/node'] ?? 'missing',
      }),
      startRuntime({ prefix, args: ['--config', config, '--quiet', '--no-dashboard'] }),
    ]);
    // A producer that is also the responder: plain JavaScript, no TypeScript loader.
    await writeFile(
      join(producer, 'producer.mjs'),
      `import { faninClientOf, resolveTarget } from '@fanin/client';

const target = await resolveTarget({ stateFile: process.env.FANIN_STATE });
const client = faninClientOf(target);
const aggregateId = process.argv[2];
await client.sendRequest('ask', { payload: { question: 'six times seven' } }, { aggregateId });
const responder = target.responderQueues.find((q) => q.name.endsWith('-responder'));
let subs = [];
while (subs.length === 0) subs = await client.receive(responder.url, { waitSeconds: 2 });
await client.reply(subs[0], { answer: 42 });
await client.ack(subs[0]);
let results = [];
while (results.length === 0) results = await client.receive(target.queues.completed.url, { waitSeconds: 2 });
await client.ack(results[0]);
console.log(JSON.stringify(results[0].body));
`,
    );
  }, 600_000);
  afterAll(async () => {
    if (runtime) expect(await runtime.stop()).toBe(0);
  }, 60_000);

  it('sends a request, answers it as the responder and reads the completed result', async () => {
    const env = { ...process.env, FANIN_STATE: runtime?.stateFile ?? '' };
    const aggregateId = `ask-${randomBytes(3).toString('hex')}`;
    const result = await exec(process.execPath, ['producer.mjs', aggregateId], { cwd: producer, env });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({
      type: 'fanin.aggregate.completed',
      aggregateId,
      definition: 'ask',
      result: [{ replyId: expect.any(String), body: { answer: 42 } }],
    });
  });

  it('gives a TypeScript producer the client with its types', async () => {
    const checked = await typecheck(
      producer,
      [
        "import { type FaninClient, faninClientOf, type ReceivedSubRequest, resolveTarget, type Target } from '@fanin/client';",
        "const target: Target = await resolveTarget({ stateFile: '.fanin/runtime.json' });",
        'const client: FaninClient = faninClientOf(target);',
        "const requestId: string = await client.sendRequest('ask', { payload: { n: 1 } });",
        'const subs: ReceivedSubRequest[] = await client.receive(target.queues.ingress.url);',
        '// @ts-expect-error a request is an object',
        "await client.sendRequest('ask', 42);",
        'console.log(requestId, subs);',
      ].join('\n'),
    );
    expect(checked.stdout).toBe('');
    expect(checked.code).toBe(0);
  }, 300_000);

  it('runs the fanin CLI from node_modules/.bin without tsx', async () => {
    const bin = join(producer, 'node_modules/.bin/fanin');
    expect(existsSync(join(producer, 'node_modules/tsx'))).toBe(false);
    const version = await exec(bin, ['--version'], { cwd: producer });
    expect(version).toMatchObject({ code: 0, stdout: `${VERSION}\n` });
    const endpoints = await exec(bin, ['endpoints', '--json'], {
      cwd: producer,
      env: { ...process.env, FANIN_STATE: runtime?.stateFile ?? '' },
    });
    expect(endpoints.code).toBe(0);
    expect(endpoints.stdout).toContain(`${prefix}-ingress`);
  });
});
