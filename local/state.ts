import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import type { DefinitionInput } from '../shared/engine/definition.ts';
import type {
  ConsumerSpec,
  Partitioning,
  QueueRole,
  QueueSpec,
  Topology,
} from '../shared/topology/topology.ts';
import type { ResolvedLocalConfig } from './config.ts';
import type { StartedEmulator } from './emulators.ts';
import type { Provisioned } from './provision.ts';

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

/** What {@link runtimeState} records of a runtime that has started. */
export interface RuntimeParts {
  readonly topology: Topology;
  readonly provisioned: Provisioned;
  readonly config: ResolvedLocalConfig;
  readonly responderQueues: readonly QueueRef[];
  readonly region: string;
  /** Variables of which the `AWS_ENDPOINT_URL*` ones (not empty) are recorded. */
  readonly endpoints: Readonly<Record<string, string | undefined>>;
  readonly emulators: readonly StartedEmulator[];
  readonly dashboardUrl: string | null;
}

/** The state of this process's runtime, from what it started and provisioned. */
export function runtimeState(parts: RuntimeParts): RuntimeState {
  const { topology, provisioned, config } = parts;
  const queueRef = (spec: QueueSpec): QueueRef => ({
    name: spec.name,
    url: provisioned.allQueueUrls[spec.name] ?? '',
    dlqName: spec.dlqName,
    dlqUrl: provisioned.allQueueUrls[spec.dlqName] ?? '',
  });
  return {
    version: 1,
    pid: process.pid,
    startedAt: new Date().toISOString(),
    prefix: topology.prefix,
    region: parts.region,
    endpoints: Object.fromEntries(
      Object.entries(parts.endpoints).filter(
        (entry): entry is [string, string] => entry[0].startsWith('AWS_ENDPOINT_URL') && Boolean(entry[1]),
      ),
    ),
    emulators: parts.emulators,
    dashboardUrl: parts.dashboardUrl,
    tableName: provisioned.tableName,
    bucketName: provisioned.bucketName ?? null,
    claimCheckThresholdBytes: config.claimCheckThresholdBytes ?? null,
    queues: Object.fromEntries(
      Object.entries(topology.queues).map(([role, spec]) => [role, queueRef(spec)]),
    ) as Record<QueueRole, QueueRef>,
    replyPartitions: topology.replyPartitions.map(queueRef),
    responderQueues: parts.responderQueues,
    partitioning: topology.partitioning,
    consumers: topology.consumers,
    sweepIntervalSeconds: config.sweepIntervalSeconds ?? topology.sweepIntervalSeconds,
    configFile: config.file,
    definitions: config.definitions,
  };
}

/** Where the state file is unless `--state` or `FANIN_STATE` says otherwise. */
export const DEFAULT_STATE_FILE = '.fanin/runtime.json';

/** The state file path: `explicit`, else `FANIN_STATE`, else {@link DEFAULT_STATE_FILE}, against `cwd`. */
export function stateFilePath(cwd: string, explicit?: string, env: NodeJS.ProcessEnv = process.env): string {
  return resolve(cwd, explicit ?? env.FANIN_STATE ?? DEFAULT_STATE_FILE);
}

/** Writes the state file atomically (a reader never sees half of it). */
export async function writeState(file: string, state: RuntimeState): Promise<void> {
  await mkdir(dirname(file), { recursive: true });
  const temporary = `${file}.${process.pid}.tmp`;
  await writeFile(temporary, `${JSON.stringify(state, null, 2)}\n`);
  await rename(temporary, file);
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

/** Removes the state file if it is still the one this process wrote. */
export async function removeState(file: string, pid = process.pid): Promise<void> {
  const state = await readState(file).catch(() => undefined);
  if (state && state.pid !== pid) return;
  await rm(file, { force: true });
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
