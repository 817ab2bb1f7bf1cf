import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { StartedEmulator } from '../shared/client/runtime-state.ts';
import { type QueueRef, type RuntimeState, readState } from '../shared/client/runtime-state.ts';
import type { QueueRole, QueueSpec, Topology } from '../shared/topology/topology.ts';
import type { ResolvedLocalConfig } from './config.ts';
import type { Provisioned } from './provision.ts';

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

/** Writes the state file atomically (a reader never sees half of it). */
export async function writeState(file: string, state: RuntimeState): Promise<void> {
  await mkdir(dirname(file), { recursive: true });
  const temporary = `${file}.${process.pid}.tmp`;
  await writeFile(temporary, `${JSON.stringify(state, null, 2)}\n`);
  await rename(temporary, file);
}

/** Removes the state file if it is still the one this process wrote. */
export async function removeState(file: string, pid = process.pid): Promise<void> {
  const state = await readState(file).catch(() => undefined);
  if (state && state.pid !== pid) return;
  await rm(file, { force: true });
}
