import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { constants as fsConstants } from 'node:fs';
import { access } from 'node:fs/promises';
import { createServer } from 'node:net';
import { delimiter, join } from 'node:path';

/**
 * A server run as a child process on a free loopback port, for the emulators that are not Node
 * (DynamoDB Local's JVM, moto): started under a watchdog so that it never outlives this process,
 * and stopped cleanly on request.
 */

/** The environment a child runs in. */
export type ChildEnv = Readonly<Record<string, string | undefined>>;

/** A server that was started: its name, its base URL on loopback, and how to stop it. */
export interface RunningServer {
  readonly name: string;
  readonly url: string;
  stop(): Promise<void>;
}

/** What to run and how to tell it is ready. */
export interface ChildServerSpec {
  readonly name: string;
  /** Absolute path of the program. */
  readonly command: string;
  readonly args: (port: number) => string[];
  readonly cwd: string | undefined;
  readonly env: ChildEnv;
  readonly timeoutMs: number;
  readonly isReady: (url: string) => Promise<boolean>;
  /** Turns the output of a child that exited early into the error to show; undefined keeps the generic one. */
  readonly explainFailure: (output: string) => Error | undefined;
}

/**
 * Runs as `node -e WATCHDOG -- command ...args`. It starts the server and stops it when its stdin
 * (a pipe from the process that started the emulators) closes, which the kernel does when that
 * process dies for any reason, SIGKILL included. It exits when the server does.
 */
const WATCHDOG = `
const { spawn } = require('node:child_process');
const [command, ...args] = process.argv.slice(1);
const child = spawn(command, args, { stdio: ['ignore', 'inherit', 'inherit'] });
let stopping = false;
const stop = () => {
  if (stopping) return;
  stopping = true;
  child.kill('SIGTERM');
  setTimeout(() => child.kill('SIGKILL'), 5000).unref();
};
process.stdin.on('end', stop).on('error', stop).resume();
for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP']) process.on(signal, stop);
child.on('error', (error) => {
  console.error(String(error));
  process.exit(127);
});
child.on('exit', (code) => process.exit(code ?? 1));
`;

class PortTakenError extends Error {}

/**
 * Starts the server of `spec` on a free loopback port and waits until it answers. A port taken in
 * the meantime is retried with another; any other failure throws with the child's last output.
 */
export async function startChildServer(spec: ChildServerSpec): Promise<RunningServer> {
  // The port is probed free and then handed to the child, so another process can take it in
  // between; the child then exits complaining about the address, and we try another port.
  for (let attempt = 1; ; attempt++) {
    try {
      return await startChildServerOnce(spec, await freeLoopbackPort());
    } catch (error) {
      if (!(error instanceof PortTakenError) || attempt >= 3) throw error;
    }
  }
}

async function startChildServerOnce(spec: ChildServerSpec, port: number): Promise<RunningServer> {
  const url = `http://127.0.0.1:${port}`;
  const watchdog = spawn(process.execPath, ['-e', WATCHDOG, '--', spec.command, ...spec.args(port)], {
    cwd: spec.cwd,
    env: spec.env,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const output = tail(watchdog);
  // Closing stdin of a watchdog that already died fails with EPIPE, which is nothing to report.
  watchdog.stdin.on('error', () => {});
  const stop = once(() => terminate(watchdog));

  // Set from event handlers while the loop below polls.
  const state: { spawnError: Error | undefined; exited: boolean } = { spawnError: undefined, exited: false };
  watchdog.once('error', (error) => {
    state.spawnError = error;
  });
  watchdog.once('exit', () => {
    state.exited = true;
  });

  const deadline = Date.now() + spec.timeoutMs;
  while (true) {
    if (state.spawnError !== undefined || state.exited) {
      await stop();
      const text = output();
      if (/address already in use|BindException|port is in use/i.test(text)) {
        throw new PortTakenError(`${spec.name}: port ${port} taken`);
      }
      const reason = state.spawnError
        ? `failed to start: ${state.spawnError.message}`
        : `exited with code ${watchdog.exitCode}`;
      throw spec.explainFailure(text) ?? new Error(`${spec.name} (${spec.command}) ${reason}\n${text}`);
    }
    if (await spec.isReady(url)) break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`${spec.name} did not answer on ${url} within ${spec.timeoutMs} ms\n${output()}`);
    }
    await sleep(50);
  }
  return { name: spec.name, url, stop };
}

/** Keeps the last few KB of a child's output, for error messages; reading also keeps its pipes from filling. */
function tail(child: ChildProcessWithoutNullStreams): () => string {
  let text = '';
  const append = (chunk: Buffer): void => {
    text = (text + chunk.toString('utf8')).slice(-4_000);
  };
  child.stdout.on('data', append);
  child.stderr.on('data', append);
  return () => text.trim();
}

async function terminate(watchdog: ChildProcessWithoutNullStreams): Promise<void> {
  if (watchdog.exitCode !== null || watchdog.signalCode !== null || watchdog.pid === undefined) return;
  const exited = new Promise<void>((resolve) => watchdog.once('exit', () => resolve()));
  // Closing the pipe is the very signal the watchdog gets when this process dies.
  watchdog.stdin.end();
  // The watchdog itself escalates to SIGKILL on the server after 5 s; this is the backstop.
  const backstop = setTimeout(() => watchdog.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(backstop);
}

async function freeLoopbackPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('could not probe a free port');
  return address.port;
}

/** The first executable `command` on the `PATH` of `env`. */
export async function findOnPath(command: string, env: ChildEnv): Promise<string | undefined> {
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (dir === '') continue;
    const candidate = join(dir, command);
    if (await isExecutable(candidate)) return candidate;
  }
  return undefined;
}

/** Whether `path` exists and may be executed. */
export async function isExecutable(path: string): Promise<boolean> {
  try {
    await access(path, fsConstants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** `fn` run at most once: later calls return the first call's promise. */
export function once(fn: () => Promise<void>): () => Promise<void> {
  let result: Promise<void> | undefined;
  return () => {
    result ??= fn();
    return result;
  };
}

/** The HTTP status `url` answers with within a second; undefined when it does not answer. */
export async function httpStatus(url: string, init: RequestInit): Promise<number | undefined> {
  try {
    const response = await fetch(url, { ...init, signal: AbortSignal.timeout(1_000) });
    await response.body?.cancel();
    return response.status;
  } catch {
    return undefined;
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
