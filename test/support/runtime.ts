import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type RuntimeState, readState } from '../../shared/client/runtime-state.ts';

/** The repository's root: where `npm start` and `bin/fanin.js` run from. */
export const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** What a finished process printed and how it ended. */
export interface Finished {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** A local runtime (`local/main.ts`) started as its own process, as `npm start` would. */
export interface RuntimeProcess {
  readonly process: ChildProcess;
  readonly stateFile: string;
  readonly state: RuntimeState;
  /** Everything it printed so far (stdout and stderr). */
  output(): string;
  /** Runs the `fanin` CLI against this runtime. */
  cli(args: readonly string[], options?: { env?: NodeJS.ProcessEnv; timeoutMs?: number }): Promise<Finished>;
  /** Ctrl-C: SIGINT, then waits for the exit; returns the exit code. */
  stop(): Promise<number | null>;
}

/** Options of {@link startRuntime}. */
export interface StartRuntimeOptions {
  readonly prefix: string;
  /** More command-line arguments (e.g. `--config`, `--quiet`). */
  readonly args?: readonly string[];
  /** The environment (default: this worker's, pointing at the test emulators). */
  readonly env?: NodeJS.ProcessEnv;
  /** Use this state file (default: a fresh one in a temporary folder). */
  readonly stateFile?: string;
  /** @default 90,000 */
  readonly timeoutMs?: number;
}

/**
 * Starts the local runtime in a child process on a free dashboard port, with its own state file,
 * and waits until it has written its state (it is then provisioned and consuming).
 */
export async function startRuntime(options: StartRuntimeOptions): Promise<RuntimeProcess> {
  const dir = options.stateFile ? undefined : await mkdtemp(join(tmpdir(), 'fanin-rt-'));
  const stateFile = options.stateFile ?? join(dir ?? tmpdir(), 'runtime.json');
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      'local/main.ts',
      '--prefix',
      options.prefix,
      '--port',
      '0',
      '--state',
      stateFile,
      ...(options.args ?? []),
    ],
    { cwd: ROOT, env: options.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const deadline = Date.now() + (options.timeoutMs ?? 90_000);
  let ready: RuntimeState | undefined;
  while (!ready) {
    if (child.exitCode !== null) throw new Error(`the runtime exited with ${child.exitCode}:\n${output}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`the runtime did not start in time:\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
    const state = await readState(stateFile).catch(() => undefined);
    // A state file left by an earlier run on the same path is not this runtime's.
    if (state?.pid === child.pid) ready = state;
  }
  return {
    process: child,
    stateFile,
    state: ready,
    output: () => output,
    cli: (args, cliOptions = {}) =>
      runCli(args, {
        env: { ...(cliOptions.env ?? process.env), FANIN_STATE: stateFile },
        timeoutMs: cliOptions.timeoutMs,
      }),
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGINT');
      const code = await exited;
      if (dir) await rm(dir, { recursive: true, force: true });
      return code;
    },
  };
}

/** Runs `node bin/fanin.js ...args` from the repository root. */
export function runCli(
  args: readonly string[],
  options: { env?: NodeJS.ProcessEnv; timeoutMs?: number | undefined } = {},
): Promise<Finished> {
  return runProcess(process.execPath, ['bin/fanin.js', ...args], options);
}

/** Runs a command to its end (in the repository unless `cwd`), collecting its output; kills it after `timeoutMs`. */
export function runProcess(
  command: string,
  args: readonly string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number | undefined } = {},
): Promise<Finished> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, [...args], {
      cwd: options.cwd ?? ROOT,
      env: options.env ?? process.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 120_000);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** Waits until `check` returns a value (not undefined/false), polling; fails after `timeoutMs`. */
export async function eventually<T>(
  check: () => Promise<T | undefined | false>,
  what: string,
  timeoutMs = 30_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined && value !== false) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}
