import { relative } from 'node:path';
import { parseArgs } from 'node:util';
import { ConfigFileError, findConfigFile, loadLocalConfig } from './config.ts';
import { DEMOS, Demo, type DemoName } from './demo/run.ts';
import { LocalRuntime } from './runtime.ts';
import { processAlive, readState, stateFilePath } from './state.ts';

/**
 * `npm start`: the local runtime. See `npm start -- --help` and README.md ("Local runtime and CLI").
 */
const USAGE = `Usage: npm start -- [options]

Runs fanin on this machine: starts the emulators (fauxqs for SQS and S3, DynamoDB Local) unless
AWS_ENDPOINT_URL points at LocalStack, provisions the topology of fanin.config.ts, runs every
handler behind Lambda-like pollers, the sweeper and the distributor on their schedules, and serves
the dashboard. Ctrl-C stops it.

Options:
  --demo[=NAME]       run a demo end to end, then stop; exit 0 when it completed.
                      NAME: loan (loan broker), auction, all (default)
  --config <file>     configuration file (default: the first of fanin.config.ts, .js, .mjs, .json here)
  --prefix <prefix>   prefix of every resource name (default: the config's, else "fanin")
  --port <n>          dashboard port on 127.0.0.1 (default: the config's, 4780; 0 = any free port)
  --no-dashboard      serve no dashboard
  --state <file>      where to record the running runtime (default: $FANIN_STATE or .fanin/runtime.json)
  --quiet             do not log every output as it is published
  -h, --help          this help`;

// The SDK warns on every run that its 2027 releases need Node 22; fanin targets Node 20 on purpose.
// Set once at start-up, before any client exists (as bin/fanin.js does); the demos' processes inherit it.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

function fail(message: string, code = 1): never {
  console.error(`fanin: ${message}`);
  process.exit(code);
}

// parseArgs has no optional values: `--demo` alone means every demo.
const argv = process.argv.slice(2).map((arg) => (arg === '--demo' ? '--demo=all' : arg));
let values: {
  demo?: string;
  config?: string;
  prefix?: string;
  port?: string;
  'no-dashboard'?: boolean;
  state?: string;
  quiet?: boolean;
  help?: boolean;
};
try {
  ({ values } = parseArgs({
    args: argv,
    options: {
      demo: { type: 'string' },
      config: { type: 'string' },
      prefix: { type: 'string' },
      port: { type: 'string' },
      'no-dashboard': { type: 'boolean' },
      state: { type: 'string' },
      quiet: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  }));
} catch (error) {
  fail(`${(error as Error).message}\n\n${USAGE}`, 2);
}
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}
const demo = values.demo as DemoName | undefined;
if (demo !== undefined && !DEMOS.includes(demo))
  fail(`--demo must be one of ${DEMOS.join(', ')} (given "${demo}")`, 2);
let port: number | false | undefined;
if (values['no-dashboard']) port = false;
else if (values.port !== undefined) {
  port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65_535)
    fail(`--port must be 0-65535 (given "${values.port}")`, 2);
}

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
  if (demo === undefined) {
    log('try:  npx fanin send loan-broker --payload \'{"amount":250000,"termYears":30}\' --wait');
    log('      npx fanin --help');
    log('Ctrl-C stops.');
  }
}
