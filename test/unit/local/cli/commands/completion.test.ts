import { describe, expect, it } from 'vitest';
import {
  bashCompletion,
  completionCommand,
  zshCompletion,
} from '../../../../../local/cli/commands/completion.ts';
import { UsageError } from '../../../../../local/cli/io.ts';
import { buildProgram } from '../../../../../local/cli/program.ts';
import { args } from '../../world.ts';

/**
 * `fanin completion`'s own test: the scripts are generated from the program the CLI declares
 * (docs/cli.md, "Shell completion"), so each command, its options and `tail`'s outputs are in them.
 * The integration test sources the bash script in a real shell; this pins its content fast.
 */

/** The words the script offers after `command` ('' for the first word). */
function wordsAfter(script: string, command: string): string[] {
  const label = command === '' ? "''" : command;
  const line = script.split('\n').find((l) => l.trimStart().startsWith(`${label}) words="`));
  if (!line) throw new Error(`no case for ${label}`);
  return (/words="([^"]*)"/.exec(line)?.[1] ?? '').split(' ');
}

const COMMANDS = [
  'send',
  'reply',
  'show',
  'history',
  'list',
  'purge',
  'complete',
  'set-parameters',
  'partitions',
  'enable',
  'disable',
  'evacuate',
  'tail',
  'redrive',
  'endpoints',
  'completion',
];

describe('fanin completion', () => {
  const bash = bashCompletion(buildProgram());

  it('completes every command and the global options as the first word', () => {
    const first = wordsAfter(bash, '');
    for (const command of COMMANDS) expect(first).toContain(command);
    for (const option of ['--json', '--state', '--stack', '--bucket', '--help', '--version'])
      expect(first).toContain(option);
  });

  it("completes tail's outputs and its options, but not the deprecated --peek", () => {
    const words = wordsAfter(bash, 'tail');
    for (const output of ['completed', 'timed-out', 'unknown', 'late', 'error', 'status'])
      expect(words).toContain(output);
    for (const option of ['--consume', '--count', '--follow', '--timeout', '--json'])
      expect(words).toContain(option);
    expect(words).not.toContain('--peek');
  });

  it("completes each command's own options", () => {
    expect(wordsAfter(bash, 'send')).toEqual(
      expect.arrayContaining([
        '--payload',
        '--body',
        '--recipients',
        '--expected',
        '--aggregate-id',
        '--request-id',
        '--wait',
        '--timeout',
      ]),
    );
    expect(wordsAfter(bash, 'set-parameters')).toEqual(
      expect.arrayContaining(['--timeout-seconds', '--threshold', '--count', '--reset']),
    );
    expect(wordsAfter(bash, 'completion')).toEqual(expect.arrayContaining(['bash', 'zsh']));
  });

  it('skips the value of an option that takes one when it looks for the command', () => {
    const skip = bash.split('\n').find((l) => l.includes(') i=$((i + 1)) ;;')) ?? '';
    for (const valued of ['--state', '--stack', '--bucket', '--body', '--timeout'])
      expect(skip).toContain(valued);
    expect(skip).not.toContain('--json');
    expect(skip).not.toContain('--wait|');
  });

  it('registers the function for fanin', () => {
    expect(bash).toMatch(/^# fanin completion for bash/);
    expect(bash.trimEnd().split('\n').at(-1)).toBe('complete -F _fanin fanin');
  });

  it('gives zsh the same function through bashcompinit', () => {
    const zsh = zshCompletion(buildProgram());
    expect(zsh.split('\n').slice(0, 3)).toEqual([
      '# fanin completion for zsh (fanin completion zsh): source it from ~/.zshrc',
      'autoload -U +X compinit && compinit',
      'autoload -U +X bashcompinit && bashcompinit',
    ]);
    expect(zsh).toContain(bash.split('\n').slice(1).join('\n'));
  });

  it('prints the script of the shell asked for, and refuses any other shell as a usage error', async () => {
    const out: string[] = [];
    const io = {
      out: (l: string) => out.push(l),
      err: () => undefined,
      json: () => undefined,
      wantsJson: false,
      interactive: false,
      signal: new AbortController().signal,
      target: () => Promise.reject(new Error('no target needed')),
    };
    const command = completionCommand(buildProgram());

    expect(await command.run(io, args({}, 'zsh'))).toBe(0);
    expect(out[0]).toMatch(/^# fanin completion for zsh/);
    await expect(command.run(io, args({}, 'fish'))).rejects.toBeInstanceOf(UsageError);
  });
});
