import { createHash } from 'node:crypto';
import { setFlagsFromString } from 'node:v8';
import { MessageChannel, type MessagePort, receiveMessageOnPort, Worker } from 'node:worker_threads';
import jsonata from 'jsonata';
import { ExpressionError } from '../errors.ts';
import { EXPRESSION_LIMITS } from './constants.ts';

/** Budget for one evaluation: wall time and evaluation depth. */
export interface ExpressionLimits {
  readonly timeoutMs: number;
  readonly maxDepth: number;
}

/**
 * What makes an evaluation a pure function of its input: the time `$now()` and `$millis()` return
 * (epoch ms) and the seed of `$random()` and `$shuffle()`. A result built twice from the same
 * members — by its owner, by a resumer after a crash, on every channel — is then the same bytes.
 */
export interface FixedInputs {
  /** Epoch ms: the seal's `completingAt` for a result, the period's time for a snapshot. */
  readonly at: number;
  /** Seeds the pseudo-random sequence (the aggregate id): the same sequence every evaluation. */
  readonly seed: string;
}

/**
 * A compiled JSONata expression whose every evaluation is bounded in time and depth — inside a
 * regular expression too ({@link boundedRegExpEngine}) — so a runaway user expression fails one message instead
 * of hanging a handler.
 *
 * @example
 * const best = compileExpression('$min(replies.rate)');
 * await best.evaluate({ replies: [{ rate: 3.1 }, { rate: 2.9 }] }); // 2.9
 */
export interface BoundedExpression {
  readonly source: string;
  /**
   * Evaluates over `input`. With `fixed`, `$now()`, `$millis()`, `$random()` and `$shuffle()`
   * answer from it instead of the clock and `Math.random`.
   */
  evaluate(input: unknown, bindings?: Record<string, unknown>, fixed?: FixedInputs): Promise<unknown>;
}

const cache = new Map<string, BoundedExpression>();

/**
 * Compiles (and caches) a JSONata expression. Throws {@link ExpressionError} when it does not parse.
 */
export function compileExpression(
  source: string,
  limits: ExpressionLimits = EXPRESSION_LIMITS,
): BoundedExpression {
  const key = `${limits.timeoutMs}/${limits.maxDepth}/${source}`;
  const cached = cache.get(key);
  if (cached) return cached;
  let compiled: jsonata.Expression;
  try {
    compiled = jsonata(source, {
      timeout: limits.timeoutMs,
      stack: limits.maxDepth,
      // jsonata's typings omit the option it documents: the class its regex literals are built with.
      RegexEngine: boundedRegExpEngine(limits.timeoutMs),
    } as jsonata.JsonataOptions);
  } catch (error) {
    throw new ExpressionError(source, describe(error), { cause: error });
  }
  // A pattern only the worker can run starts the worker now, at definition load, not in a budget.
  const needsWorker = regexLiterals(compiled.ast()).some((re) => linearOf(re) === undefined);
  if (needsWorker) regexWorker();
  const bounded: BoundedExpression = {
    source,
    async evaluate(input, bindings, fixed) {
      try {
        // A worker still starting (the first evaluation, or just after one was ended) is waited
        // for here, outside the budget, which then counts the evaluation alone.
        if (needsWorker) await regexWorker().whenReady();
        const all = fixed ? { ...bindings, ...(await fixedBindings(fixed)) } : bindings;
        return normalise(await compiled.evaluate(input, all));
      } catch (error) {
        throw new ExpressionError(source, describe(error), { cause: error });
      }
    },
  };
  cache.set(key, bounded);
  return bounded;
}

/**
 * `$now` and `$millis` as JSONata functions over a fixed time: defined in JSONata itself, so
 * `$now(picture, timezone)` formats exactly as the built-in does.
 */
const CLOCK = jsonata(
  '{ "now": function($picture, $timezone) { $fromMillis($at, $picture, $timezone) }, "millis": function() { $at } }',
);

/** The bindings that replace the clock and `Math.random` for one evaluation. */
async function fixedBindings(fixed: FixedInputs): Promise<Record<string, unknown>> {
  const clock = (await CLOCK.evaluate({}, { at: fixed.at })) as Record<string, unknown>;
  const random = seededRandom(fixed.seed);
  return {
    ...clock,
    random: () => random(),
    // The built-in shuffles with Math.random: the same Fisher–Yates over the seeded sequence.
    shuffle: (value: unknown) => {
      if (value === undefined) return undefined;
      if (!Array.isArray(value)) return value;
      const out = [...value];
      for (let i = out.length - 1; i > 0; i -= 1) {
        const j = Math.floor(random() * (i + 1));
        [out[i], out[j]] = [out[j], out[i]];
      }
      return out;
    },
  };
}

/**
 * A pseudo-random sequence in [0, 1) determined by `seed` (sfc32 over SHA-256 of the seed): each
 * evaluation starts it anew, so two evaluations with the same seed draw the same numbers.
 */
export function seededRandom(seed: string): () => number {
  const digest = createHash('sha256').update(seed).digest();
  let a = digest.readUInt32LE(0);
  let b = digest.readUInt32LE(4);
  let c = digest.readUInt32LE(8);
  let d = digest.readUInt32LE(12);
  return () => {
    const t = (((a + b) | 0) + d) | 0;
    d = (d + 1) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) | 0;
    return (t >>> 0) / 4294967296;
  };
}

/** JSONata errors are plain objects with a code; turn them into one readable line. */
function describe(error: unknown): string {
  if (error && typeof error === 'object') {
    const { code, message } = error as { code?: unknown; message?: unknown };
    if (code === 'D1012') return 'exceeded its time budget';
    if (code === 'D1011') return 'exceeded its depth budget';
    const text = typeof message === 'string' ? message : String(error);
    return typeof code === 'string' ? `${code}: ${text}` : text;
  }
  return String(error);
}

/** JSONata sequences are arrays with extra flags; hand back plain JSON values. */
function normalise(value: unknown): unknown {
  if (value === undefined) return undefined;
  return JSON.parse(JSON.stringify(value));
}

// ---- regular expressions under the budget ----
//
// JSONata checks its time budget between evaluation steps; a regular expression runs as one native
// call, and a backtracking one (`/^(a|a)*$/` over 30 characters) can run for minutes inside it.
// So every regex literal of a user expression is built by this engine instead of `RegExp`:
// - a pattern V8's linear-time engine can run (no backreference, lookaround, word boundary,
//   `i` or `m` flag on this V8) runs there, in this thread: its time grows with the input only;
// - any other pattern runs in one long-lived worker thread, and this thread waits for its answer
//   at most the budget (an evaluation first waits, outside its budget, for a worker to start);
//   past it the worker is ended (the next one starts at once) and the evaluation fails with
//   "exceeded its time budget", the outcome any over-budget expression has.

// Lets `new RegExp(source, 'l')` ask for V8's linear-time engine (the same ECMAScript semantics);
// it changes no other regex. (V8's fallback to that engine on excessive backtracking is not
// used: it is process-wide, worker threads included, where it made matches end early.)
setFlagsFromString('--enable-experimental-regexp-engine');

/** How long a worker that is starting may take before the budget of its first match begins. */
const WORKER_START_MS = 5_000;

/** What jsonata reads of a regex: `exec` and `lastIndex` (it builds each with the `g` flag). */
interface RegexLike {
  lastIndex: number;
  exec(input: string): RegExpExecArray | null;
}

/**
 * The class jsonata builds regex literals with (its `RegexEngine` option), for one time budget:
 * each match ends within `timeoutMs`, or the evaluation fails as over budget.
 */
export function boundedRegExpEngine(timeoutMs: number): new (pattern: RegExp) => RegexLike {
  return class BoundedRegExp implements RegexLike {
    public lastIndex = 0;
    private readonly linear: RegExp | undefined;
    private readonly source: string;
    private readonly flags: string;

    public constructor(pattern: RegExp) {
      this.source = pattern.source;
      this.flags = pattern.flags;
      this.linear = linearOf(pattern);
    }

    public exec(input: string): RegExpExecArray | null {
      if (this.linear) {
        this.linear.lastIndex = this.lastIndex;
        const match = this.linear.exec(input);
        this.lastIndex = this.linear.lastIndex;
        return match;
      }
      const answer = regexWorker().exec(this.source, this.flags, input, this.lastIndex, timeoutMs);
      this.lastIndex = answer.lastIndex;
      if (answer.match === null) return null;
      const match = Object.assign([...answer.match], { index: answer.index, input }) as RegExpExecArray;
      return match;
    }
  };
}

const linearCache = new Map<string, RegExp | null>();

/** The pattern on V8's linear-time engine, or `undefined` when that engine cannot run it. */
function linearOf(pattern: RegExp): RegExp | undefined {
  const key = `${pattern.flags}/${pattern.source}`;
  let cached = linearCache.get(key);
  if (cached === undefined) {
    try {
      cached = new RegExp(pattern.source, `${pattern.flags}l`);
    } catch {
      cached = null;
    }
    linearCache.set(key, cached);
  }
  // A fresh object per literal evaluation: lastIndex is per use, as jsonata expects.
  return cached === null ? undefined : new RegExp(cached);
}

interface WorkerAnswer {
  readonly match: (string | undefined)[] | null;
  readonly index: number;
  readonly lastIndex: number;
  readonly error?: string;
}

/** The worker's code: self-contained (a bundle has no file to start a worker from). */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const signal = new Int32Array(workerData.signal);
const port = workerData.port;
const cache = new Map();
Atomics.store(signal, 1, 1);
Atomics.notify(signal, 1);
parentPort.on('message', ({ seq, source, flags, input, lastIndex }) => {
  let answer;
  try {
    const key = flags + '/' + source;
    let re = cache.get(key);
    if (!re) { re = new RegExp(source, flags); if (cache.size > 256) cache.clear(); cache.set(key, re); }
    re.lastIndex = lastIndex;
    const m = re.exec(input);
    answer = { match: m === null ? null : Array.from(m), index: m === null ? -1 : m.index, lastIndex: re.lastIndex };
  } catch (error) {
    answer = { match: null, index: -1, lastIndex: 0, error: String(error && error.message || error) };
  }
  port.postMessage(answer);
  Atomics.store(signal, 0, seq);
  Atomics.notify(signal, 0);
});
`;

/** One long-lived worker per process that runs the regexes the linear engine cannot, synchronously. */
class RegexWorker {
  private readonly signal = new Int32Array(new SharedArrayBuffer(8));
  private readonly port: MessagePort;
  private readonly worker: Worker;
  private seq = 0;
  /** Settles once the worker runs (or could not start: its first match then reports why). */
  public readonly ready: Promise<void>;
  /** Evaluations waiting for {@link ready}: while there are any, the worker keeps the process alive. */
  private waiting = 0;

  public constructor() {
    const { port1, port2 } = new MessageChannel();
    this.port = port1;
    this.worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { signal: this.signal.buffer, port: port2 },
      transferList: [port2],
    });
    // Never keeps a process (a test run, a Lambda's event loop) alive.
    this.worker.unref();
    this.ready = new Promise((resolve) => {
      this.worker.once('online', () => resolve());
      this.worker.once('error', () => resolve());
      this.worker.once('exit', () => resolve());
    });
    this.port.unref();
  }

  /**
   * {@link ready}, the worker ref'd while it is awaited: an evaluation waiting for the worker to
   * start keeps the event loop alive (unref'd, a script or `node --test` whose only work left is
   * that wait would exit with it pending), and an idle worker keeps nothing alive.
   */
  public async whenReady(): Promise<void> {
    this.waiting += 1;
    if (this.waiting === 1) this.worker.ref();
    try {
      await this.ready;
    } finally {
      this.waiting -= 1;
      if (this.waiting === 0) this.worker.unref();
    }
  }

  /** One `exec`, answered within `timeoutMs`; past it the worker is ended and a budget error thrown. */
  public exec(
    source: string,
    flags: string,
    input: string,
    lastIndex: number,
    timeoutMs: number,
  ): WorkerAnswer {
    if (Atomics.load(this.signal, 1) === 0) Atomics.wait(this.signal, 1, 0, WORKER_START_MS);
    // The worker writes the number of the request it answered: a late wake-up from an earlier
    // answer's notify is told apart from this one's.
    this.seq = (this.seq % 0x7fffffff) + 1;
    const seq = this.seq;
    this.worker.postMessage({ seq, source, flags, input, lastIndex });
    const until = performance.now() + timeoutMs;
    for (let seen = Atomics.load(this.signal, 0); seen !== seq; seen = Atomics.load(this.signal, 0)) {
      const left = until - performance.now();
      if (left <= 0 || Atomics.wait(this.signal, 0, seen, left) === 'timed-out') {
        if (Atomics.load(this.signal, 0) === seq) break;
        this.end();
        throw { code: 'D1012', value: timeoutMs };
      }
    }
    const received = receiveMessageOnPort(this.port);
    if (!received) {
      this.end();
      throw new Error('the regular expression worker answered nothing');
    }
    const answer = received.message as WorkerAnswer;
    if (answer.error !== undefined) throw new Error(answer.error);
    return answer;
  }

  /** Ends this worker (its match may never return) and starts the next one at once. */
  private end(): void {
    void this.worker.terminate();
    this.port.close();
    if (current === this) current = new RegexWorker();
  }
}

let current: RegexWorker | undefined;

function regexWorker(): RegexWorker {
  current ??= new RegexWorker();
  return current;
}

/** Every regex literal of a parsed expression. */
function regexLiterals(node: unknown, found: RegExp[] = [], seen = new Set<unknown>()): RegExp[] {
  if (node === null || typeof node !== 'object' || seen.has(node)) return found;
  seen.add(node);
  if (node instanceof RegExp) found.push(node);
  else for (const value of Object.values(node)) regexLiterals(value, found, seen);
  return found;
}
