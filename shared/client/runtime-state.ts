import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { DefinitionInput } from '../engine/definition.ts';
import type { ConsumerSpec, Partitioning, QueueRole } from '../topology/topology.ts';

/**
 * The local runtime's state file (`.fanin/runtime.json`) as its readers see it: the CLI, the
 * demos' processes and the client library find the runtime through it. The runtime writes it
 * (local/state.ts).
 */

/**
 * The running local runtime, as `.fanin/runtime.json` records it: where every resource is and how
 * to reach it. The CLI (`npx fanin ...`) and the demos' processes read it; `npx fanin endpoints
 * --json` prints it. The runtime removes it when it stops.
 */
export interface RuntimeState {
  readonly version: 1;
  /** The runtime's process id (a second start refuses while it is alive). */
  readonly pid: number;
  readonly startedAt: string;
  readonly prefix: string;
  readonly region: string;
  /**
   * The AWS SDK endpoint settings the runtime used (`AWS_ENDPOINT_URL`, `AWS_ENDPOINT_URL_<SERVICE>`),
   * so a CLI or a demo process reaches the same services. Empty when the runtime used AWS itself.
   */
  readonly endpoints: Readonly<Record<string, string>>;
  /** Emulators the runtime started itself (in memory: gone when it stops); empty with LocalStack. */
  readonly emulators: readonly StartedEmulator[];
  readonly dashboardUrl: string | null;
  readonly tableName: string;
  readonly bucketName: string | null;
  readonly claimCheckThresholdBytes: number | null;
  readonly queues: Readonly<Record<QueueRole, QueueRef>>;
  readonly replyPartitions: readonly QueueRef[];
  /** The responder queues created for the demos (`<prefix>-bank-1`, ...). */
  readonly responderQueues: readonly QueueRef[];
  readonly partitioning: Partitioning;
  readonly consumers: Readonly<Record<string, ConsumerSpec>>;
  readonly sweepIntervalSeconds: number;
  readonly configFile: string;
  readonly definitions: readonly DefinitionInput[];
}

/** A queue and its dead-letter queue. */
export interface QueueRef {
  readonly name: string;
  readonly url: string;
  readonly dlqName: string;
  /** Undefined when the DLQ could not be found (a deployed stack without one). */
  readonly dlqUrl?: string;
}

/** Where the state file is unless `--state` or `FANIN_STATE` says otherwise. */
export const DEFAULT_STATE_FILE = '.fanin/runtime.json';

/** The state file path: `explicit`, else `FANIN_STATE`, else {@link DEFAULT_STATE_FILE}, against `cwd`. */
export function stateFilePath(cwd: string, explicit?: string, env: NodeJS.ProcessEnv = process.env): string {
  return resolve(cwd, explicit ?? env.FANIN_STATE ?? DEFAULT_STATE_FILE);
}

/** Reads the state file; undefined when there is none. */
export async function readState(file: string): Promise<RuntimeState | undefined> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  const state = JSON.parse(text) as RuntimeState;
  if (state.version !== 1) throw new Error(`${file} has an unknown version (${String(state.version)})`);
  return state;
}

/** True when a process with this id exists (signal 0 checks without signalling). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** An emulator the local runtime started, as its state file records it. */
export interface StartedEmulator {
  /** `fauxqs`, `dynamodb-local` or `moto`. */
  readonly name: string;
  /** Base URL on the loopback interface. */
  readonly url: string;
}
