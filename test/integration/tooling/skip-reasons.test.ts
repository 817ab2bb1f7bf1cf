import { mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Finished, ROOT, runProcess } from '../../support/runtime.ts';

/**
 * `npm test`'s default output says why a test was skipped: a scratch suite with one test whose
 * tool is missing (through `requireTool`, as the dashboard's browser test does) and one that
 * passes, run by vitest with the reporters of the repository's vitest.config.ts and no reporter
 * flag, as `npm test` runs it.
 */

let dir: string;
let run: Finished;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'fanin-skips-'));
  await symlink(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  await writeFile(
    join(dir, 'needs-a-widget.test.ts'),
    [
      "import { it } from 'vitest';",
      `import { requireTool } from ${JSON.stringify(join(ROOT, 'test/support/tools.ts'))};`,
      "it('draws with the widget', (context) => {",
      "  if (!requireTool(context, 'widget', 'no widget on the PATH (apt-get install widget)')) return;",
      '});',
      "it('adds', ({ expect }) => expect(1 + 1).toBe(2));",
    ].join('\n'),
  );
  await writeFile(
    join(dir, 'vitest.config.ts'),
    [
      `import repository from ${JSON.stringify(join(ROOT, 'vitest.config.ts'))};`,
      "export default { test: { include: ['*.test.ts'], reporters: repository.test?.reporters } };",
    ].join('\n'),
  );
  const env: NodeJS.ProcessEnv = { ...process.env, CI: '', NO_COLOR: '1' };
  delete env.FANIN_REQUIRE_TOOLS;
  delete env.VITEST;
  delete env.VITEST_WORKER_ID;
  delete env.VITEST_POOL_ID;
  run = await runProcess(process.execPath, [join(ROOT, 'node_modules/vitest/vitest.mjs'), 'run'], {
    cwd: dir,
    env,
    timeoutMs: 120_000,
  });
}, 150_000);
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('npm test: skipped tests', () => {
  it('names the reason a test was skipped in the default output, below the summary', () => {
    const output = `${run.stdout}${run.stderr}`;
    expect(run.code, output).toBe(0);
    expect(output).toMatch(/1 passed \| 1 skipped|1 skipped \| 1 passed|1 passed.*1 skipped/);
    const summary = output.indexOf('Tests ');
    const reason = output.indexOf(
      '1 skipped (needs-a-widget.test.ts): widget: no widget on the PATH (apt-get install widget)',
    );
    expect(reason, output).toBeGreaterThan(summary);
    expect(summary, output).toBeGreaterThan(-1);
  });
});
