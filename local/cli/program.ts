import { Argument, Command as Commander, CommanderError, Option } from 'commander';
import packageJson from '../../package.json' with { type: 'json' };
import {
  type Command,
  CommandError,
  type CommandSpec,
  createIO,
  GLOBAL_OPTIONS,
  type OptionSpec,
  UsageError,
} from './io.ts';
import { ALL } from './specs.ts';

/**
 * The `fanin` command line on commander: global options before or after the command, `--version`,
 * `help <command>`, a suggestion for a mistyped command or option. Exit codes: 0 success, 1 the
 * operation failed (not found, timed out, refused: the message says why), 2 the command line is
 * wrong. Data goes to stdout, progress and messages to stderr.
 */

/** Exit code of a command line that is wrong. */
export const USAGE_EXIT_CODE = 2;

const OVERVIEW =
  'Operate fanin: the local runtime (`npm start`, found through .fanin/runtime.json) or a deployed ' +
  'stack (--stack <prefix>, through your AWS settings).';

const AFTER_OVERVIEW = [
  '',
  'Global options go before or after the command: `fanin --stack fanin list` = `fanin list --stack fanin`.',
  "`fanin help <command>` (or `fanin <command> --help`) shows a command's options and examples.",
  'Exit codes: 0 done; 1 the operation failed (the message says why); 2 the command line is wrong.',
].join('\n');

/** Loads what a command does, only when it runs (the modules bring in the AWS SDK). */
async function load(name: string): Promise<Command> {
  const modules: Record<string, () => Promise<Record<string, unknown>>> = {
    send: () => import('./commands/aggregates.ts'),
    reply: () => import('./commands/aggregates.ts'),
    show: () => import('./commands/aggregates.ts'),
    history: () => import('./commands/history.ts'),
    list: () => import('./commands/aggregates.ts'),
    purge: () => import('./commands/control.ts'),
    complete: () => import('./commands/control.ts'),
    'set-parameters': () => import('./commands/control.ts'),
    partitions: () => import('./commands/partitions.ts'),
    enable: () => import('./commands/partitions.ts'),
    disable: () => import('./commands/partitions.ts'),
    evacuate: () => import('./commands/partitions.ts'),
    tail: () => import('./commands/queues.ts'),
    redrive: () => import('./commands/queues.ts'),
    endpoints: () => import('./commands/endpoints.ts'),
    // Generated from the program itself, which the command is handed rather than importing it.
    completion: async () => ({
      completion: (await import('./commands/completion.ts')).completionCommand(buildProgram()),
    }),
  };
  const exportName = name === 'set-parameters' ? 'setParameters' : name;
  const module = await modules[name]?.();
  const command = module?.[exportName] as Command | undefined;
  if (!command) throw new Error(`command ${name} has no implementation`);
  return command;
}

/** A commander option from its spec. */
function toOption(name: string, spec: OptionSpec): Option {
  const value = spec.type === 'string' ? ` <${spec.placeholder ?? 'value'}>` : '';
  return new Option(`${spec.short ? `-${spec.short}, ` : ''}--${name}${value}`, spec.description);
}

/** What a run of the program ended with. */
interface Outcome {
  exitCode: number;
}

/** Runs one command: its implementation loaded, its errors turned into messages and exit codes. */
async function runCommand(spec: CommandSpec, cli: Commander, positionals: string[]): Promise<number> {
  // Option values by their spelling on the command line (`aggregate-id`), as the commands read them.
  const given = cli.optsWithGlobals() as Record<string, string | boolean | undefined>;
  const values: Record<string, string | boolean | undefined> = {};
  for (const name of [...Object.keys(GLOBAL_OPTIONS), ...Object.keys(spec.options)]) {
    values[name] = given[new Option(`--${name}`).attributeName()];
  }
  const abort = new AbortController();
  const onInterrupt = () => abort.abort();
  process.once('SIGINT', onInterrupt);
  const io = createIO({ values, positionals }, abort.signal);
  try {
    const command = await load(spec.name);
    return (await command.run(io, { values, positionals })) ?? 0;
  } catch (error) {
    if (error instanceof UsageError) {
      // Printed like commander's own usage errors, then thrown on as a CommanderError (exit 2).
      cli.error(`error: ${error.message}`, { exitCode: USAGE_EXIT_CODE, code: 'fanin.usage' });
    }
    if (error instanceof CommandError) {
      console.error(`fanin ${spec.name}: ${error.message}`);
      return error.exitCode;
    }
    // An SDK or network error: say what failed, not a stack trace.
    const cause = error as Error;
    console.error(`fanin ${spec.name}: ${cause.name ?? 'Error'}: ${cause.message}`);
    if (process.env.FANIN_DEBUG) console.error(error);
    return 1;
  } finally {
    process.removeListener('SIGINT', onInterrupt);
    // Close the SDK's sockets so the process ends at once.
    await io.close();
  }
}

/** The program, every command declared from its spec (nothing of the AWS SDK is loaded here). */
export function buildProgram(outcome: Outcome = { exitCode: 0 }): Commander {
  const program = new Commander('fanin')
    .description(OVERVIEW)
    .version(packageJson.version, '-V, --version', 'print the version of fanin')
    .helpOption('-h, --help', 'show the help')
    .helpCommand('help [command]', "show a command's help")
    // Settings copied to each command declared below.
    .exitOverride()
    .showSuggestionAfterError(true)
    .showHelpAfterError('(add --help for usage)')
    .configureHelp({ showGlobalOptions: true, sortSubcommands: false })
    .addHelpText('after', AFTER_OVERVIEW);
  for (const [name, spec] of Object.entries(GLOBAL_OPTIONS)) program.addOption(toOption(name, spec));
  for (const spec of ALL) {
    const command = program
      .command(spec.name)
      // The details' line breaks are for reading the source: commander wraps to the terminal.
      .description(spec.details ? `${spec.summary}\n\n${spec.details.replace(/\n/g, ' ')}` : spec.summary)
      .summary(spec.summary)
      .usage(spec.usage);
    for (const argument of spec.arguments ?? []) {
      const declared = new Argument(`<${argument.name}>`, argument.description);
      command.addArgument(argument.choices ? declared.choices(argument.choices) : declared);
    }
    for (const [name, option] of Object.entries(spec.options)) command.addOption(toOption(name, option));
    if (spec.examples?.length) {
      command.addHelpText('after', `\nExamples:\n${spec.examples.map((e) => `  ${e}`).join('\n')}`);
    }
    command.action(async (...params: unknown[]) => {
      const cli = params.at(-1) as Commander;
      outcome.exitCode = await runCommand(spec, cli, cli.processedArgs as string[]);
    });
  }
  return program;
}

/** Runs the CLI on `argv` (without node and the script); returns the exit code. */
export async function run(argv: readonly string[]): Promise<number> {
  const outcome: Outcome = { exitCode: 0 };
  const program = buildProgram(outcome);
  try {
    if (argv.length === 0) {
      // No command: the overview, as a usage error (stderr, exit 2).
      program.outputHelp({ error: true });
      return USAGE_EXIT_CODE;
    }
    await program.parseAsync([...argv], { from: 'user' });
    return outcome.exitCode;
  } catch (error) {
    // Commander has printed its message: help and --version end with 0, a wrong command line with 2.
    if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : USAGE_EXIT_CODE;
    throw error;
  }
}
