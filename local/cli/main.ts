import { resetClients } from '../../shared/aws/clients.ts';
import { TargetNotFoundError } from '../connect.ts';
import { complete, list, purge, reply, send, setParameters, show } from './commands/aggregates.ts';
import { endpoints } from './commands/endpoints.ts';
import { disable, enable, partitions } from './commands/partitions.ts';
import { redrive, tail } from './commands/queues.ts';
import {
  type Command,
  CommandError,
  commandHelp,
  createIO,
  GLOBAL_OPTIONS,
  parseCommandArgs,
  UsageError,
} from './framework.ts';

/**
 * The `fanin` CLI (bin/fanin.js runs it). Exit codes: 0 success, 1 the operation failed (not
 * found, timed out, refused: the message says why), 2 the command line is wrong.
 */
const COMMANDS: readonly Command[] = [
  send,
  reply,
  show,
  list,
  purge,
  complete,
  setParameters,
  partitions,
  enable,
  disable,
  tail,
  redrive,
  endpoints,
];

function overview(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length));
  return [
    'Usage: fanin <command> [options]',
    '',
    'Operate fanin: the local runtime (`npm start`, found through .fanin/runtime.json) or a deployed',
    'stack (--stack <prefix>, through your AWS settings).',
    '',
    'Commands:',
    ...COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    '',
    'Global options:',
    ...Object.entries(GLOBAL_OPTIONS).map(
      ([name, spec]) => `  --${name}${spec.placeholder ? ` <${spec.placeholder}>` : ''}  ${spec.description}`,
    ),
    '',
    "`fanin <command> --help` shows a command's options and examples.",
  ].join('\n');
}

async function main(argv: readonly string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    const about = rest[0] ? COMMANDS.find((c) => c.name === rest[0]) : undefined;
    console.log(about ? commandHelp(about) : overview());
    return 0;
  }
  const command = COMMANDS.find((c) => c.name === name);
  if (!command) {
    console.error(`fanin: unknown command "${name}"\n\n${overview()}`);
    return 2;
  }
  const abort = new AbortController();
  process.once('SIGINT', () => abort.abort());
  try {
    const args = parseCommandArgs(command, rest);
    if (args.values.help) {
      console.log(commandHelp(command));
      return 0;
    }
    return (await command.run(createIO(args, abort.signal), args)) ?? 0;
  } catch (error) {
    if (error instanceof UsageError) {
      console.error(`fanin ${command.name}: ${error.message}\n\n${commandHelp(command)}`);
      return 2;
    }
    if (error instanceof CommandError) {
      console.error(`fanin ${command.name}: ${error.message}`);
      return error.exitCode;
    }
    if (error instanceof TargetNotFoundError) {
      console.error(`fanin ${command.name}: ${error.message}`);
      return 1;
    }
    // An SDK or network error: say what failed, not a stack trace.
    const cause = error as Error & { code?: string; $metadata?: unknown };
    console.error(`fanin ${command.name}: ${cause.name ?? 'Error'}: ${cause.message}`);
    if (process.env.FANIN_DEBUG) console.error(error);
    return 1;
  } finally {
    resetClients();
  }
}

process.exitCode = await main(process.argv.slice(2));
