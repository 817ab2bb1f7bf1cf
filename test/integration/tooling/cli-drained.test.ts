import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RuntimeProcess, startRuntime } from '../../support/runtime.ts';

/**
 * The local runtime and the CLI with a reply partition drained on a schedule
 * (`replyDrainIntervalSeconds`): the start warns as the construct does at synth, and `partitions`
 * says which partition is drained.
 */
const prefix = `clidrain-${Date.now().toString(36)}-${randomBytes(2).toString('hex')}`;
let dir: string;
let runtime: RuntimeProcess;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'fanin-cli-drained-'));
  const config = join(dir, 'fanin.config.json');
  await writeFile(
    config,
    JSON.stringify({
      replyPartitions: 2,
      replyDrainIntervalSeconds: [0, 60],
      definitions: [
        // Its own deadline is long, but a request may ask for 30 s: under twice the 60 s drain.
        {
          name: 'asks-short',
          fanOut: { type: 'none' },
          completion: { strategy: 'all' },
          timeoutSeconds: 600,
          requestParameters: { timeoutSeconds: { min: 30, max: 600 } },
        },
        { name: 'patient', fanOut: { type: 'none' }, completion: { strategy: 'all' }, timeoutSeconds: 600 },
      ],
    }),
  );
  runtime = await startRuntime({ prefix, args: ['--config', config, '--no-dashboard'] });
}, 120_000);
afterAll(async () => {
  expect(await runtime.stop()).toBe(0);
  await rm(dir, { recursive: true, force: true });
}, 60_000);

describe('a drained reply partition, locally', () => {
  it('the start warns of a definition whose shortest deadline a request may ask for is within twice the drain interval, as the construct does at synth (mutant local-drain-warning)', async () => {
    // Act: the warning is printed with the banner.
    const until = Date.now() + 20_000;
    while (!runtime.output().includes('Ctrl-C stops.') && Date.now() < until) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }

    // Assess
    const output = runtime.output();
    expect(output).toContain(
      'fanin: warning (fanin:timeoutWithinDrainInterval): definitions ["asks-short"] may time out in less than twice the longest reply drain interval (60 s)',
    );
  });

  it('partitions shows which partition is drained on a schedule (mutant cli-partitions-drained)', async () => {
    // Act
    const human = await runtime.cli(['partitions']);
    const machine = await runtime.cli(['partitions', '--json']);

    // Assess
    expect(human.code).toBe(0);
    const rows = human.stdout.split('\n');
    expect(rows[0]).toContain('CONSUMED');
    expect(rows.find((r) => r.startsWith(`0 ${prefix}-reply-0`))).toContain('as replies arrive');
    expect(rows.find((r) => r.startsWith(`1 ${prefix}-reply-1`))).toContain('drained on a schedule');
    expect(machine.code).toBe(0);
    expect(JSON.parse(machine.stdout).partitions).toMatchObject([
      { index: 0, drained: false },
      { index: 1, drained: true },
    ]);
  });
});
