import { randomBytes } from 'node:crypto';
import { access, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runProcess, startRuntime } from '../../support/runtime.ts';

/**
 * The runtime's life cycle: one per state file, Ctrl-C stops it cleanly, and a restart against an
 * endpoint that kept its state (here the test emulators, standing in for LocalStack) resumes:
 * provisioning is idempotent and open aggregates are still there.
 */
describe('local runtime life cycle', () => {
  const prefix = `rt-${Date.now().toString(36)}-${randomBytes(2).toString('hex')}`;
  let dir: string | undefined;
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('refuses a second runtime on the same state file, stops on SIGINT and resumes on restart', async () => {
    // Prepare
    dir = await mkdtemp(join(tmpdir(), 'fanin-life-'));
    const stateFile = join(dir, 'runtime.json');
    const first = await startRuntime({ prefix, stateFile, args: ['--quiet'] });
    // The state file (what startRuntime waits for) is written just before the banner is printed.
    await expect
      .poll(() => first.output(), { timeout: 10_000 })
      .toMatch(/fanin is running \(prefix "rt-[\w-]+", 2 reply partitions\)/);
    const snapshot = (await (await fetch(`${first.state.dashboardUrl}api/snapshot`)).json()) as {
      prefix: string;
    };
    expect(snapshot.prefix).toBe(prefix);
    expect((await first.cli(['send', 'order-approval', '--aggregate-id', 'survivor'])).code).toBe(0);
    await expect
      .poll(async () => (await first.cli(['show', 'survivor', '--json'])).code, { timeout: 30_000 })
      .toBe(0);

    // Act
    const second = await runProcess(
      process.execPath,
      ['--import', 'tsx', 'local/main.ts', '--prefix', prefix, '--port', '0', '--state', stateFile],
      { timeoutMs: 60_000 },
    );
    const stopped = await first.stop();
    const stateAfterStop = await access(stateFile).then(
      () => 'exists',
      () => 'removed',
    );
    const restarted = await startRuntime({ prefix, stateFile, args: ['--quiet'] });
    const shown = await restarted.cli(['show', 'survivor', '--json']);
    const completed = await restarted.cli(['complete', '--aggregate-id', 'survivor', '--wait', '--json']);
    const restartStopped = await restarted.stop();

    // Assess
    expect(second.code).toBe(1);
    expect(second.stderr).toContain(`a runtime is already running (pid ${first.state.pid}`);
    expect(stopped).toBe(0);
    expect(first.output()).toContain('SIGINT: stopping');
    expect(first.output()).toMatch(/stopped\s*$/);
    expect(stateAfterStop).toBe('removed');
    expect(restarted.output()).toContain('no emulators started');
    expect(JSON.parse(shown.stdout)).toMatchObject({ aggregateId: 'survivor', status: 'open' });
    expect(JSON.parse(completed.stdout)).toMatchObject({
      closed: [{ aggregateId: 'survivor', outcome: 'completed' }],
    });
    expect(restartStopped).toBe(0);
  }, 240_000);
});
