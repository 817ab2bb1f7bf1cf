import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, type TestContext } from 'vitest';
import { type RuntimeState, readState } from '../../../shared/client/runtime-state.ts';
import { type Finished, ROOT, runProcess } from '../../support/runtime.ts';
import { onPath, requireTool } from '../../support/tools.ts';

/**
 * Every command example of README.md and docs/*.md runs as written. The examples are the fenced
 * shell (`sh`, `bash`, `shell`) and `python` blocks; one that cannot run here (it deploys to an
 * AWS account, reinstalls the dependencies, or is the test suite itself) says so in the markdown,
 * on the line before the block, where readers and reviewers see it:
 *
 *     <!-- not run: needs an AWS account -->
 *
 * The blocks of one document run in order against one local runtime started as `npm start` starts
 * it (its own emulators, prefix `fanin`), from a scratch folder where `npx fanin` is this clone's
 * CLI (as in a project that installed it); shell variables and exports carry from one block to the
 * next, as in a reader's terminal. The environment is a reader's pointed at this runtime: its
 * state file (`FANIN_STATE`), region `us-east-1`, dummy credentials and the runtime's endpoints
 * (`AWS_ENDPOINT_URL_<SERVICE>`: "your AWS settings" for `--stack`). A placeholder the reader
 * fills in (`<fauxqs port>`) is replaced by its value, and `big.json` (the reader's own large
 * request) is provided. A block passes when it exits 0, no `fanin` command in it reported an
 * error (a failure before `&&` does not stop a shell), and it printed what the text says: each
 * `# prints: <text>` after a command, and the results in PROMISES.
 */

/** A fenced example in a markdown file. */
interface Example {
  readonly file: string;
  /** Line of the opening fence (1-based). */
  readonly line: number;
  readonly language: 'bash' | 'python';
  readonly code: string;
  /** Why it is not run (the `<!-- not run: ... -->` marker), if it is not. */
  readonly notRun?: string;
}

const SHELLS = new Set(['sh', 'bash', 'shell', 'zsh']);
const PYTHONS = new Set(['python', 'py', 'python3']);
const NOT_RUN = /^<!--\s*not run:\s*(.*?)\s*-->$/;

/** The command examples of one markdown file, with their not-run markers. */
function extractExamples(file: string, markdown: string): Example[] {
  const lines = markdown.split('\n');
  const examples: Example[] = [];
  for (let i = 0; i < lines.length; i += 1) {
    const open = /^(\s*)(`{3,}|~{3,})\s*([\w+-]*)/.exec(lines[i] ?? '');
    if (!open) continue;
    const [, indent = '', fence = '```', tag = ''] = open;
    let end = i + 1;
    while (end < lines.length && !(lines[end] ?? '').trimStart().startsWith(fence)) end += 1;
    const language = SHELLS.has(tag) ? 'bash' : PYTHONS.has(tag) ? 'python' : undefined;
    if (language) {
      let previous = i - 1;
      while (previous >= 0 && (lines[previous] ?? '').trim() === '') previous -= 1;
      const marker = NOT_RUN.exec((lines[previous] ?? '').trim());
      const code = lines
        .slice(i + 1, end)
        .map((line) => (line.startsWith(indent) ? line.slice(indent.length) : line))
        .join('\n');
      examples.push({ file, line: i + 1, language, code, ...(marker ? { notRun: marker[1] ?? '' } : {}) });
    }
    i = end;
  }
  return examples;
}

const FILES = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`),
];
const EXAMPLES = FILES.flatMap((file) => extractExamples(file, readFileSync(join(ROOT, file), 'utf8')));

/** Values of the placeholders a reader fills in, from the running runtime. */
function placeholders(state: RuntimeState): Record<string, string> {
  const sqs = state.endpoints.AWS_ENDPOINT_URL_SQS ?? state.endpoints.AWS_ENDPOINT_URL ?? '';
  return { '<fauxqs port>': new URL(sqs).port };
}

/**
 * What some examples promise to show, by a line of their code: the result a reader is told to
 * expect. (Every example must also exit 0 without a CLI error.)
 */
const PROMISES: readonly [string, RegExp][] = [
  ['npx fanin send loan-broker', /completed loan-broker my-loan .*"rate":3\.4/],
  ['npx fanin send order-approval --aggregate-id order-42', /^order-42: completed$/m],
  ['AWS="aws --endpoint-url', /"outcome":"completed".*"result":\{"replyId":"\d+","body":\{"rate":3\.4\}\}/],
  ['import json, uuid, boto3', /'body': \{'rate': 3\.4\}/],
  ['import boto3, json, uuid', /^stop 1 completed threshold\nfanin\.cancellation$/m],
];

/** A command's promise of what it prints, as a comment after it: `npx fanin --version   # prints: 0.2.0`. */
const PRINTS = /# prints: (.+)$/gm;

/** An error line of the fanin CLI: a usage error (commander's) or a failed command. */
const CLI_ERROR = /^(error: |fanin [a-z-]+: )/m;

/** The tools a block calls, each with why it is missing (undefined when it is there). */
function toolsOf(example: Example): [string, string | undefined][] {
  const tools: [string, string | undefined][] = [];
  if (example.language === 'python') {
    let boto3: string | undefined;
    try {
      execFileSync('python3', ['-c', 'import boto3'], { stdio: 'ignore' });
    } catch {
      boto3 = 'python3 with boto3 is not installed (pip install boto3)';
    }
    tools.push(['boto3', boto3]);
  }
  if (/(^|[\s"'(=])aws /m.test(example.code)) {
    tools.push(['AWS CLI', onPath(['aws']) ? undefined : 'aws is not on the PATH (pip install awscli)']);
  }
  if (/(^|[\s$(])jq /m.test(example.code)) {
    tools.push(['jq', onPath(['jq']) ? undefined : 'jq is not on the PATH (apt-get install jq)']);
  }
  return tools;
}

/** A local runtime started with `npm start`, as a reader starts it, in its own process group. */
interface StartedRuntime {
  readonly state: RuntimeState;
  readonly stateFile: string;
  output(): string;
  stop(): Promise<number | null>;
}

/** The environment without the test emulators: the runtime starts its own, as on a fresh machine. */
function readerEnvironment(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const name of Object.keys(env)) {
    if (name.startsWith('AWS_ENDPOINT_URL_') || name.startsWith('FANIN_TEST_')) delete env[name];
  }
  delete env.FANIN_STATE;
  delete env.FANIN_STACK;
  // A reader's shell has no such setting: the fanin CLI and npm start silence the SDK's Node 20
  // notice themselves, and an example that shows it must say so.
  delete env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED;
  return env;
}

async function npmStart(dir: string): Promise<StartedRuntime> {
  const stateFile = join(dir, 'runtime.json');
  const child: ChildProcess = spawn('npm', ['start', '--silent', '--', '--port', '0', '--state', stateFile], {
    cwd: ROOT,
    env: readerEnvironment(),
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const deadline = Date.now() + 90_000;
  let state: RuntimeState | undefined;
  while (!state) {
    if (child.exitCode !== null) throw new Error(`npm start exited with ${child.exitCode}:\n${output}`);
    if (Date.now() > deadline) {
      process.kill(-(child.pid ?? 0), 'SIGKILL');
      throw new Error(`npm start did not get ready in time:\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
    state = await readState(stateFile).catch(() => undefined);
  }
  return {
    state,
    stateFile,
    output: () => output,
    stop: async () => {
      // Ctrl-C for the runtime (npm start then ends with its exit code); the group, if it hangs.
      if (child.exitCode === null) process.kill(state.pid, 'SIGINT');
      const timer = setTimeout(() => process.kill(-(child.pid ?? 0), 'SIGKILL'), 30_000);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
}

/** Runs one block in the scratch folder, carrying shell variables from and to `vars.sh`. */
async function runExample(example: Example, dir: string, runtime: StartedRuntime) {
  let code = example.code;
  for (const [placeholder, value] of Object.entries(placeholders(runtime.state))) {
    code = code.split(placeholder).join(value);
  }
  const name = `example-${example.file.replace(/\W/g, '-')}-${example.line}`;
  let body = code;
  if (example.language === 'python') {
    await writeFile(join(dir, `${name}.py`), code);
    body = `python3 ${name}.py`;
  }
  const script = [
    'set -eo pipefail',
    // Variables are compared with those the shell starts with; new or changed ones carry over.
    '__snapshot() { local n; for n in $(compgen -v); do case $n in __*|BASH*|FUNCNAME|PIPESTATUS|LINENO|RANDOM|SECONDS|SRANDOM|EPOCH*|_|OLDPWD|PWD|SHLVL) ;; *) declare -p "$n" 2>/dev/null ;; esac; done | grep -v "^declare -[a-zA-Z]*r"; }',
    '__BASE=$(__snapshot)',
    '[ -f vars.sh ] && source vars.sh',
    body,
    '__snapshot | grep -vxF -f <(printf "%s\\n" "$__BASE") > vars.next || true',
    'mv vars.next vars.sh',
  ].join('\n');
  await writeFile(join(dir, `${name}.sh`), script);
  const endpoints = runtime.state.endpoints;
  return runIn(dir, 'bash', [`${name}.sh`], {
    ...readerEnvironment(),
    ...endpoints,
    FANIN_STATE: runtime.stateFile,
    AWS_REGION: runtime.state.region,
    AWS_DEFAULT_REGION: runtime.state.region,
    AWS_ACCESS_KEY_ID: 'test',
    AWS_SECRET_ACCESS_KEY: 'test',
  });
}

/** Runs a command in `dir` to its end (killed after 150 s), collecting its output. */
function runIn(
  dir: string,
  command: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv,
): Promise<Finished> {
  return runProcess(command, args, { cwd: dir, env, timeoutMs: 150_000 });
}

describe('documentation examples', () => {
  it('every shell and Python block of README.md and docs/ is run here or marked <!-- not run: reason -->', () => {
    // Assess
    const notRun = EXAMPLES.filter((e) => e.notRun !== undefined);
    expect(EXAMPLES.length - notRun.length).toBeGreaterThan(0);
    for (const example of notRun) {
      expect(example.notRun, `${example.file}:${example.line} says why it is not run`).toMatch(/\w{3,}/);
    }
    // A promise whose example is gone or not run checks nothing: it is stale.
    for (const [line] of PROMISES) {
      expect(
        EXAMPLES.some((e) => e.notRun === undefined && e.code.includes(line)),
        `an example that runs contains ${line}`,
      ).toBe(true);
    }
    // A marker that is not right before a command block excludes nothing: it is a mistake.
    for (const file of FILES) {
      const markers = readFileSync(join(ROOT, file), 'utf8')
        .split('\n')
        .filter((line) => NOT_RUN.test(line.trim())).length;
      expect(markers, `${file}: each not-run marker precedes a shell or Python block`).toBe(
        notRun.filter((e) => e.file === file).length,
      );
    }
  });
});

for (const file of FILES) {
  const examples = EXAMPLES.filter((e) => e.file === file && e.notRun === undefined);
  if (examples.length === 0) continue;
  describe(`${file}: its command examples run as written against npm start`, () => {
    let dir: string;
    let runtime: StartedRuntime | undefined;

    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), 'fanin-docs-'));
      // `npx fanin` here is this clone's CLI, as in a project that installed fanin.
      await mkdir(join(dir, 'node_modules', '.bin'), { recursive: true });
      await symlink(join(ROOT, 'bin', 'fanin.js'), join(dir, 'node_modules', '.bin', 'fanin'));
      // The reader's own large request, for the claim-check example (above 256 KiB).
      await writeFile(
        join(dir, 'big.json'),
        JSON.stringify({ definition: 'loan-broker', payload: { amount: 1000, note: 'x'.repeat(300_000) } }),
      );
      runtime = await npmStart(dir);
    }, 150_000);

    afterAll(async () => {
      if (runtime) expect(await runtime.stop()).toBe(0);
      if (dir) await rm(dir, { recursive: true, force: true });
    }, 60_000);

    for (const example of examples) {
      it(`${file}:${example.line} (${example.code.split('\n')[0]?.slice(0, 60)})`, async (context: TestContext) => {
        // Prepare
        for (const [tool, missing] of toolsOf(example)) if (!requireTool(context, tool, missing)) return;

        // Act
        const result = await runExample(example, dir, runtime as StartedRuntime);

        // Assess
        const report = `exit ${result.code}\n--- stdout\n${result.stdout}\n--- stderr\n${result.stderr}`;
        expect(result.code, report).toBe(0);
        expect(result.stderr, report).not.toMatch(CLI_ERROR);
        for (const [line, promise] of PROMISES) {
          if (example.code.includes(line)) expect(result.stdout, report).toMatch(promise);
        }
        // What the text says a command prints, on its own line: `# prints: <text>`.
        for (const [, printed] of example.code.matchAll(PRINTS)) {
          expect(result.stdout, report).toContain((printed ?? '').trim());
        }
      }, 180_000);
    }
  });
}
