import { faninClientOf, resolveTarget, type Target } from '../../shared/client/connect.ts';
import type { FaninClient } from '../../shared/client/fanin-client.ts';
import { readState, stateFilePath } from '../../shared/client/runtime-state.ts';

/**
 * What every demo process shares: it finds the local runtime through the state file (as the CLI
 * does), talks to it only through the {@link FaninClient}, and stops on SIGTERM or SIGINT.
 */
export interface DemoProcess {
  readonly target: Target;
  readonly client: FaninClient;
  /** True once the process was asked to stop. */
  stopping(): boolean;
  /** Resolves after `ms`, or at once when the process is asked to stop. */
  sleep(ms: number): Promise<void>;
  /** Tells the parent (the demo runner) something, when there is one. */
  tell(message: Record<string, unknown>): void;
}

/**
 * Connects a demo process to the runtime of `FANIN_STATE` (or `.fanin/runtime.json`). Launched by
 * the runtime (`FANIN_RUNTIME_PID` set), it first waits for that runtime to have written its
 * state: the demo's processes load while the emulators start.
 */
export async function demoProcess(): Promise<DemoProcess> {
  const stateFile = stateFilePath(process.cwd());
  const runtimePid = Number(process.env.FANIN_RUNTIME_PID ?? 0);
  const deadline = Date.now() + 180_000;
  while (runtimePid > 0 && (await readState(stateFile).catch(() => undefined))?.pid !== runtimePid) {
    if (Date.now() > deadline || !process.connected) {
      console.error(`the runtime (pid ${runtimePid}) did not write ${stateFile}`);
      process.exit(1);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const target = await resolveTarget({ stateFile });
  let stop = false;
  const wakers = new Set<() => void>();
  const onSignal = () => {
    stop = true;
    for (const wake of wakers) wake();
  };
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
  // A parent that dies leaves the IPC channel closed: stop rather than run on as an orphan.
  process.once('disconnect', onSignal);
  return {
    target,
    client: faninClientOf(target),
    stopping: () => stop,
    sleep: (ms) =>
      new Promise((resolve) => {
        if (stop) return resolve();
        const done = () => {
          clearTimeout(timer);
          wakers.delete(done);
          resolve();
        };
        const timer = setTimeout(done, ms);
        wakers.add(done);
      }),
    tell: (message) => {
      if (process.connected) process.send?.(message);
    },
  };
}

/** A uniformly random number in [min, max). */
export function between(min: number, max: number): number {
  return min + Math.random() * (max - min);
}
