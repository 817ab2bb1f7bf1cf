import {
  type Command,
  CommandError,
  type CommandSpec,
  commandHelp,
  createIO,
  GLOBAL_OPTIONS,
  parseCommandArgs,
  UsageError,
} from './framework.ts';
import { ALL } from './specs.ts';

/**
 * The `fanin` CLI (bin/fanin.js runs it). Exit codes: 0 success, 1 the operation failed (not
 * found, timed out, refused: the message says why), 2 the command line is wrong.
 */
const COMMANDS: readonly CommandSpec[] = ALL;

/** Loads what a command does, only when it runs (the modules bring in the AWS SDK). */
async function load(name: string): Promise<Command> {
  const modules: Record<string, () => Promise<Record<string, unknown>>> = {
    send: () => import('./commands/aggregates.ts'),
    reply: () => import('./commands/aggregates.ts'),
    show: () => import('./commands/aggregates.ts'),
    list: () => import('./commands/aggregates.ts'),
    purge: () => import('./commands/aggregates.ts'),
    complete: () => import('./commands/aggregates.ts'),
    'set-parameters': () => import('./commands/aggregates.ts'),
    partitions: () => import('./commands/partitions.ts'),
    enable: () => import('./commands/partitions.ts'),
    disable: () => import('./commands/partitions.ts'),
    evacuate: () => import('./commands/partitions.ts'),
    tail: () => import('./commands/queues.ts'),
    redrive: () => import('./commands/queues.ts'),
    endpoints: () => import('./commands/endpoints.ts'),
  };
  const exportName = name === 'set-parameters' ? 'setParameters' : name;
  const module = await modules[name]?.();
  const command = module?.[exportName] as Command | undefined;
  if (!command) throw new Error(`command ${name} has no implementation`);
  return command;
}

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
  const spec = COMMANDS.find((c) => c.name === name);
  if (!spec) {
    console.error(`fanin: unknown command "${name}"\n\n${overview()}`);
    return 2;
  }
  const abort = new AbortController();
  let loaded = false;
  process.once('SIGINT', () => abort.abort());
  try {
    const args = parseCommandArgs(spec, rest);
    if (args.values.help) {
      console.log(commandHelp(spec));
      return 0;
    }
    const command = await load(spec.name);
    loaded = true;
    return (await command.run(createIO(args, abort.signal), args)) ?? 0;
  } catch (error) {
    if (error instanceof UsageError) {
      console.error(`fanin ${spec.name}: ${error.message}\n\n${commandHelp(spec)}`);
      return 2;
    }
    if (error instanceof CommandError) {
      console.error(`fanin ${spec.name}: ${error.message}`);
      return error.exitCode;
    }
    // connect.ts is loaded lazily, so its error class is recognised by name.
    if (error instanceof Error && error.name === 'TargetNotFoundError') {
      console.error(`fanin ${spec.name}: ${error.message}`);
      return 1;
    }
    // An SDK or network error: say what failed, not a stack trace.
    const cause = error as Error & { code?: string; $metadata?: unknown };
    console.error(`fanin ${spec.name}: ${cause.name ?? 'Error'}: ${cause.message}`);
    if (process.env.FANIN_DEBUG) console.error(error);
    return 1;
  } finally {
    // Close the SDK's sockets so the process ends at once.
    if (loaded) (await import('../../shared/aws/clients.ts')).resetClients();
  }
}

process.exitCode = await main(process.argv.slice(2));
