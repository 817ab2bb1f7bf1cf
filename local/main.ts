import { relative } from 'node:path';
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { processAlive, readState, stateFilePath } from '../shared/client/runtime-state.ts';
import type { Definition } from '../shared/engine/definition.ts';
import { TIMEOUT_WITHIN_DRAIN_INTERVAL, timeoutsWithinDrains } from '../shared/topology/drain-warnings.ts';
import { ConfigFileError, findConfigFile, loadLocalConfig } from './config.ts';
import { DEMOS, Demo, type DemoName } from './demo/run.ts';
import { LocalRuntime } from './runtime.ts';

/**
 * `npm start`: the local runtime. See `npm start -- --help` and docs/cli.md ("`npm start`"). Its
 * options are read with commander, as `npx fanin`'s are: the same spellings (`--name value`,
 * `--name=value`), the same "Did you mean …?" and exit code 2 for a usage error.
 */
const DESCRIPTION =
  'Runs fanin on this machine: starts the emulators (fauxqs for SQS and S3, DynamoDB Local) unless ' +
  'AWS_ENDPOINT_URL points at LocalStack, provisions the topology of fanin.config.ts, runs every ' +
  'handler behind Lambda-like pollers, the sweeper and the distributor on their schedules, and ' +
  'serves the dashboard. Ctrl-C stops it.';

/** A usage error's exit code, as `npx fanin`'s (local/cli/program.ts). */
const USAGE_EXIT_CODE = 2;

// The SDK warns on every run that its 2027 releases need Node 22; fanin targets Node 20 on purpose.
// Set once at start-up, before any client exists (as bin/fanin.js does); the demos' processes inherit it.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

function fail(message: string, code = 1): never {
  console.error(`fanin: ${message}`);
  process.exit(code);
}

function portNumber(value: string): number {
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65_535)
    throw new InvalidArgumentError(`must be 0-65535 (given "${value}")`);
  return port;
}

const program = new Command('npm start --')
  .description(DESCRIPTION)
  .usage('[options]')
  .helpOption('-h, --help', 'this help')
  .exitOverride()
  .showSuggestionAfterError(true)
  .showHelpAfterError('(add --help for usage)')
  .addOption(
    new Option(
      '--demo [name]',
      'run a demo end to end, then stop; exit 0 when it completed (loan: the loan broker, auction, all)',
    )
      .choices(DEMOS)
      .preset('all'),
  )
  .option(
    '--config <file>',
    'configuration file (default: the first of fanin.config.ts, .js, .mjs, .json here)',
  )
  .option('--prefix <prefix>', 'prefix of every resource name (default: the config\'s, else "fanin")')
  .option(
    '--port <n>',
    "dashboard port on 127.0.0.1 (default: the config's, 4780; 0 = any free port)",
    portNumber,
  )
  .option('--no-dashboard', 'serve no dashboard')
  .option(
    '--state <file>',
    'where to record the running runtime (default: $FANIN_STATE or .fanin/runtime.json)',
  )
  .option('--quiet', 'do not log every output as it is published');
try {
  program.parse(process.argv.slice(2), { from: 'user' });
} catch (error) {
  // Help and version end with code 0; commander has printed what it had to say.
  process.exit(error instanceof CommanderError && error.exitCode !== 0 ? USAGE_EXIT_CODE : 0);
}
const values = program.opts<{
  demo?: DemoName;
  config?: string;
  prefix?: string;
  port?: number;
  dashboard: boolean;
  state?: string;
  quiet?: boolean;
}>();
const demo = values.demo;
const port: number | false | undefined = values.dashboard === false ? false : values.port;

const cwd = process.cwd();
const stateFile = stateFilePath(cwd, values.state);
const previous = await readState(stateFile).catch(() => undefined);
if (previous && previous.pid !== process.pid && processAlive(previous.pid)) {
  fail(
    `a runtime is already running (pid ${previous.pid}, prefix "${previous.prefix}", dashboard ${previous.dashboardUrl ?? 'none'}).\n` +
      'Stop it with Ctrl-C in its terminal, or start another one beside it with --state <file> --prefix <other> --port 0.',
  );
}

let config: Awaited<ReturnType<typeof loadLocalConfig>>;
try {
  config = await loadLocalConfig(await findConfigFile(cwd, values.config), values.prefix);
} catch (error) {
  if (error instanceof ConfigFileError) fail(error.message);
  throw error;
}

// A demo's lines carry the time since the start, so you can see what waits for what.
const log =
  demo === undefined
    ? (line: string) => console.log(line)
    : (line: string) =>
        console.log(`${((Date.now() - performance.timeOrigin) / 1000).toFixed(1).padStart(5)}s ${line}`);
const startedAt = performance.now();
let demoRun: Demo | undefined;
if (demo !== undefined) {
  try {
    // Launched first: its processes load while the emulators start, then wait for the state file.
    demoRun = Demo.launch(demo, { stateFile, definitions: config.definitions.map((d) => d.name), log });
  } catch (error) {
    fail((error as Error).message);
  }
}
let runtime: LocalRuntime;
try {
  runtime = await LocalRuntime.start({
    config,
    stateFile,
    ...(port !== undefined ? { dashboardPort: port } : {}),
    logOutputs: !values.quiet && demo === undefined,
    log,
  });
} catch (error) {
  await demoRun?.stop();
  fail(`could not start: ${(error as Error).message}`);
}
printBanner(runtime, Math.round(performance.now() - startedAt));

// Ctrl-C reaches this process twice at once (from the terminal, and forwarded by npm): only a
// second one well after the first forces the exit.
let firstSignalAt: number | undefined;
const demoAbort = new AbortController();
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (firstSignalAt === undefined) {
      firstSignalAt = Date.now();
      log(`\n${signal}: stopping (pollers finish their batches, then the emulators stop)…`);
      demoAbort.abort();
      void shutdown(0);
    } else if (Date.now() - firstSignalAt > 2_000) {
      log('stopping now, without waiting');
      process.exit(130);
    }
  });
}

async function shutdown(code: number): Promise<never> {
  await runtime.stop();
  log('stopped');
  process.exit(code);
}

if (demoRun !== undefined) {
  try {
    await demoRun.runWith(runtime, { signal: demoAbort.signal });
    if (firstSignalAt === undefined) await shutdown(0);
  } catch (error) {
    if (firstSignalAt === undefined) {
      console.error(`fanin: demo failed: ${(error as Error).message}`);
      await shutdown(1);
    }
  }
}

function printBanner(runtime: LocalRuntime, ms: number): void {
  const { state } = runtime;
  const rows: [string, string][] = [];
  const where =
    state.emulators.length > 0
      ? state.emulators.map((e) => `${e.name} ${e.url}`).join(', ')
      : Object.entries(state.endpoints)
          .map(([k, v]) => `${k}=${v}`)
          .join(', ') || 'AWS';
  rows.push(['services', where]);
  rows.push([
    'lifetime',
    state.emulators.length > 0
      ? 'in-memory emulators: every start is clean, nothing survives Ctrl-C'
      : 'provisioning is idempotent: a restart resumes with what the endpoint kept',
  ]);
  rows.push(['table', state.tableName]);
  if (state.bucketName) rows.push(['bucket', `${state.bucketName} (claim check)`]);
  for (const [role, ref] of Object.entries(state.queues)) rows.push([role, ref.url]);
  for (const ref of state.replyPartitions) rows.push([ref.name.slice(state.prefix.length + 1), ref.url]);
  for (const ref of state.responderQueues) rows.push(['responder', ref.url]);
  rows.push(['dashboard', state.dashboardUrl ?? '(off)']);
  rows.push([
    'state',
    `${relative(process.cwd(), runtime.stateFile) || runtime.stateFile}  (npx fanin endpoints --json)`,
  ]);
  const width = Math.max(...rows.map(([k]) => k.length));
  log(
    `fanin is running (prefix "${state.prefix}", ${state.replyPartitions.length} reply partitions), ready in ${ms} ms`,
  );
  for (const [k, v] of rows) log(`  ${k.padEnd(width)}  ${v}`);
  log(`definitions: ${[...runtime.topology.definitions.keys()].join(', ')}`);
  // The construct's synth warning, from the same check: a deadline shorter than twice a drain.
  const short = timeoutsWithinDrains(
    [...runtime.topology.definitions.values()],
    runtime.topology.replyConsumers.map((c) => c.drainIntervalSeconds ?? 0),
  );
  if (short) console.error(`fanin: warning (${TIMEOUT_WITHIN_DRAIN_INTERVAL}): ${short.message}`);
  if (demo === undefined) {
    const suggestion = trySuggestion(runtime.topology.definitions);
    if (suggestion !== undefined) log(`try:  ${suggestion}`);
    log(`${suggestion !== undefined ? '      ' : 'try:  '}npx fanin --help`);
    log('Ctrl-C stops.');
  }
}

/**
 * The first command the start banner suggests: the example configuration's loan request, or a
 * request to the configuration's first definition that takes one (none when every definition is
 * self-starting).
 */
function trySuggestion(definitions: ReadonlyMap<string, Definition>): string | undefined {
  if (definitions.get('loan-broker')?.mode === 'initialized')
    return 'npx fanin send loan-broker --payload \'{"amount":250000,"termYears":30}\' --wait';
  const first = [...definitions.values()].find((d) => d.mode === 'initialized');
  return first && `npx fanin send ${first.name} --payload '{}' --wait`;
}
