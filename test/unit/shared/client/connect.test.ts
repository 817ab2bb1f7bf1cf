import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { AwsClients } from '../../../../shared/aws/clients.ts';
import {
  connectionOf,
  queueUrl,
  resolveTarget,
  runtimeConfigOf,
  TargetNotFoundError,
  targetFromState,
} from '../../../../shared/client/connect.ts';
import type { QueueRef, RuntimeState } from '../../../../shared/client/runtime-state.ts';
import { resolvePartitioning } from '../../../../shared/topology/topology.ts';
import { world } from '../adapters/support.ts';

/**
 * Finding the target of the CLI and the demos' processes: the local runtime through its state file
 * (none, or one left by a runtime that died, is said plainly), the connection its state records
 * (its endpoints, its region and dummy credentials only where the environment has none), and the
 * handlers' configuration of a target. Local I/O in a temporary directory and the SQS model; the
 * stack path (GetQueueUrl and ListQueues on AWS) is the tooling integration tests'.
 */

function stateOf(w: ReturnType<typeof world>, fields: Partial<RuntimeState> = {}): RuntimeState {
  const ref = (name: string): QueueRef => ({ name, url: w.models.sqs.urlOf(name), dlqName: `${name}-dlq` });
  const queues = Object.fromEntries(
    Object.entries(w.topology.queues).map(([role, spec]) => [role, ref(spec.name)]),
  ) as RuntimeState['queues'];
  return {
    version: 1,
    pid: process.pid,
    startedAt: '2026-01-01T00:00:00.000Z',
    prefix: 'unit',
    region: 'eu-central-1',
    endpoints: {
      AWS_ENDPOINT_URL: 'http://127.0.0.1:4566',
      AWS_ENDPOINT_URL_DYNAMODB: 'http://127.0.0.1:8000',
    },
    emulators: [{ name: 'fauxqs', url: 'http://127.0.0.1:4566' }],
    dashboardUrl: null,
    tableName: w.topology.tableName,
    bucketName: 'unit-payloads',
    claimCheckThresholdBytes: 1000,
    queues,
    replyPartitions: w.topology.replyPartitions.map((p) => ref(p.name)),
    responderQueues: [],
    partitioning: resolvePartitioning({}),
    consumers: {},
    sweepIntervalSeconds: 60,
    configFile: 'fanin.config.ts',
    definitions: [],
    ...fields,
  };
}

async function stateFile(state: RuntimeState | undefined): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'fanin-connect-'));
  const file = join(dir, 'runtime.json');
  if (state) await writeFile(file, JSON.stringify(state));
  return file;
}

describe('connectionOf', () => {
  it('takes the endpoints the runtime used, its region and dummy credentials for its own emulators', () => {
    // Act
    const connection = connectionOf(stateOf(world()), {});

    // Assess
    expect(connection).toEqual({
      endpoints: {
        SQS: 'http://127.0.0.1:4566',
        DYNAMODB: 'http://127.0.0.1:8000',
        S3: 'http://127.0.0.1:4566',
        EVENTBRIDGE: 'http://127.0.0.1:4566',
      },
      region: 'eu-central-1',
      credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    });
  });

  it('leaves the region and credentials to the environment when it names them, and to the chain without emulators', () => {
    // Act
    const named = connectionOf(stateOf(world()), { AWS_REGION: 'us-east-2', AWS_ACCESS_KEY_ID: 'AKIA' });
    const localstack = connectionOf(stateOf(world(), { emulators: [] }), {});

    // Assess
    expect(named.region).toBeUndefined();
    expect(named.credentials).toBeUndefined();
    expect(localstack.credentials).toBeUndefined();
  });
});

describe('resolveTarget (local runtime)', () => {
  it('says there is no local runtime when the state file does not exist', async () => {
    // Prepare
    const file = await stateFile(undefined);

    // Act
    const error = await resolveTarget({ stateFile: file }).catch((e: unknown) => e);

    // Assess
    expect(error).toBeInstanceOf(TargetNotFoundError);
    expect((error as Error).message).toContain(`${file} does not exist`);
  });

  it('says the recorded runtime is not running when its process is gone', async () => {
    // Prepare
    const file = await stateFile(stateOf(world(), { pid: 2 ** 30 }));

    // Act
    const error = await resolveTarget({ stateFile: file }).catch((e: unknown) => e);

    // Assess
    expect(error).toBeInstanceOf(TargetNotFoundError);
    expect((error as Error).message).toContain('is not running');
  });

  it('gives the target a running runtime records, with clients on its endpoints, sending nothing', async () => {
    // Prepare
    const w = world();
    const file = await stateFile(stateOf(w));

    // Act
    const target = await resolveTarget({ stateFile: file });

    // Assess
    expect(target).toMatchObject({
      kind: 'local',
      prefix: 'unit',
      tableName: w.topology.tableName,
      bucketName: 'unit-payloads',
    });
    expect(await target.clients.sqs.config.endpoint?.()).toMatchObject({ hostname: '127.0.0.1', port: 4566 });
    expect(await target.clients.dynamoDb.config.endpoint?.()).toMatchObject({ port: 8000 });
    target.clients.destroy();
  });
});

describe('runtimeConfigOf', () => {
  it('gives the handlers’ configuration of a target: the queue URLs by role, the reply partitions, the bucket', () => {
    // Prepare
    const w = world();
    const state = stateOf(w);
    const target = targetFromState(state, w.clients as unknown as AwsClients);

    // Act
    const config = runtimeConfigOf(target);

    // Assess
    expect(config.queueUrls.ingress).toBe(state.queues.ingress.url);
    expect(config.replyQueueUrls).toEqual(state.replyPartitions.map((p) => p.url));
    expect(config).toMatchObject({
      tableName: w.topology.tableName,
      bucketName: 'unit-payloads',
      claimCheckThresholdBytes: 1000,
    });
    expect(target.partitioningSource).toBe('the local runtime');
  });
});

describe('queueUrl', () => {
  it('gives a queue’s URL, and undefined for a queue that does not exist', async () => {
    // Prepare
    const w = world();

    // Act / Assess
    expect(await queueUrl(w.clients.sqs, w.topology.queues.ingress.name)).toBe(w.storage.queueUrls.ingress);
    expect(await queueUrl(w.clients.sqs, 'no-such-queue')).toBeUndefined();
  });
});
