import { AsyncLocalStorage } from 'node:async_hooks';
import { createHash } from 'node:crypto';
import type { Random } from './random.ts';

/**
 * The simulation's one scheduler: virtual time, the simulated Lambda invocations (tasks) and the
 * AWS calls they wait on. Every AWS call fanin makes is an await point: the call is held until the
 * scheduler picks it (seeded) among every call pending, applies it to the models, and lets the
 * microtasks that follow settle before it picks the next. Only one call is applied at a time, so
 * concurrent invocations interleave at every call, and a run is a pure function of its seed.
 */

/** One simulated invocation (a Lambda invocation, a responder, the sweeper). */
export interface Task {
  readonly id: number;
  /** What it is, e.g. `reply:0` or `fanout`; part of the trace. */
  readonly name: string;
  /** Milliseconds its clock is ahead of (or behind) virtual time. */
  readonly skew: number;
  /** The virtual time it was spawned at: every read it makes comes after it. */
  readonly startedAt: number;
  /** Abandoned at an AWS call: no call of it is ever applied or answered again. */
  crashed: boolean;
  /**
   * No fault touches it: a message's last delivery before its DLQ runs calm, so a run's faults
   * never exhaust a retry budget that AWS's own failure rates would not. A drain becomes calm
   * once it receives such a delivery.
   */
  calm: boolean;
  done: boolean;
  /** The handler's error, when it threw. */
  error?: unknown;
  /** Called once when it ends: with its value, or undefined when it threw or crashed. */
  onDone?: (value: unknown, how: TaskEnd) => void;
}

/** How a task ended. */
export type TaskEnd = 'returned' | 'threw' | 'crashed';

/** What the fault plan does with a call the scheduler picked. */
export type CallFate =
  | { readonly kind: 'apply' }
  /** Refused before it takes effect (throttling, a 500). */
  | { readonly kind: 'fail-before'; readonly error: string }
  /** Takes effect, then its caller sees a timeout. */
  | { readonly kind: 'fail-after'; readonly error: string }
  /** The invocation dies here: before the call (`before`) or just after it took effect. */
  | { readonly kind: 'crash'; readonly afterEffect: boolean }
  /**
   * The invocation stalls this long before the call: past its lease or the visibility timeout, or
   * (`withinLease`) a while shorter than its lease, which excuses nothing (see {@link Scheduler.faulted}).
   */
  | { readonly kind: 'pause'; readonly ms: number; readonly withinLease?: boolean };

/** An AWS call waiting for the scheduler. */
export interface PendingCall {
  readonly seq: number;
  readonly task: Task;
  readonly service: string;
  readonly command: string;
  readonly input: unknown;
  readonly apply: () => unknown;
  readyAt: number;
  paused: boolean;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

/** Decides each picked call's fate; the world's fault plan. */
export type FaultPlan = (call: PendingCall) => CallFate;

/** Observes each call that took effect (the recorder of outputs and sent messages). */
export type CallObserver = (call: PendingCall, result: unknown) => void;

/** Looks at each call just before it is applied (the models as they stand before it). */
export type CallInspector = (call: PendingCall) => void;

/** An error shaped like the SDK's (`name`, `$metadata`, `$retryable`). */
export function sdkError(name: string, message = name): Error {
  const error = new Error(message) as Error & Record<string, unknown>;
  error.name = name;
  error.$fault = name === 'InternalServerError' || name === 'TimeoutError' ? 'server' : 'client';
  error.$metadata = { httpStatusCode: name === 'InternalServerError' ? 500 : 400 };
  return error;
}

/** The trace of a run: every decision, hashed as it goes (and kept in full when asked for). */
export class Trace {
  private readonly hash = createHash('sha256');
  private readonly shape = createHash('sha256');
  public readonly lines: string[] | undefined;
  public events = 0;

  public constructor(keep: boolean) {
    this.lines = keep ? [] : undefined;
  }

  /** Records one event; `shape` is its id-free form, for counting distinct interleavings. */
  public add(line: string, shape?: string): void {
    this.events += 1;
    this.hash.update(line);
    this.hash.update('\n');
    if (shape !== undefined) this.shape.update(`${shape}\n`);
    this.lines?.push(line);
  }

  /** The hash of every event so far (ends the trace). */
  public digest(): { full: string; shape: string } {
    return { full: this.hash.digest('hex'), shape: this.shape.digest('hex') };
  }
}

const NEVER = new Promise<never>(() => {});

export class Scheduler {
  /** Virtual time, epoch milliseconds. */
  public now: number;
  public readonly random: Random;
  public readonly trace: Trace;
  public faults: FaultPlan = () => ({ kind: 'apply' });
  public observer: CallObserver = () => {};
  public inspector: CallInspector = () => {};
  /**
   * The tasks a fault touched that may leave work for another invocation to redo (a crash, a
   * failed or timed-out call, a pause past the lease or the visibility timeout): a second copy of
   * an output is expected only of them (invariant `published-once`).
   */
  public readonly faulted = new Set<number>();
  /**
   * Tasks started, calls applied, and the bytes of their answers (the JSON the trace digests):
   * the run's figures, and its work budget (sim/world.ts).
   */
  public readonly counts = { tasks: 0, calls: 0, crashes: 0, bytes: 0 };
  private readonly storage = new AsyncLocalStorage<Task>();
  private readonly pending: PendingCall[] = [];
  private readonly timers: { at: number; seq: number; fn: () => void }[] = [];
  private readonly running = new Set<Task>();
  private seq = 0;

  public constructor(options: { start: number; random: Random; keepTrace?: boolean }) {
    this.now = options.start;
    this.random = options.random;
    this.trace = new Trace(options.keepTrace ?? false);
  }

  /** The task whose code is running, if any (AsyncLocalStorage follows it through its awaits). */
  public current(): Task | undefined {
    return this.storage.getStore();
  }

  /** The clock of the running task: virtual time plus its skew. */
  public readonly clock = (): number => this.now + (this.current()?.skew ?? 0);

  /** Invocations still running (not done, not crashed). */
  public get active(): number {
    return this.running.size;
  }

  /** Starts a task; its AWS calls wait on the scheduler. Returns it (its outcome lands on it). */
  public spawn(
    name: string,
    skew: number,
    body: () => Promise<unknown>,
    onDone?: (value: unknown, how: TaskEnd) => void,
    calm = false,
  ): Task {
    this.seq += 1;
    const task: Task = {
      id: this.seq,
      name,
      skew,
      startedAt: this.now,
      crashed: false,
      done: false,
      calm,
      ...(onDone ? { onDone } : {}),
    };
    this.counts.tasks += 1;
    this.running.add(task);
    this.trace.add(
      `t=${this.now} spawn #${task.id} ${name} skew=${skew}${calm ? ' calm' : ''}`,
      `spawn ${name}`,
    );
    this.storage.run(task, () => {
      body().then(
        (value) => {
          if (task.crashed) return;
          task.done = true;
          this.running.delete(task);
          onDone?.(value, 'returned');
        },
        (error: unknown) => {
          if (task.crashed) return;
          task.done = true;
          task.error = error;
          this.running.delete(task);
          this.trace.add(
            `t=${this.now} #${task.id} threw ${(error as Error)?.name}: ${String((error as Error)?.message).slice(0, 200)}`,
          );
          onDone?.(undefined, 'threw');
        },
      );
    });
    return task;
  }

  /**
   * The await point of every AWS call (`clientsOver`'s intercept): a call outside any task (the
   * world's own set-up) is applied at once; a task's call waits until the scheduler picks it.
   */
  public readonly intercept = (
    service: string,
    command: string,
    input: unknown,
    apply: () => unknown,
  ): Promise<unknown> => {
    const task = this.current();
    if (task === undefined) {
      try {
        return Promise.resolve(apply());
      } catch (error) {
        return Promise.reject(error);
      }
    }
    if (task.crashed) return NEVER;
    return new Promise((resolve, reject) => {
      this.seq += 1;
      // Each call takes a little time; now and then a long while (a slow network, a cold start).
      const latency = this.random.chance(0.02) ? this.random.between(200, 3000) : this.random.between(1, 40);
      this.pending.push({
        seq: this.seq,
        task,
        service,
        command,
        input,
        apply,
        readyAt: this.now + latency,
        paused: false,
        resolve,
        reject,
      });
    });
  };

  /** Runs `fn` at virtual time `at` (at once when it is past). */
  public at(at: number, fn: () => void): void {
    this.seq += 1;
    this.timers.push({ at: Math.max(at, this.now), seq: this.seq, fn });
  }

  /** Lets every microtask and immediate that the last step started run, until nothing moves. */
  public async settle(): Promise<void> {
    for (let round = 0; round < 1000; round += 1) {
      const before = this.pending.length + this.running.size * 100_000 + this.timers.length * 7;
      await new Promise<void>((resolve) => setImmediate(resolve));
      const after = this.pending.length + this.running.size * 100_000 + this.timers.length * 7;
      if (before === after) return;
    }
  }

  /**
   * One scheduling decision: applies one ready call (chosen by the seed), or moves time to the
   * next thing due and fires what is due then. `idle` is asked what the world has next (a message
   * becoming visible, a schedule); returns false when nothing is left before `horizon`.
   */
  public async step(horizon: number, nextWorldEvent: () => number | undefined): Promise<boolean> {
    const ready = this.pending.filter((c) => c.readyAt <= this.now);
    if (ready.length > 0) {
      const call = ready[this.random.int(ready.length)] as PendingCall;
      await this.process(call);
      await this.settle();
      return true;
    }
    let next = Number.POSITIVE_INFINITY;
    for (const c of this.pending) next = Math.min(next, c.readyAt);
    for (const t of this.timers) next = Math.min(next, t.at);
    const world = nextWorldEvent();
    if (world !== undefined) next = Math.min(next, world);
    if (!Number.isFinite(next) || next > horizon) return false;
    this.now = Math.max(this.now, next);
    this.timers.sort((a, b) => a.at - b.at || a.seq - b.seq);
    while (this.timers.length > 0 && (this.timers[0] as { at: number }).at <= this.now) {
      const timer = this.timers.shift() as { fn: () => void };
      timer.fn();
    }
    await this.settle();
    return true;
  }

  private async process(call: PendingCall): Promise<void> {
    const { task } = call;
    const tag = `t=${this.now} #${task.id} ${task.name} ${call.service}.${call.command}${this.trace.lines ? ` ${summary(call.input)}` : ''}`;
    const shape = `${task.name.split(':')[0]} ${call.command}`;
    if (task.crashed) {
      this.remove(call);
      return;
    }
    // A call a finished invocation left running (its environment's background work) is not faulted:
    // Lambda freezes it and lets it finish in the environment's next invocation.
    const fate: CallFate = call.paused || task.calm || task.done ? { kind: 'apply' } : this.faults(call);
    if (fate.kind !== 'apply' && !(fate.kind === 'pause' && fate.withinLease)) this.faulted.add(task.id);
    if (fate.kind === 'pause') {
      call.paused = true;
      call.readyAt = this.now + fate.ms;
      this.trace.add(
        `${tag} paused ${fate.ms}ms${fate.withinLease ? ' within its lease' : ''}`,
        `${shape} pause`,
      );
      return;
    }
    this.remove(call);
    if (fate.kind === 'crash') {
      if (fate.afterEffect) this.applyQuietly(call);
      task.crashed = true;
      this.running.delete(task);
      // The invocation is gone: its event source learns it failed (its concurrency slot is free).
      task.onDone?.(undefined, 'crashed');
      this.counts.crashes += 1;
      this.trace.add(`${tag} crash ${fate.afterEffect ? 'after' : 'before'}`, `${shape} crash`);
      return;
    }
    if (fate.kind === 'fail-before') {
      this.trace.add(`${tag} fail ${fate.error}`, `${shape} fail`);
      call.reject(sdkError(fate.error));
      return;
    }
    if (fate.kind === 'fail-after') {
      this.applyQuietly(call);
      this.trace.add(`${tag} applied then ${fate.error}`, `${shape} timeout`);
      call.reject(sdkError(fate.error));
      return;
    }
    try {
      this.inspector(call);
      const result = call.apply();
      this.counts.calls += 1;
      this.observer(call, result);
      const digest = digestOf(result);
      this.counts.bytes += digest.length;
      this.trace.add(`${tag} ok ${digest.hash}`, shape);
      call.resolve(result);
    } catch (error) {
      this.trace.add(`${tag} error ${(error as Error).name}`, `${shape} error`);
      call.reject(error);
    }
  }

  /** Applies a call whose caller will not see the answer (a crash or a timeout after the effect). */
  private applyQuietly(call: PendingCall): void {
    try {
      this.inspector(call);
      const result = call.apply();
      this.counts.calls += 1;
      this.observer(call, result);
    } catch {
      // The caller never learns of it either way.
    }
  }

  private remove(call: PendingCall): void {
    const index = this.pending.indexOf(call);
    if (index >= 0) this.pending.splice(index, 1);
  }

  /** The tasks still running (each waits on something that is not an AWS call of the models). */
  public stillRunning(): string[] {
    return [...this.running].map((t) => `#${t.id} ${t.name}`);
  }

  /** True when a task of the given name prefix is still running (or holds a pending call). */
  public busy(prefix: string): number {
    let n = 0;
    for (const task of this.running) if (task.name.startsWith(prefix)) n += 1;
    return n;
  }
}

/** What a call is about, for a replayed trace: its keys, queue, bucket key (never whole bodies). */
function summary(input: unknown): string {
  const i = (input ?? {}) as Record<string, unknown>;
  const key = (i.Key ?? i.Item) as Record<string, unknown> | undefined;
  const parts: string[] = [];
  if (key)
    parts.push(
      `${String(key.pk).slice(0, 80)} ${String(key.sk).slice(0, 40)}${key.dueAt !== undefined ? ` dueAt=${String(key.dueAt)}` : ''}${key.expiresAt !== undefined ? ` expiresAt=${String(key.expiresAt)}` : ''}`,
    );
  if (typeof i.ConditionExpression === 'string') parts.push(`if ${i.ConditionExpression.slice(0, 80)}`);
  if (typeof i.UpdateExpression === 'string') parts.push(`do ${i.UpdateExpression.slice(0, 120)}`);
  if (Array.isArray(i.TransactItems)) {
    for (const t of i.TransactItems as Record<
      string,
      { Key?: Record<string, unknown>; Item?: Record<string, unknown> }
    >[]) {
      const [op, body] = Object.entries(t)[0] ?? [];
      const k = body?.Key ?? body?.Item;
      parts.push(`${op} ${String(k?.pk).slice(0, 60)} ${String(k?.sk).slice(0, 30)}`);
    }
  }
  if (typeof i.QueueUrl === 'string') parts.push(i.QueueUrl.slice(i.QueueUrl.lastIndexOf('/') + 1));
  if (typeof i.Key === 'string') parts.push(i.Key);
  if (i.ExpressionAttributeValues) parts.push(JSON.stringify(i.ExpressionAttributeValues).slice(0, 200));
  return parts.join(' | ');
}

/** A short, stable digest of a call's answer for the trace, and the length of its JSON. */
function digestOf(result: unknown): { hash: string; length: number } {
  if (result === undefined) return { hash: '-', length: 0 };
  let text: string;
  try {
    text = JSON.stringify(result, (_key, value: unknown) =>
      typeof value === 'bigint' ? String(value) : value,
    );
  } catch {
    text = String(result);
  }
  return {
    hash: createHash('sha1')
      .update(text ?? '')
      .digest('hex')
      .slice(0, 10),
    length: text?.length ?? 0,
  };
}
