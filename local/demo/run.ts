import { type ChildProcess, fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { sqsClient } from '../../shared/aws/clients.ts';
import { FaninClient } from '../../shared/client/fanin-client.ts';
import { targetFromState } from '../connect.ts';
import { describeOutput, formatDuration, latencyOf, type OutputBody } from '../describe.ts';
import type { LocalRuntime } from '../runtime.ts';

/** The demos `npm start -- --demo[=NAME]` runs. */
export const DEMOS = ['loan', 'auction', 'all'] as const;
export type DemoName = (typeof DEMOS)[number];

/** What a demo run saw. */
export interface DemoReport {
  /** Aggregates that ended (completed or timed out), in order. */
  readonly results: readonly OutputBody[];
  /** ms from the demo's start to its first completed aggregate. */
  readonly firstCompletedMs: number | undefined;
  readonly elapsedMs: number;
}

/** Options of {@link runDemo}. */
export interface DemoOptions {
  readonly log: (line: string) => void;
  /** Give up (and fail) when the demo has not ended by then. @default 90,000 */
  readonly timeoutMs?: number;
  /** Stops the demo early (Ctrl-C). */
  readonly signal?: AbortSignal;
}

const HERE = fileURLToPath(new URL('.', import.meta.url));
const TSX = import.meta.resolve('tsx');

/**
 * Runs a demo against a started runtime: responders and producers as separate processes (each
 * through the client library, as other teams' services would be), and a consumer of fanin's
 * outputs here, which prints every aggregate as it ends. Resolves when every aggregate the demo
 * started has ended; rejects when the time runs out.
 *
 * - `loan`: seed 002's loan broker. Five bank processes with their own rates and latencies; a
 *   producer asks for three quotes. A rate at or under 3.5% completes a quote at once (time-out
 *   with override); otherwise the best quote so far is taken at the 10 s deadline, with the banks
 *   that did not answer listed as missing, and their quotes arriving later are reported as late.
 * - `auction`: seed 002's auction. Three bidder processes bid on two lots; the first bid opens each
 *   auction (self-starting), bids are correlated by auction id, the highest bid at the close wins,
 *   and a bid after the close is late.
 */
export async function runDemo(
  runtime: LocalRuntime,
  which: DemoName,
  options: DemoOptions,
): Promise<DemoReport> {
  const { log } = options;
  const definitions = runtime.topology.definitions;
  const loan = which === 'loan' || which === 'all';
  const auction = which === 'auction' || which === 'all';
  for (const [wanted, name] of [
    [loan, 'loan-broker'],
    [auction, 'auction'],
  ] as const) {
    if (wanted && !definitions.has(name)) {
      throw new Error(
        `the demo needs the definition "${name}" (see fanin.config.ts); this configuration has none`,
      );
    }
  }
  const run = randomBytes(3).toString('hex');
  const expected = new Set<string>();
  const children: ChildProcess[] = [];
  const producers: ChildProcess[] = [];
  const started = Date.now();
  const results: OutputBody[] = [];
  let firstCompletedMs: number | undefined;
  const consumer = consumeOutputs(runtime, (role, body) => {
    const line = describeOutput(body);
    if (role === 'late') {
      log(`[outputs] ⌛ ${line}`);
      return;
    }
    const aggregateId = String(body.aggregateId);
    if (!expected.has(aggregateId)) return;
    results.push(body);
    const mark = body.type === 'fanin.aggregate.completed' ? '✔' : '✖';
    log(`[outputs] ${mark} ${demoSummary(body) ?? line}`);
    if (body.type === 'fanin.aggregate.completed' && firstCompletedMs === undefined) {
      firstCompletedMs = Date.now() - started;
      log(
        `[outputs] the first completed aggregate, as fanin emitted it on ${runtime.state.queues.completed.name}:`,
      );
      for (const text of JSON.stringify(body, null, 2).split('\n')) log(`  ${text}`);
    }
  });
  try {
    // Every process starts at once: loading Node, tsx and the AWS SDK is most of a process's
    // start-up, and requests simply wait on the banks' queues until the banks are listening.
    const ready: Promise<void>[] = [];
    if (loan) {
      for (const bank of [1, 2, 3, 4, 5].map((n) => `bank-${n}`)) {
        const child = spawnChild('bank.ts', ['--bank', bank], bank, runtime, log);
        children.push(child);
        ready.push(waitForMessage(child, (m) => m.ready === bank, `${bank} did not start`));
      }
      for (let n = 1; n <= 3; n++) expected.add(`loan-${run}-${n}`);
      producers.push(
        spawnChild(
          'loan-producer.ts',
          ['--count', '3', '--interval-ms', '1500', '--run', run],
          'producer',
          runtime,
          log,
        ),
      );
    }
    if (auction) {
      const lots = [`lot-${run}-1`, `lot-${run}-2`];
      for (const lot of lots) expected.add(`auction:${lot}`);
      for (const [name, extra] of [
        ['alice', []],
        ['bob', []],
        ['carol', ['--late-ms', '9000']],
      ] as const) {
        producers.push(
          spawnChild(
            'bidder.ts',
            ['--name', name, '--auctions', lots.join(','), '--bids', '3', ...extra],
            name,
            runtime,
            log,
          ),
        );
      }
    }
    void Promise.all(ready).then(
      () =>
        log(
          `[demo] five banks are listening on ${runtime.state.responderQueues.map((q) => q.name).join(', ')}`,
        ),
      (error: unknown) => log(`[demo] ${(error as Error).message}`),
    );
    log(`[demo] waiting for ${expected.size} aggregates: ${[...expected].join(', ')}`);
    const deadline = started + (options.timeoutMs ?? 90_000);
    while (results.length < expected.size) {
      if (options.signal?.aborted) throw new Error('demo interrupted');
      if (Date.now() > deadline) {
        const ended = new Set(results.map((r) => String(r.aggregateId)));
        throw new Error(
          `demo did not end within ${formatDuration(options.timeoutMs ?? 90_000)}: still waiting for ${[
            ...expected,
          ]
            .filter((id) => !ended.has(id))
            .join(', ')}`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    // Let the producers finish (a bidder's bid after the close shows the late output).
    await settle(producers, 5_000);
    await consumer.stop();
    const elapsedMs = Date.now() - started;
    const completed = results.filter((r) => r.type === 'fanin.aggregate.completed').length;
    log(
      `[demo] done in ${formatDuration(elapsedMs)}: ${results.length} aggregates, ${completed} completed, ${
        results.length - completed
      } timed out${firstCompletedMs !== undefined ? `; first completed after ${formatDuration(firstCompletedMs)}` : ''}`,
    );
    return { results, firstCompletedMs, elapsedMs };
  } finally {
    await stopChildren([...producers, ...children]);
    await consumer.stop();
  }
}

/** The demos' results in their own words; undefined for anything else. */
export function demoSummary(body: OutputBody): string | undefined {
  const outcome = String(body.outcome ?? body.type);
  const latency = latencyOf(body);
  const head = `${String(body.definition)} ${String(body.aggregateId)} ${outcome}${
    latency !== undefined ? ` after ${formatDuration(latency)}` : ''
  }`;
  const counts = (body.counts ?? {}) as { received?: number; expected?: number | null };
  const best = (body.result ?? null) as { body?: Record<string, unknown> } | null;
  if (body.definition === 'loan-broker') {
    const missing = Array.isArray(body.missing)
      ? (body.missing as { label?: string; replyId: string }[]).map((m) => m.label ?? m.replyId)
      : [];
    const quote = best?.body
      ? `best rate ${String(best.body.rate)}% from ${String(best.body.bank)}`
      : 'no quote';
    const tail = missing.length > 0 ? `; no answer (yet) from ${missing.join(', ')}` : '';
    return `${head}: ${quote} (${counts.received ?? 0} of ${counts.expected ?? '?'} quotes${tail})`;
  }
  if (body.definition === 'auction') {
    const bid = best?.body
      ? `winning bid ${String(best.body.price)} by ${String(best.body.bidder)}`
      : 'no bids';
    return `${head}: ${bid} (${counts.received ?? 0} bids)`;
  }
  return undefined;
}

/** Forks a demo process (TypeScript through tsx), its output prefixed with its name. */
function spawnChild(
  script: string,
  args: readonly string[],
  name: string,
  runtime: LocalRuntime,
  log: (line: string) => void,
): ChildProcess {
  const child = fork(`${HERE}${script}`, [...args], {
    execArgv: ['--import', TSX],
    env: { ...process.env, FANIN_STATE: runtime.stateFile },
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  for (const stream of [child.stdout, child.stderr]) {
    if (stream) createInterface({ input: stream }).on('line', (line) => log(`[${name}] ${line}`));
  }
  child.on('exit', (code, signal) => {
    if (code !== 0 && code !== null) log(`[${name}] exited with code ${code}`);
    else if (signal && signal !== 'SIGTERM') log(`[${name}] killed by ${signal}`);
  });
  return child;
}

function waitForMessage(
  child: ChildProcess,
  matches: (message: Record<string, unknown>) => boolean,
  failure: string,
): Promise<void> {
  return new Promise((resolve, reject) => {
    const onMessage = (message: unknown) => {
      if (message && typeof message === 'object' && matches(message as Record<string, unknown>)) {
        child.off('message', onMessage);
        child.off('exit', onExit);
        resolve();
      }
    };
    const onExit = (code: number | null) => reject(new Error(`${failure} (exit code ${code})`));
    child.on('message', onMessage);
    child.once('exit', onExit);
  });
}

/** Waits until these processes have exited (producers end by themselves), at most `ms`. */
async function settle(children: readonly ChildProcess[], ms: number): Promise<void> {
  const until = Date.now() + ms;
  const running = () => children.some((c) => c.exitCode === null && c.signalCode === null);
  while (running() && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 100));
}

async function stopChildren(children: readonly ChildProcess[]): Promise<void> {
  await Promise.all(
    children.map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          const force = setTimeout(() => child.kill('SIGKILL'), 5_000);
          child.once('exit', () => {
            clearTimeout(force);
            resolve();
          });
          child.kill('SIGTERM');
        }),
    ),
  );
}

/**
 * The demo's consumer of fanin's outputs: reads the completed, timed-out and late queues as any
 * consumer would (receive, then delete), through the client library.
 */
function consumeOutputs(
  runtime: LocalRuntime,
  onOutput: (role: 'completed' | 'timed-out' | 'late', body: OutputBody) => void,
): { stop(): Promise<void> } {
  const target = targetFromState(runtime.state);
  const client = new FaninClient({ sqs: sqsClient() });
  let running = true;
  const loops = (['completed', 'timed-out', 'late'] as const).map(async (role) => {
    const queueUrl = target.queues[role].url;
    while (running) {
      try {
        for (const message of await client.receive(queueUrl, { max: 10, waitSeconds: 1 })) {
          onOutput(role, message.body as OutputBody);
          await client.ack(message);
        }
      } catch {
        // A receive that failed (the emulator busy, the runtime stopping) is simply tried again.
        if (running) await new Promise((resolve) => setTimeout(resolve, 200));
      }
    }
  });
  return {
    stop: async () => {
      running = false;
      await Promise.all(loops);
    },
  };
}
