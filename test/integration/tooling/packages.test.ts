import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Finished, ROOT, type RuntimeProcess, runProcess, startRuntime } from '../../support/runtime.ts';
import { kitExamples } from '../../unit/packages/testing/doc-examples.ts';

/**
 * The two npm packages as another project gets them, by their READMEs: `npm run build`, `npm pack`
 * of both (the READMEs' "Get it" step in the clone), then each README's commands and programs run
 * as written in a fresh folder outside this repository (nothing resolves to its node_modules: no
 * esbuild, no tsx, no lockfile of ours): the tarball installed, the example written to the file
 * its first line names, run, and every `# prints: ...` a command carries found in its output.
 * The tarballs' folder (`/tmp/fanin-packages` in the READMEs) and the runtime's state file
 * (`/path/to/fanin/.fanin/runtime.json`) are the placeholders a reader fills in. Dependencies come
 * from the local npm cache (`npm_config_prefer_offline`), so the test runs offline.
 */

const run = promisify(execFile);
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const rootPackage = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as {
  version: string;
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};
/** What the AWS SDK prints on Node 20 (its 2027 releases need Node 22); README names it. */
const NODE_VERSION_NOTICE =
  /\(node:\d+\) Warning: NodeVersionSupportWarning:[\s\S]*?More information can be found at: \S+\n(\(Use `node --trace-warnings[^\n]*\n)?/;
const VERSION = rootPackage.version;
const DEFINITIONS = [
  {
    name: 'quotes',
    completion: { strategy: 'all' },
    fanOut: { type: 'recipient-list', recipients: ['bank-a', 'bank-b'] },
  },
];

let dir: string;

/** A fenced example of a package README: a shell block (commands) or a program (`// file.mjs` first). */
interface ReadmeExample {
  readonly line: number;
  readonly kind: 'sh' | 'program';
  readonly code: string;
  /** The file a program goes to (its first line, `// producer.mjs`). */
  readonly file?: string;
  readonly notRun?: string;
}

/** The shell blocks and programs of a package's README, in order, with their not-run markers. */
function readmeExamples(pkg: 'cdk' | 'client' | 'testing'): ReadmeExample[] {
  const lines = readFileSync(join(ROOT, 'packages', pkg, 'README.md'), 'utf8').split('\n');
  const examples: ReadmeExample[] = [];
  for (let i = 0; i < lines.length; i += 1) {
    const open = /^```(\w*)$/.exec(lines[i] ?? '');
    if (!open) continue;
    let end = i + 1;
    while (end < lines.length && lines[end] !== '```') end += 1;
    const code = lines.slice(i + 1, end).join('\n');
    let previous = i - 1;
    while (previous >= 0 && (lines[previous] ?? '').trim() === '') previous -= 1;
    const notRun = /^<!--\s*not run:\s*(.*?)\s*-->$/.exec((lines[previous] ?? '').trim())?.[1];
    const file = /^\/\/ ([\w.-]+\.m?[jt]s)$/.exec(lines[i + 1] ?? '')?.[1];
    if (open[1] === 'sh') examples.push({ line: i + 1, kind: 'sh', code, ...(notRun ? { notRun } : {}) });
    else if (file) examples.push({ line: i + 1, kind: 'program', code, file });
    else
      throw new Error(
        `packages/${pkg}/README.md:${i + 1}: a ${open[1] || 'plain'} block that is neither sh nor a program naming its file`,
      );
    i = end;
  }
  return examples;
}

/** The environment of a reader's shell: no endpoints of the test emulators unless given, npm offline. */
function readerEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of Object.keys(env)) {
    if (name.startsWith('AWS_ENDPOINT_URL') || name.startsWith('FANIN_') || name.startsWith('npm_'))
      delete env[name];
  }
  // A reader's Node 20 has no such setting: what the SDK prints then is part of what the README shows.
  delete env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED;
  return {
    ...env,
    npm_config_prefer_offline: 'true',
    npm_config_audit: 'false',
    npm_config_fund: 'false',
    ...extra,
  };
}

/**
 * Runs a README's examples in a fresh project folder as a reader would: programs written to their
 * files, shell blocks run by bash in order, each command's `# prints: <text>` checked against what
 * it printed. Returns what each shell block printed.
 */
async function followReadme(
  pkg: 'cdk' | 'client' | 'testing',
  project: string,
  values: Record<string, string>,
  env: NodeJS.ProcessEnv,
): Promise<Finished[]> {
  const outputs: Finished[] = [];
  for (const example of readmeExamples(pkg)) {
    if (example.notRun !== undefined) continue;
    let code = example.code;
    for (const [placeholder, value] of Object.entries(values)) code = code.split(placeholder).join(value);
    if (example.kind === 'program') {
      await writeFile(join(project, example.file ?? ''), code);
      continue;
    }
    const finished = await exec('bash', ['-eo', 'pipefail', '-c', code], { cwd: project, env });
    const where = `packages/${pkg}/README.md:${example.line}\n${code}\n--- exit ${finished.code}\n--- stdout\n${finished.stdout}\n--- stderr\n${finished.stderr}`;
    expect(finished.code, where).toBe(0);
    for (const [, promise] of code.matchAll(/# prints: (.+)$/gm)) {
      expect(finished.stdout, where).toContain((promise ?? '').trim());
    }
    outputs.push(finished);
  }
  return outputs;
}

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

/** A fresh project: a package.json of its own (as `npm init` leaves it, ES modules), nothing installed. */
async function freshProject(name: string): Promise<string> {
  const project = join(dir, name);
  await mkdir(project);
  await writeFile(
    join(project, 'package.json'),
    JSON.stringify({ name, private: true, type: 'module' }, null, 2),
  );
  return project;
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'fanin-packages-'));
  await npm(ROOT, 'run', 'build', '--', '--quiet');
  // The READMEs' "Get it" step, into the folder they call /tmp/fanin-packages.
  await npm(
    ROOT,
    'pack',
    './packages/cdk',
    './packages/client',
    './packages/testing',
    '--pack-destination',
    dir,
  );
}, 600_000);
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('@fanin/cdk in another CDK app', () => {
  let app: string;
  let outdir: string;
  let template: { Resources: Record<string, { Type: string; Properties: Record<string, unknown> }> };

  beforeAll(async () => {
    // GIVEN a fresh CDK app that followed packages/cdk/README.md (install, app.mjs, node app.mjs)
    app = await freshProject('scratch-cdk-app');
    await followReadme('cdk', app, { '/tmp/fanin-packages': dir }, readerEnv());
    await npm(
      app,
      'install',
      '--prefer-offline',
      '--no-audit',
      '--no-fund',
      `@types/node@${rootPackage.devDependencies['@types/node']}`,
    );
    // and the same construct synthesized into a folder this test reads
    await writeFile(
      join(app, 'synth.mjs'),
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
    const synth = await exec(process.execPath, ['synth.mjs', outdir], { cwd: app });
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
    // A library declares compatible ranges (from the versions the lockfile pins), never exact ones.
    for (const [name, range] of Object.entries(manifest.dependencies as Record<string, string>)) {
      expect(range, name).toBe(`^${rootPackage.dependencies[name]}`);
    }
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
        '// the topology options are props, with their types',
        'const tuned: FaninProps = { ...props, replyPartitions: 4, replyBatchSize: [10, 100, 10, 10], partitioning: { highWatermark: 200 } };',
        '// @ts-expect-error replyPartitions is a number',
        "const mistyped: FaninProps = { ...props, replyPartitions: 'four' };",
        'console.log(arn, wrong, tuned, mistyped);',
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
  let printed: Finished[];

  beforeAll(async () => {
    // GIVEN a local runtime as `npm start` runs it (fanin.config.ts: loan-broker and its five banks)
    // and a fresh Node project
    [producer, runtime] = await Promise.all([
      freshProject('scratch-producer'),
      startRuntime({ prefix, args: ['--quiet', '--no-dashboard'] }),
    ]);
    // WHEN it follows packages/client/README.md: install the tarball, write producer.mjs, run it
    printed = await followReadme(
      'client',
      producer,
      { '/tmp/fanin-packages': dir, '/path/to/fanin/.fanin/runtime.json': runtime.stateFile },
      readerEnv(),
    );
    await npm(
      producer,
      'install',
      '--prefer-offline',
      '--no-audit',
      '--no-fund',
      `@types/node@${rootPackage.devDependencies['@types/node']}`,
    );
  }, 600_000);
  afterAll(async () => {
    if (runtime) expect(await runtime.stop()).toBe(0);
  }, 60_000);

  it("runs the README's producer as written: it sends, answers as bank-2 and prints the completed result", () => {
    // THEN the last block (node producer.mjs) printed the one line the README promises, nothing else
    const run = printed.at(-1);
    expect(run?.stdout).toBe('completed {"bank":"bank-2","rate":3.4}\n');
    // (stderr: at most the SDK's notice that its 2027 releases need Node 22, which the README names)
    expect(run?.stderr.replace(NODE_VERSION_NOTICE, '').trim()).toBe('');
  });

  it('installs the SDK and what the client uses, nothing Lambda-only, each as a compatible range', async () => {
    // Kills: shared/client/connect.ts reaching shared/app.ts again (Powertools Logger and Metrics in every producer).
    expect(existsSync(join(producer, 'node_modules/@aws-lambda-powertools'))).toBe(false);
    const installed = join(producer, 'node_modules/@fanin/client');
    for (const file of ['dist/index.js', 'dist/cli.js']) {
      const code = await readFile(join(installed, file), 'utf8');
      expect(code, file).not.toMatch(/(from|import\(|require\()\s*["']@aws-lambda-powertools/);
    }
    const manifest = JSON.parse(await readFile(join(installed, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
    };
    expect(
      Object.keys(manifest.dependencies).filter(
        (name) => !/^@aws-sdk\/|^(commander|zod|jsonata)$/.test(name),
      ),
    ).toEqual([]);
    for (const [name, range] of Object.entries(manifest.dependencies)) {
      expect(range, name).toBe(`^${(rootPackage.dependencies as Record<string, string>)[name]}`);
    }
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

describe('@fanin/testing in a project of its own', () => {
  let project: string;
  let printed: Finished[];

  beforeAll(async () => {
    // GIVEN a fresh Node project that follows packages/testing/README.md (install, loan.test.mjs,
    // quote.mjs, node --test, node), with every AWS endpoint pointing at a closed port: nothing it
    // runs may reach a network
    project = await freshProject('scratch-kit');
    printed = await followReadme(
      'testing',
      project,
      { '/tmp/fanin-packages': dir },
      readerEnv({ AWS_ENDPOINT_URL: 'http://127.0.0.1:9', AWS_REGION: 'eu-west-3' }),
    );
    // No @types/node of its own: the kit's declarations name Node's types (process.env,
    // BufferEncoding), so the kit declares the package and the reader gets it with the kit.
  }, 600_000);

  it("runs the README's node:test file and script as written, with no emulator and no TypeScript loader", () => {
    // Kills: a kit that needs tsx or an emulator (the packed dist is plain JavaScript over models).
    expect(existsSync(join(project, 'node_modules/tsx'))).toBe(false);
    expect(printed.at(-2)?.stdout).toMatch(/pass 2/);
    expect(printed.at(-2)?.stdout).toMatch(/fail 0/);
    expect(printed.at(-1)?.stdout).toBe('completed all-arrived 2 {"rate":3.4}\n');
  });

  it("gives a TypeScript test the kit with its types, which docs/definitions.md's kit examples compile against", async () => {
    // Kills: a page whose examples run (types stripped) but that a TypeScript reader cannot
    // compile, e.g. a definition whose strategy widens to string without `satisfies DefinitionInput`.
    // Kills: a kit whose declarations need @types/node without declaring it (this project did
    // not install it: typecheck's `types: ['node']` finds it only as the kit's dependency).
    expect(existsSync(join(project, 'node_modules/@types/node/package.json'))).toBe(true);
    const examples = kitExamples(readFileSync(join(ROOT, 'docs/definitions.md'), 'utf8'));
    expect(examples.length).toBeGreaterThan(10);
    const checked = await typecheck(
      project,
      [
        "import { type DefinitionInput, type FaninSimulation, simulate, type SentSubRequest } from '@fanin/testing';",
        "const run: FaninSimulation = simulate({ name: 'q', completion: { strategy: 'all' }, timeoutSeconds: 5 });",
        "await run.request({ aggregateId: 'q-1', expected: 1 });",
        'const sent: SentSubRequest[] = run.subRequests();',
        "await run.advance('5s');",
        'const outcome: unknown = run.result()?.outcome;',
        '// @ts-expect-error an unknown completion strategy',
        "simulate({ name: 'x', completion: { strategy: 'sometimes' } });",
        'console.log(sent, outcome);',
        '// vitest as the examples use it (this project has no vitest)',
        'declare function it(name: string, fn: () => Promise<void>): void;',
        'declare const expect: ((actual: unknown) => Record<string, (...args: unknown[]) => void>) & {',
        '  stringContaining(text: string): unknown;',
        '};',
        ...examples.map((e) => `{\n// docs/definitions.md:${e.line}\n${e.source}\n}`),
      ].join('\n'),
    );
    expect(checked.stdout).toBe('');
    expect(checked.code).toBe(0);
  }, 300_000);
});
