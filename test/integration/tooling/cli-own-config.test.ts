import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RuntimeProcess, startRuntime } from '../../support/runtime.ts';

/**
 * The CLI against a runtime started on a user's own configuration (not the repository's
 * fanin.config.ts): what it suggests and shows must come from that configuration and that table.
 */
const prefix = `cliown-${Date.now().toString(36)}-${randomBytes(2).toString('hex')}`;
let dir: string;
let runtime: RuntimeProcess;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'fanin-cli-own-'));
  const config = join(dir, 'fanin.config.json');
  await writeFile(
    config,
    JSON.stringify({
      replyPartitions: 2,
      definitions: [
        {
          name: 'ledger',
          mode: 'self-starting',
          correlation: { source: 'attribute', name: 'account' },
          completion: { strategy: 'count', count: 3 },
          timeoutSeconds: 600,
        },
        // Replies that come before their request are held for ten minutes, not reported unknown.
        {
          name: 'tally',
          fanOut: { type: 'none' },
          completion: { strategy: 'all' },
          timeoutSeconds: 600,
          unknownTimeoutSeconds: 600,
        },
      ],
    }),
  );
  runtime = await startRuntime({ prefix, args: ['--config', config, '--no-dashboard'] });
}, 120_000);
afterAll(async () => {
  expect(await runtime.stop()).toBe(0);
  await rm(dir, { recursive: true, force: true });
}, 60_000);

describe('the CLI on a configuration of its own', () => {
  it("the start banner suggests a request to one of the configuration's definitions, not the example's loan-broker", async () => {
    // Act: the banner is printed once the runtime is provisioned.
    const until = Date.now() + 20_000;
    while (!runtime.output().includes('Ctrl-C stops.') && Date.now() < until) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }

    // Assess: `ledger` is self-starting (nothing to send a request to); `tally` takes requests.
    const banner = runtime.output();
    expect(banner).toContain("try:  npx fanin send tally --payload '{}' --wait");
    expect(banner).not.toContain('loan-broker');
  });

  it('show of an aggregate not opened yet lists the replies held for it', async () => {
    // Arrange: a reply to `tally-early` before any request opened it.
    const sent = await runtime.cli([
      'reply',
      '--aggregate-id',
      'tally-early',
      '--reply-id',
      'r-1',
      '--definition',
      'tally',
      '--body',
      '{"n":7}',
    ]);
    expect(sent.code).toBe(0);

    // Act: once the reply function has held it.
    let shown = await runtime.cli(['show', 'tally-early', '--json']);
    const until = Date.now() + 20_000;
    while (shown.code !== 0 && Date.now() < until) {
      await new Promise((resolve) => setTimeout(resolve, 300));
      shown = await runtime.cli(['show', 'tally-early', '--json']);
    }
    const human = await runtime.cli(['show', 'tally-early']);

    // Assess
    expect(shown.code).toBe(0);
    expect(JSON.parse(shown.stdout)).toMatchObject({
      aggregateId: 'tally-early',
      status: 'not opened',
      held: [{ replyId: 'r-1', body: { n: 7 } }],
    });
    expect(human.code).toBe(0);
    expect(human.stdout).toContain('not opened yet; 1 unknown replies held for it');
    expect(human.stdout).toMatch(/r-1 {2}due \d{4}-/);
  });

  it('show of an aggregate nobody wrote to is still "no aggregate", exit 1', async () => {
    // Act
    const shown = await runtime.cli(['show', 'tally-never']);

    // Assess
    expect(shown.code).toBe(1);
    expect(shown.stderr).toContain('no aggregate "tally-never"');
  });

  it('send --wait of a request fanin refuses reports the refusal from the error output, at once, exit 1 (mutant cli-send-wait-refusal)', async () => {
    // Act: strategy "all" without fan-out needs `expected`; this request has none.
    const started = Date.now();
    const sent = await runtime.cli([
      'send',
      'tally',
      '--aggregate-id',
      'tally-refused',
      '--request-id',
      'r-refused',
      '--wait',
      '--timeout',
      '40',
    ]);
    const took = Date.now() - started;
    const tailed = await runtime.cli(['tail', 'error', '--json']);

    // Assess: the reason, not "not opened yet", well before the 40 s timeout.
    expect(sent.code).toBe(1);
    expect(sent.stderr).toContain('request r-refused (aggregate tally-refused) was refused');
    expect(sent.stderr).toContain('body.expected must be a non-negative integer for strategy "all"');
    expect(sent.stderr).not.toContain('not opened yet');
    expect(took).toBeLessThan(30_000);
    // Read, not taken: the error output still has it.
    expect(tailed.stdout).toContain('tally-refused');
  }, 60_000);

  it('set-parameters the control handler refuses prints its reason, exit 1 (mutant cli-set-parameters-refusal); a timeout beyond the bound is a usage error before anything is sent', async () => {
    // Act: strategy "all" has no count to set.
    const refused = await runtime.cli(['set-parameters', 'tally', '--count', '2']);
    const tooLong = await runtime.cli(['set-parameters', 'tally', '--timeout-seconds', '99999999999']);

    // Assess
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('has no count to set');
    expect(refused.stderr).toContain('refused to');
    expect(refused.stdout).not.toContain('not applied yet');
    expect(tooLong.code).toBe(2);
    expect(tooLong.stderr).toContain('--timeout-seconds must be an integer from 1 to 31536000');
  }, 60_000);
});
