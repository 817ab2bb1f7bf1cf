import type { FaninClient } from '../../shared/client/fanin-client.ts';
import { faninClientOf, resolveTarget, type Target } from '../connect.ts';
import { stateFilePath } from '../state.ts';

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

/** Connects a demo process to the runtime of `FANIN_STATE` (or `.fanin/runtime.json`). */
export async function demoProcess(): Promise<DemoProcess> {
  const target = await resolveTarget({ stateFile: stateFilePath(process.cwd()) });
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
