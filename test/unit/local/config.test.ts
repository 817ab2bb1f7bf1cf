import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigFileError, loadLocalConfig } from '../../../local/config.ts';

/** `npm start`'s configuration file: what it takes is what the local topology is described with. */
describe('local configuration file', () => {
  const dir = mkdtempSync(join(tmpdir(), 'fanin-config-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const file = (name: string, config: unknown): string => {
    const path = join(dir, name);
    writeFileSync(path, JSON.stringify(config));
    return path;
  };
  const definitions = [{ name: 'd', completion: { strategy: 'all' } }];

  it('passes the reply batching window and the reply concurrency on, per partition or for all', async () => {
    // Kills the mutant "the local runtime drops replyBatchingWindowSeconds and refuses replyConcurrency"
    // (both are accepted by the construct; the local file refused one and ignored the other).
    const perPartition = await loadLocalConfig(
      file('per-partition.json', {
        replyPartitions: 2,
        replyBatchingWindowSeconds: [0, 2],
        replyConcurrency: [10, 5],
        replyBatchSize: [10, 200],
        replyDrainIntervalSeconds: [0, 0],
        definitions,
      }),
    );
    expect(perPartition).toMatchObject({
      replyBatchingWindowSeconds: [0, 2],
      replyConcurrency: [10, 5],
      replyBatchSize: [10, 200],
      replyDrainIntervalSeconds: [0, 0],
    });
    const drained = await loadLocalConfig(
      file('drained.json', { replyDrainIntervalSeconds: 60, definitions }),
    );
    expect(drained).toMatchObject({ replyDrainIntervalSeconds: 60 });
    const forAll = await loadLocalConfig(
      file('for-all.json', { replyBatchingWindowSeconds: 1, replyConcurrency: 20, definitions }),
    );
    expect(forAll).toMatchObject({ replyBatchingWindowSeconds: 1, replyConcurrency: 20 });
  });

  it('leaves them to the topology defaults when absent', async () => {
    const config = await loadLocalConfig(file('plain.json', { definitions }));
    expect(config).not.toHaveProperty('replyBatchingWindowSeconds');
    expect(config).not.toHaveProperty('replyConcurrency');
    expect(config).not.toHaveProperty('replyBatchSize');
    expect(config).not.toHaveProperty('replyDrainIntervalSeconds');
  });

  it('refuses an unknown field, naming the file and the field', async () => {
    const path = file('typo.json', { replyConcurency: 20, definitions });
    await expect(loadLocalConfig(path)).rejects.toThrow(ConfigFileError);
    await expect(loadLocalConfig(path)).rejects.toThrow(/typo\.json.*replyConcurency/);
  });
});
