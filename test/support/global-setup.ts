import type { TestProject } from 'vitest/node';
import { startEmulators } from '../../local/emulators.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Why no EventBridge endpoint exists for this run; empty when one does. */
    faninEventBridgeUnavailableReason: string;
  }
}

/** Set to `1` for the test workers when an EventBridge endpoint exists; read by `eventbridge.ts`. */
const EVENTBRIDGE_FLAG = 'FANIN_TEST_EVENTBRIDGE';

/**
 * Global setup of the `integration` project: starts the emulators (or, with `AWS_ENDPOINT_URL`
 * set, nothing) and points the test workers at them through the environment. Vitest copies this
 * process's environment into each worker when it starts the project's workers, which happens
 * after global setup.
 *
 * @returns the teardown, which stops the emulators and restores the environment
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const startedAt = performance.now();
  const emulators = await startEmulators();
  const elapsedMs = Math.round(performance.now() - startedAt);

  if (emulators.started.length === 0) {
    const endpoint = process.env.AWS_ENDPOINT_URL;
    // Fail once, clearly, rather than in every test with ECONNREFUSED after the SDK's retries.
    if (endpoint !== undefined && !(await answers(endpoint))) {
      throw new Error(`AWS_ENDPOINT_URL=${endpoint} does not answer: is LocalStack running?`);
    }
    console.log(`[integration] no emulators started; using ${endpoint ?? 'AWS_ENDPOINT_URL_<SERVICE>'}`);
  } else {
    const where = emulators.started.map(({ name, url }) => `${name} ${url}`).join(', ');
    console.log(`[integration] emulators ready in ${elapsedMs} ms: ${where}`);
  }
  if (!emulators.eventBridgeAvailable) {
    console.warn(
      `\n[integration] !!! EventBridge tests will NOT run: ${emulators.eventBridgeUnavailableReason}\n`,
    );
  }

  const restoreEnv = setEnv({
    ...emulators.env,
    [EVENTBRIDGE_FLAG]: emulators.eventBridgeAvailable ? '1' : undefined,
  });
  project.provide('faninEventBridgeUnavailableReason', emulators.eventBridgeUnavailableReason ?? '');

  return async () => {
    await emulators.stop();
    // In watch mode setup runs again in this process; stale endpoints would stop it starting anything.
    restoreEnv();
  };
}

/** Sets (or, for undefined, removes) variables in process.env; returns a function that undoes it. */
function setEnv(variables: Record<string, string | undefined>): () => void {
  const previous = Object.keys(variables).map((name) => [name, process.env[name]] as const);
  const apply = (entries: ReadonlyArray<readonly [string, string | undefined]>): void => {
    for (const [name, value] of entries) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  };
  apply(Object.entries(variables));
  return () => apply(previous);
}

async function answers(url: string): Promise<boolean> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(5_000) });
    await response.body?.cancel();
    return true;
  } catch {
    return false;
  }
}
