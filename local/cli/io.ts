import type { Target } from '../../shared/client/connect.ts';
import { stateFilePath } from '../../shared/client/runtime-state.ts';
import { FaninError } from '../../shared/errors.ts';

/**
 * What the commands share: their description (for the commander program in `program.ts`), the
 * parsed arguments they get, the IO they talk through, their errors and progress display.
 */

/** One option of a command. */
export interface OptionSpec {
  readonly type: 'string' | 'boolean';
  readonly short?: string;
  /** What the value is, for the help (`--timeout <seconds>`). */
  readonly placeholder?: string;
  readonly description: string;
}

/** One positional argument of a command. */
export interface ArgumentSpec {
  readonly name: string;
  readonly description: string;
  /** The values it may take; anything else is a usage error. */
  readonly choices?: readonly string[];
}

/** The parsed command line of one command: option values by option name, then the arguments. */
export interface Args {
  readonly values: Readonly<Record<string, string | boolean | undefined>>;
  readonly positionals: readonly string[];
}

/** What a command is called, takes and says in its help (no behaviour: cheap to load). */
export interface CommandSpec {
  readonly name: string;
  readonly summary: string;
  /** After `fanin <name>` in the help, e.g. `<aggregate-id> [options]`. */
  readonly usage: string;
  /** Its positional arguments, all required. */
  readonly arguments?: readonly ArgumentSpec[];
  /** More lines of help. */
  readonly details?: string;
  readonly examples?: readonly string[];
  readonly options: Readonly<Record<string, OptionSpec>>;
}

/** A CLI command: its spec and what it does. */
export interface Command extends CommandSpec {
  /** Runs the command; the number is the exit code (0 when nothing is returned). */
  run(io: CommandIO, args: Args): Promise<number | undefined>;
}

/**
 * A command line that does not make sense: exit code 2, with a pointer to the command's help.
 * Not retryable: the same command line fails the same way.
 */
export class UsageError extends FaninError {
  public constructor(message: string) {
    super(message, { retryable: false });
    this.name = 'UsageError';
  }
}

/**
 * The command ran and failed (not found, timed out, refused): exit code 1 with the message.
 * Retryable: what failed may be there or done on a later run (a runtime started, a queue drained).
 */
export class CommandError extends FaninError {
  public readonly exitCode: number;
  public constructor(message: string, exitCode = 1) {
    super(message);
    this.name = 'CommandError';
    this.exitCode = exitCode;
  }
}

/** Options every command takes, before or after the command's name. */
export const GLOBAL_OPTIONS: Readonly<Record<string, OptionSpec>> = {
  json: { type: 'boolean', description: 'machine-readable output (JSON on stdout)' },
  state: {
    type: 'string',
    placeholder: 'file',
    description: 'state file of the local runtime (default: $FANIN_STATE or .fanin/runtime.json)',
  },
  stack: {
    type: 'string',
    placeholder: 'prefix',
    description:
      'talk to a deployed stack with this prefix instead (default: $FANIN_STACK), through the AWS SDK settings (AWS_PROFILE, AWS_REGION, AWS_ENDPOINT_URL...)',
  },
  bucket: {
    type: 'string',
    placeholder: 'name',
    description: "with --stack: the stack's claim-check bucket, for payloads above 256 KiB",
  },
};

/** What a command uses to talk to the world. */
export interface CommandIO {
  /** A line on stdout. */
  out(line: string): void;
  /** A line on stderr (progress, hints). */
  err(line: string): void;
  /** JSON on stdout. */
  json(value: unknown): void;
  /** Whether `--json` was given. */
  readonly wantsJson: boolean;
  /** The local runtime or the stack, resolved once. */
  target(): Promise<Target>;
  /** True when stderr is a terminal (progress bars redraw in place). */
  readonly interactive: boolean;
  /** Aborted on Ctrl-C, so a long command can stop cleanly. */
  readonly signal: AbortSignal;
}

/**
 * Builds the IO of one command run. The run's AWS clients are built once, with its target;
 * `close()` destroys them when the command is done, so the process ends at once.
 */
export function createIO(args: Args, signal: AbortSignal): CommandIO & { close(): Promise<void> } {
  let target: Promise<Target> | undefined;
  const stack = stringOption(args, 'stack') ?? process.env.FANIN_STACK;
  const bucket = stringOption(args, 'bucket');
  return {
    out: (line) => process.stdout.write(`${line}\n`),
    err: (line) => process.stderr.write(`${line}\n`),
    json: (value) => process.stdout.write(`${JSON.stringify(withIsoTimes(value), null, 2)}\n`),
    wantsJson: args.values.json === true,
    interactive: process.stderr.isTTY === true,
    signal,
    target: () => {
      // Loaded on first use: the SDK is most of the CLI's start-up, and help needs none of it.
      target ??= import('../../shared/client/connect.ts').then(({ resolveTarget, TargetNotFoundError }) =>
        resolveTarget({
          stateFile: stateFilePath(process.cwd(), stringOption(args, 'state')),
          ...(stack ? { stack } : {}),
          ...(bucket ? { bucket } : {}),
        }).catch((error: unknown) => {
          // No runtime, no stack: the operation failed (exit 1), with connect.ts's explanation.
          if (error instanceof TargetNotFoundError) throw new CommandError(error.message);
          if (stack && /region is missing/i.test((error as Error).message ?? '')) {
            throw new CommandError(
              `--stack ${stack}: no AWS region is set. Set one with AWS_REGION (e.g. AWS_REGION=eu-west-1 npx fanin --stack ${stack} ...), or a region for your profile in ~/.aws/config (aws configure set region eu-west-1), then AWS_PROFILE names that profile`,
            );
          }
          throw error;
        }),
      );
      return target;
    },
    close: async () => {
      (await target?.catch(() => undefined))?.clients.destroy();
    },
  };
}

/**
 * A JSON document of the CLI with every epoch time (a number under a key ending in `At`, or
 * `deadline`, as the state table keeps them: milliseconds, or seconds for `expiresAt`, DynamoDB's TTL) also as ISO
 * 8601 beside it (`openedAt` → `openedAtIso`), as the AWS CLI prints times; the numbers stay for
 * scripts that read them.
 */
export function withIsoTimes(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withIsoTimes);
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(value)) {
    out[key] = withIsoTimes(field);
    if (
      (key.endsWith('At') || key === 'deadline') &&
      typeof field === 'number' &&
      Number.isFinite(field) &&
      !(`${key}Iso` in value)
    ) {
      // Below 10^11 a time is in seconds (10^11 ms is 1973; 10^11 s is the year 5138).
      out[`${key}Iso`] = new Date(field < 1e11 ? field * 1000 : field).toISOString();
    }
  }
  return out;
}

/** A string option, or undefined. */
export function stringOption(args: Args, name: string): string | undefined {
  const value = args.values[name];
  return typeof value === 'string' ? value : undefined;
}

/** An integer option within bounds, or `fallback` when absent. */
export function intOption(
  args: Args,
  name: string,
  fallback: number | undefined,
  { min = 0, max = Number.MAX_SAFE_INTEGER }: { min?: number; max?: number } = {},
): number | undefined {
  const text = stringOption(args, name);
  if (text === undefined) return fallback;
  const value = Number(text);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new UsageError(`--${name} must be an integer from ${min} to ${max} (given "${text}")`);
  }
  return value;
}

/** A number option (seconds may be fractional), or `fallback` when absent. */
export function numberOption(args: Args, name: string, fallback: number, min = 0): number {
  const text = stringOption(args, name);
  if (text === undefined) return fallback;
  const value = Number(text);
  if (!Number.isFinite(value) || value < min) {
    throw new UsageError(`--${name} must be a number >= ${min} (given "${text}")`);
  }
  return value;
}

/** A JSON option, parsed, or undefined. */
export function jsonOption(args: Args, name: string): unknown {
  const text = stringOption(args, name);
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new UsageError(`--${name} is not valid JSON: ${(error as Error).message}`);
  }
}

/**
 * A progress display on stderr for long operations: a bar redrawn in place on a terminal, a line
 * every few seconds otherwise (a log or a CI job), nothing with `--json` (stdout stays clean JSON;
 * stderr still gets the lines).
 */
export class Progress {
  private readonly io: CommandIO;
  private readonly label: string;
  private total: number | undefined;
  private done = 0;
  private lastLineAt = 0;
  private readonly startedAt = Date.now();

  public constructor(io: CommandIO, label: string, total?: number) {
    this.io = io;
    this.label = label;
    this.total = total;
  }

  /** Sets the count done (and the total when it became known) and redraws. */
  public update(done: number, total?: number): void {
    this.done = done;
    if (total !== undefined) this.total = total;
    const now = Date.now();
    if (this.io.interactive) {
      process.stderr.write(`\r${this.render()}\u001b[K`);
    } else if (now - this.lastLineAt >= 2_000) {
      this.lastLineAt = now;
      this.io.err(this.render());
    }
  }

  /** Ends the display with a final line. */
  public finish(message: string): void {
    if (this.io.interactive) process.stderr.write(`\r${this.render()}\u001b[K\n`);
    else this.io.err(this.render());
    this.io.err(message);
  }

  private render(): string {
    const seconds = ((Date.now() - this.startedAt) / 1000).toFixed(1);
    if (!this.total) return `${this.label}: ${this.done} (${seconds} s)`;
    const fraction = Math.min(1, this.done / this.total);
    const width = 30;
    const filled = Math.round(fraction * width);
    return `${this.label} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${this.done}/${this.total} (${seconds} s)`;
  }
}

/** Waits `ms`, or less when the signal aborts. */
export function pause(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

/** Formats rows as aligned columns. */
export function table(rows: readonly (readonly string[])[]): string[] {
  const widths: number[] = [];
  for (const row of rows) {
    row.forEach((cell, i) => {
      widths[i] = Math.max(widths[i] ?? 0, cell.length);
    });
  }
  return rows.map((row) =>
    row
      .map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd(),
  );
}
