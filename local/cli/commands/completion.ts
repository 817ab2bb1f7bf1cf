import type { Command as Commander } from 'commander';
import { type Command, UsageError } from '../io.ts';
import * as specs from '../specs.ts';

/**
 * `fanin completion bash|zsh`: a completion script generated from the program itself (its
 * commands, options and argument choices), so it cannot drift from what the CLI accepts. zsh loads
 * the bash function through `bashcompinit`.
 */

/** What to complete: the words after each command, and the options that take a value. */
function vocabulary(program: Commander): { words: Map<string, string[]>; valued: string[] } {
  // The deprecated --peek is accepted, not offered; --help and --version are added where they apply.
  const hidden = new Set(['--peek', '--help', '--version']);
  const longs = (command: Commander) =>
    command.options.map((o) => o.long).filter((o): o is string => !!o && !hidden.has(o));
  const valued = new Set<string>();
  const globals = longs(program);
  for (const option of program.options) if (option.long && option.required) valued.add(option.long);
  const words = new Map<string, string[]>([
    ['', [...program.commands.map((c) => c.name()), ...globals, '--help', '--version']],
  ]);
  for (const command of program.commands) {
    for (const option of command.options) if (option.long && option.required) valued.add(option.long);
    const choices = command.registeredArguments.flatMap((a) => a.argChoices ?? []);
    words.set(command.name(), [...choices, ...longs(command), ...globals, '--help']);
  }
  return { words, valued: [...valued].sort() };
}

/** The bash completion function for `fanin` (installed, or `alias fanin='npx fanin'`). */
export function bashCompletion(program: Commander): string {
  const { words, valued } = vocabulary(program);
  const cases = [...words]
    .map(([command, list]) => `    ${command === '' ? "''" : command}) words="${list.join(' ')}" ;;`)
    .join('\n');
  return `# fanin completion for bash (fanin completion bash): source it from ~/.bashrc
_fanin() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" command="" words="" i
  for ((i = 1; i < COMP_CWORD; i++)); do
    case "\${COMP_WORDS[i]}" in
      ${valued.join('|')}) i=$((i + 1)) ;;
      -*) ;;
      *) command="\${COMP_WORDS[i]}"; break ;;
    esac
  done
  case "$command" in
${cases}
  esac
  COMPREPLY=($(compgen -W "$words" -- "$cur"))
}
complete -F _fanin fanin
`;
}

/** The zsh script: the bash function through zsh's bashcompinit. */
export function zshCompletion(program: Commander): string {
  return `# fanin completion for zsh (fanin completion zsh): source it from ~/.zshrc
autoload -U +X compinit && compinit
autoload -U +X bashcompinit && bashcompinit
${bashCompletion(program).split('\n').slice(1).join('\n')}`;
}

/** The `completion` command for `program` (program.ts hands it the program it built). */
export function completionCommand(program: Commander): Command {
  return {
    ...specs.completion,
    async run(io, args) {
      const shell = args.positionals[0];
      if (shell === 'bash') io.out(bashCompletion(program).trimEnd());
      else if (shell === 'zsh') io.out(zshCompletion(program).trimEnd());
      else throw new UsageError('completion needs a shell: bash or zsh');
      return 0;
    },
  };
}
