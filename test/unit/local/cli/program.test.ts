import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { buildProgram, run, USAGE_EXIT_CODE } from '../../../../local/cli/program.ts';
import { ALL } from '../../../../local/cli/specs.ts';
import packageJson from '../../../../package.json' with { type: 'json' };

/**
 * The `fanin` program's own fast test, in this process: commander's parsing of every command line
 * that is wrong (exit 2, `error: ...`, "Did you mean", a pointer to --help), --help and --version
 * (exit 0), global options before or after the command, and a command's usage error turned into
 * exit 2 (docs/cli.md, exit codes). Nothing here reaches a runtime: each line fails or ends before
 * a command asks for its target. test/integration/tooling/cli.test.ts runs the CLI as a process.
 */

let stdout: string;
let stderr: string;
beforeEach(() => {
  stdout = '';
  stderr = '';
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    stdout += String(chunk);
    return true;
  });
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    stderr += String(chunk);
    return true;
  });
  vi.spyOn(console, 'error').mockImplementation((...parts: unknown[]) => {
    stderr += `${parts.join(' ')}\n`;
  });
});
afterEach(() => vi.restoreAllMocks());

describe('the fanin command line', () => {
  it('suggests the command meant by a mistyped one, with exit 2', async () => {
    expect(await run(['sned'])).toBe(USAGE_EXIT_CODE);
    expect(stderr).toContain("error: unknown command 'sned'");
    expect(stderr).toContain('(Did you mean send?)');
  });

  it('suggests the option meant by a mistyped one, with exit 2 and a pointer to --help', async () => {
    expect(await run(['list', '--limt', '5'])).toBe(2);
    expect(stderr).toContain("error: unknown option '--limt'");
    expect(stderr).toContain('Did you mean --limit?');
    expect(stderr).toContain('(add --help for usage)');
  });

  it.each([
    [['show'], "error: missing required argument 'aggregate-id'"],
    [['show', 'a', 'b'], 'error: too many arguments'],
    [['tail', 'ingress'], "error: command-argument value 'ingress' is invalid for argument 'output'"],
    [['completion', 'fish'], 'Allowed choices are bash, zsh'],
    [['list', '--limit'], "error: option '--limit <n>' argument missing"],
  ])('refuses %j with exit 2', async (argv, message) => {
    expect(await run(argv)).toBe(2);
    expect(stderr).toContain(message);
  });

  it('prints the overview as a usage error when no command is given', async () => {
    expect(await run([])).toBe(2);
    expect(stderr).toContain('Usage: fanin');
    expect(stdout).toBe('');
  });

  it('turns a usage error a command finds in its values into exit 2, as commander prints its own', async () => {
    expect(await run(['send', 'quotes', '--body', '{'])).toBe(2);
    expect(stderr).toMatch(/^error: --body is not valid JSON: /m);
  });

  it('prints the version with exit 0', async () => {
    expect(await run(['--version'])).toBe(0);
    expect(stdout.trim()).toBe(packageJson.version);
  });

  it('lists every command with its summary in --help, and the exit codes', async () => {
    expect(await run(['--help'])).toBe(0);
    for (const spec of ALL) expect(stdout).toMatch(new RegExp(`^ {2}${spec.name}\\b`, 'm'));
    expect(stdout).toContain(
      'Exit codes: 0 done; 1 the operation failed (the message says why); 2 the command line is wrong.',
    );
  });

  it("shows a command's options, the global ones and its examples with help <command>", async () => {
    expect(await run(['help', 'tail'])).toBe(0);
    for (const option of ['--consume', '--count <n>', '-f, --follow', '--json', '--stack <prefix>'])
      expect(stdout).toContain(option);
    expect(stdout).toMatch(/Examples:\n {2}fanin tail /);
  });

  it('takes the global options before or after the command', () => {
    for (const argv of [
      ['--stack', 'fanin', 'list'],
      ['list', '--stack', 'fanin'],
    ]) {
      const program = buildProgram();
      let seen: unknown;
      const list = program.commands.find((c) => c.name() === 'list');
      list?.action((...params: unknown[]) => {
        seen = (params.at(-1) as typeof list).optsWithGlobals().stack;
      });
      program.parse(argv, { from: 'user' });
      expect(seen).toBe('fanin');
    }
  });

  it('reads --name=value as --name value', () => {
    const program = buildProgram();
    let seen: unknown;
    const show = program.commands.find((c) => c.name() === 'show');
    show?.action((...params: unknown[]) => {
      seen = (params.at(-1) as typeof show).optsWithGlobals().state;
    });
    program.parse(['show', 'a-1', '--state=/tmp/a.json'], { from: 'user' });
    expect(seen).toBe('/tmp/a.json');
  });
});
