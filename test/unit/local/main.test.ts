import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

/**
 * `npm start`'s command line (local/main.ts) reads its options as `npx fanin` does (commander):
 * the same usage errors with exit code 2, the same suggestions, an optional `--demo` value. Each
 * case here ends before the runtime starts anything.
 */
function start(...args: string[]) {
  const run = spawnSync(process.execPath, ['--import', 'tsx', 'local/main.ts', ...args], {
    encoding: 'utf8',
    timeout: 30_000,
  });
  return { code: run.status, out: run.stdout, err: run.stderr };
}

describe('npm start options', () => {
  it('suggests the option meant by a misspelt one and exits 2, as fanin does', () => {
    const { code, err } = start('--prot', '1');
    expect(code).toBe(2);
    expect(err).toContain("unknown option '--prot'");
    expect(err).toContain('Did you mean --port?');
  });

  it('refuses a demo it does not have, naming the ones it has', () => {
    const { code, err } = start('--demo', 'nope');
    expect(code).toBe(2);
    expect(err).toContain('Allowed choices are loan, auction, all');
  });

  it('refuses a dashboard port outside 0-65535', () => {
    const { code, err } = start('--port', '70000');
    expect(code).toBe(2);
    expect(err).toContain('must be 0-65535 (given "70000")');
  });

  it('prints its help with every option and exits 0', () => {
    const { code, out } = start('--help');
    expect(code).toBe(0);
    for (const option of [
      '--demo [name]',
      '--config <file>',
      '--prefix <prefix>',
      '--port <n>',
      '--no-dashboard',
      '--state <file>',
      '--quiet',
    ])
      expect(out).toContain(option);
  });
});
