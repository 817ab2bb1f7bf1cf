import { type ChildProcess, fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { setPriority } from 'node:os';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { FaninClient } from '../../shared/client/fanin-client.ts';
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

/** Options of {@link Demo.launch}. */
export interface LaunchOptions {
  /** The state file the runtime will write: the demo's processes find it there. */
  readonly stateFile: string;
  /** The definitions of the configuration (the demo checks its own are there). */
  readonly definitions: readonly string[];
  readonly log: (line: string) => void;
}

/** Options of {@link Demo.run}. */
export interface RunOptions {
  /** Give up (and fail) when the demo has not ended by then, counted from the launch. @default 90,000 */
  readonly timeoutMs?: number;
  /** Stops the demo early (Ctrl-C). */
  readonly signal?: AbortSignal;
}

const HERE = fileURLToPath(new URL('.', import.meta.url));
const TSX = import.meta.resolve('tsx');

/**
 * A demo: responders and producers as separate processes (each through the client library, as
 * other teams' services would be), and a consumer of fanin's outputs in the runtime, which prints
 * every aggregate as it ends.
 *
 * - `loan`: the Aggregator pattern's loan broker. Five bank processes with their own rates and latencies; a
 *   producer asks for three quotes. A rate at or under 3.5% completes a quote at once (time-out
 *   with override); otherwise the best quote so far is taken once every bank has answered or
 *   passed its own 8 s (the slow bank-5 buys time with heartbeats, up to the 10 s deadline), with
 *   the banks that did not answer listed as missing, and their quotes arriving later are reported
 *   as late. bank-4 loses the second loan's sub-request and answers fanin's retry at 3 s; the banks
 *   still working when a loan is decided get a cancellation notice.
 * - `auction`: the Aggregator pattern's auction. Three bidder processes bid on two lots; the first bid opens each
 *   auction (self-starting), bids are correlated by auction id, the highest bid at the close wins,
 *   and a bid after the close is late.
 *
 * The processes are launched before the runtime has started, because loading Node, tsx and the
 * AWS SDK is most of their start-up: they do it while the emulators start, then wait for the
 * runtime's state file. The bidders start once the banks are listening, so the first loan quote
 * does not wait for CPU behind them.
 */
export class Demo {
  private readonly options: LaunchOptions;
  private readonly launchedAt = Date.now();
  private readonly run = randomBytes(3).toString('hex');
  private readonly expected = new Set<string>();
  private readonly responders: ChildProcess[] = [];
  private readonly producers: ChildProcess[] = [];
  private stopped = false;

  private constructor(options: LaunchOptions) {
    this.options = options;
  }

  /**
   * Checks the configuration has the demo's definitions and starts its processes.
   * @throws Error naming a missing definition
   */
  public static launch(which: DemoName, options: LaunchOptions): Demo {
    const loan = which === 'loan' || which === 'all';
    const auction = which === 'auction' || which === 'all';
    for (const [wanted, name] of [
      [loan, 'loan-broker'],
      [auction, 'auction'],
    ] as const) {
      if (wanted && !options.definitions.includes(name)) {
        throw new Error(
          `the demo needs the definition "${name}" (see fanin.config.ts); this configuration has none`,
        );
      }
    }
    const demo = new Demo(options);
    const banksReady = loan ? demo.startLoanBroker() : Promise.resolve();
    if (auction) {
      const lots = [`lot-${demo.run}-1`, `lot-${demo.run}-2`];
      for (const lot of lots) demo.expected.add(`auction:${lot}`);
      void banksReady.then(() => {
        if (demo.stopped) return;
        for (const [name, extra] of [
          ['alice', []],
          ['bob', []],
          ['carol', ['--late-ms', '9000']],
        ] as const) {
          demo.producers.push(
            demo.spawn(
              'bidder.ts',
              ['--name', name, '--auctions', lots.join(','), '--bids', '3', ...extra],
              name,
            ),
          );
        }
      });
    }
    return demo;
  }

  private startLoanBroker(): Promise<void> {
    const { log } = this.options;
    const ready: Promise<void>[] = [];
    for (const bank of [1, 2, 3, 4, 5].map((n) => `bank-${n}`)) {
      const child = this.spawn('bank.ts', ['--bank', bank], bank);
      this.responders.push(child);
      ready.push(waitForMessage(child, (m) => m.ready === bank, `${bank} did not start`));
    }
    for (let n = 1; n <= 3; n++) this.expected.add(`loan-${this.run}-${n}`);
    this.producers.push(
      this.spawn(
        'loan-producer.ts',
        ['--count', '3', '--interval-ms', '1500', '--run', this.run],
        'producer',
      ),
    );
    return Promise.all(ready).then(
      () => log('[demo] five banks are listening'),
      (error: unknown) => log(`[demo] ${(error as Error).message}`),
    );
  }

  /**
   * Consumes the outputs until every aggregate the demo started has ended, then stops the demo's
   * processes. Rejects when the time runs out or the signal aborts.
   */
  public async runWith(runtime: LocalRuntime, options: RunOptions = {}): Promise<DemoReport> {
    const { log } = this.options;
    const results: OutputBody[] = [];
    let firstCompletedMs: number | undefined;
    const consumer = consumeOutputs(runtime, (role, body) => {
      const line = describeOutput(body);
      if (role === 'late') {
        log(`[outputs] ⌛ ${line}`);
        return;
      }
      if (!this.expected.has(String(body.aggregateId))) return;
      results.push(body);
      const mark = body.type === 'fanin.aggregate.completed' ? '✔' : '✖';
      log(`[outputs] ${mark} ${demoSummary(body) ?? line}`);
      if (body.type === 'fanin.aggregate.completed' && firstCompletedMs === undefined) {
        firstCompletedMs = Date.now() - startOfProcess();
        log(
          `[outputs] the first completed aggregate, as fanin emitted it on ${runtime.state.queues.completed.name}:`,
        );
        for (const text of JSON.stringify(body, null, 2).split('\n')) log(`  ${text}`);
      }
    });
    try {
      log(`[demo] waiting for ${this.expected.size} aggregates: ${[...this.expected].join(', ')}`);
      const timeoutMs = options.timeoutMs ?? 90_000;
      const deadline = this.launchedAt + timeoutMs;
      while (results.length < this.expected.size) {
        if (options.signal?.aborted) throw new Error('demo interrupted');
        if (Date.now() > deadline) {
          const ended = new Set(results.map((r) => String(r.aggregateId)));
          const waiting = [...this.expected].filter((id) => !ended.has(id));
          throw new Error(
            `demo did not end within ${formatDuration(timeoutMs)}: still waiting for ${waiting.join(', ')}`,
          );
        }
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      // Let the producers finish (a bidder's bid after the close shows the late output).
      await settle(this.producers, 5_000);
      await consumer.stop();
      const elapsedMs = Date.now() - this.launchedAt;
      const completed = results.filter((r) => r.type === 'fanin.aggregate.completed').length;
      const first =
        firstCompletedMs !== undefined
          ? `; the first completed ${formatDuration(firstCompletedMs)} after the start`
          : '';
      log(
        `[demo] done in ${formatDuration(elapsedMs)}: ${results.length} aggregates, ${completed} completed, ${
          results.length - completed
        } timed out${first}`,
      );
      return { results, firstCompletedMs, elapsedMs };
    } finally {
      await consumer.stop();
      await this.stop();
    }
  }

  /** Stops every process of the demo (SIGTERM, then SIGKILL after 5 s). */
  public async stop(): Promise<void> {
    this.stopped = true;
    await stopChildren([...this.producers, ...this.responders]);
  }

  /** Forks a demo process (TypeScript through tsx), its output prefixed with its name. */
  private spawn(script: string, args: readonly string[], name: string): ChildProcess {
    const { log, stateFile } = this.options;
    const child = fork(`${HERE}${script}`, [...args], {
      execArgv: ['--import', TSX],
      // FANIN_RUNTIME_PID: wait for the state file of this runtime, not a stale one.
      env: { ...process.env, FANIN_STATE: stateFile, FANIN_RUNTIME_PID: String(process.pid) },
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    });
    // Loading Node, tsx and the SDK in nine processes at once would starve the runtime's own start
    // (the emulators, provisioning) on a small machine: the demo's processes yield the CPU to it.
    // They are mostly waiting once loaded, so a lower priority costs them nothing later.
    if (child.pid !== undefined) {
      try {
        setPriority(child.pid, 10);
      } catch {
        // Not permitted here (some containers): they simply compete as equals.
      }
    }
    for (const stream of [child.stdout, child.stderr]) {
      if (stream) createInterface({ input: stream }).on('line', (line) => log(`[${name}] ${line}`));
    }
    child.on('exit', (code, signal) => {
      if (code !== 0 && code !== null) log(`[${name}] exited with code ${code}`);
      else if (signal && signal !== 'SIGTERM') log(`[${name}] killed by ${signal}`);
    });
    return child;
  }
}

/** When this process started (what a user counts from when they type `npm start`). */
function startOfProcess(): number {
  return Math.round(performance.timeOrigin);
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
  const client = new FaninClient({ sqs: runtime.clients.sqs });
  let running = true;
  const loops = (['completed', 'timed-out', 'late'] as const).map(async (role) => {
    const queueUrl = runtime.state.queues[role].url;
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
