import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { removeState, writeState } from '../../../local/state.ts';
import { readState } from '../../../shared/client/runtime-state.ts';
import { localWorld } from './world.ts';

/**
 * The state file the local runtime writes (`.fanin/runtime.json`), in a temporary directory: what
 * it records of the provisioned topology (every queue with its DLQ, the endpoint settings only,
 * the definitions), written whole, and removed only by the process that wrote it.
 */
describe('the runtime state', () => {
  it('records every queue and reply partition with its DLQ, and only the AWS_ENDPOINT_URL settings that are set', async () => {
    const { state, topology, provisioned } = await localWorld();

    expect(state).toMatchObject({
      version: 1,
      pid: process.pid,
      prefix: 'w',
      tableName: 'w-state',
      region: 'us-east-1',
    });
    expect(state.endpoints).toEqual({ AWS_ENDPOINT_URL: 'http://127.0.0.1:4566' });
    expect(state.queues.ingress).toEqual({
      name: 'w-ingress',
      url: provisioned.queueUrls.ingress,
      dlqName: 'w-ingress-dlq',
      dlqUrl: provisioned.allQueueUrls['w-ingress-dlq'],
    });
    expect(state.replyPartitions.map((p) => p.url)).toEqual(provisioned.replyQueueUrls);
    expect(state.definitions.map((d) => d.name)).toEqual(['quotes', 'orders', 'survey', 'auction']);
    expect(state.sweepIntervalSeconds).toBe(topology.sweepIntervalSeconds);
    expect(Date.parse(state.startedAt)).not.toBeNaN();
  });

  it('is written whole to a new directory and read back as it was', async () => {
    const { state } = await localWorld();
    const file = join(await mkdtemp(join(tmpdir(), 'fanin-state-')), '.fanin', 'runtime.json');

    await writeState(file, state);

    expect(await readState(file)).toEqual(state);
    expect((await readFile(file, 'utf8')).endsWith('}\n')).toBe(true);
  });

  it('is removed by the process that wrote it, and left alone by another', async () => {
    const { state } = await localWorld();
    const file = join(await mkdtemp(join(tmpdir(), 'fanin-state-')), 'runtime.json');
    await writeState(file, state);

    await removeState(file, process.pid + 1);
    expect(await readState(file)).toBeDefined();
    await removeState(file);
    await expect(readFile(file)).rejects.toThrow();
  });

  it('removes a file it cannot read', async () => {
    const file = join(await mkdtemp(join(tmpdir(), 'fanin-state-')), 'runtime.json');
    await writeFile(file, '{ not json');
    await removeState(file);
    await expect(readFile(file)).rejects.toThrow();
  });
});
