import { neutralise } from './determinism.ts';
import type { FaultCounts } from './faults.ts';
import { FAULT_KINDS, noFaults } from './faults.ts';
import { checkInvariants, type Violation } from './invariants.ts';
import { World } from './world.ts';

/** What one seed's run came to. */
export interface SeedResult {
  readonly seed: number;
  /** The hash of every scheduling decision, call, delivery and fault: equal for equal seeds. */
  readonly traceHash: string;
  /** The hash of the run's schedule without ids (handler kinds, commands, faults). */
  readonly shapeHash: string;
  readonly violations: readonly Violation[];
  readonly faults: FaultCounts;
  readonly steps: number;
  readonly calls: number;
  readonly tasks: number;
  readonly aggregates: number;
  /** How much of looking after the responders the run exercised. */
  readonly responders: ResponderCounts;
  /** The full trace, when asked for. */
  readonly trace?: readonly string[];
  /** Every output published, in order, when the trace was asked for. */
  readonly publications?: readonly { channel: string; at: number; text: string }[];
  /** A handler that threw something other than an SDK error, if any (a bug in the simulation or fanin). */
  readonly error?: string;
}

/**
 * Retries and cancellation notices sent, heartbeats sent, recipients a result says timed out, and
 * recipients a result says failed an attempt that was asked again.
 */
export interface ResponderCounts {
  retries: number;
  heartbeats: number;
  timedOut: number;
  notices: number;
  failedAgain: number;
}

/** What a run's ledger shows of looking after the responders. */
export function responderCounts(ledger: World['ledger']): ResponderCounts {
  let timedOut = 0;
  let failedAgain = 0;
  for (const p of ledger.publications) {
    if (!p.text.includes('"recipients"') || p.channel === 'events') continue;
    const output = JSON.parse(p.text) as {
      id?: string;
      recipients?: { fate: string; failedAttempt?: number }[];
    };
    if (output.id?.endsWith('/result') !== true) continue;
    timedOut += (output.recipients ?? []).filter((r) => r.fate === 'timed-out').length;
    failedAgain += (output.recipients ?? []).filter((r) => r.failedAttempt !== undefined).length;
  }
  return {
    retries: ledger.asked.filter((s) => s.attempt >= 2).length,
    heartbeats: ledger.inputs.filter((i) => i.kind === 'heartbeat').length,
    timedOut,
    notices: ledger.cancellations.length,
    failedAgain,
  };
}

/** Runs one seed to quiescence and checks every invariant. */
export async function simulateSeed(
  seed: number,
  options: { keepTrace?: boolean; big?: boolean; pending?: boolean } = {},
): Promise<SeedResult> {
  const world = new World(seed, options);
  const restore = neutralise(world.scheduler);
  let error: string | undefined;
  try {
    await world.run();
  } catch (thrown) {
    error = thrown instanceof Error ? `${thrown.name}: ${thrown.message}\n${thrown.stack}` : String(thrown);
  } finally {
    restore();
  }
  const violations = error
    ? [{ invariant: 'simulation', detail: error }]
    : checkInvariants(world.ledger, world.workload.definitions, { pending: options.pending ?? false });
  const digest = world.scheduler.trace.digest();
  const aggregates = new Set(world.ledger.inputs.map((i) => i.aggregateId).filter((id) => id !== undefined))
    .size;
  return {
    seed: world.seed,
    traceHash: digest.full,
    shapeHash: digest.shape,
    violations,
    faults: world.faults,
    steps: world.steps,
    calls: world.scheduler.counts.calls,
    tasks: world.scheduler.counts.tasks,
    aggregates,
    responders: responderCounts(world.ledger),
    ...(world.scheduler.trace.lines
      ? { trace: world.scheduler.trace.lines, publications: world.ledger.publications }
      : {}),
    ...(error ? { error } : {}),
  };
}

/** Figures over many seeds. */
export interface Summary {
  seeds: number;
  seconds: number;
  failures: SeedResult[];
  shapes: Set<string>;
  traces: Set<string>;
  faults: FaultCounts;
  calls: number;
  aggregates: number;
  responders: ResponderCounts;
}

/** A fresh summary. */
export function emptySummary(): Summary {
  return {
    seeds: 0,
    seconds: 0,
    failures: [],
    shapes: new Set(),
    traces: new Set(),
    faults: noFaults(),
    calls: 0,
    aggregates: 0,
    responders: { retries: 0, heartbeats: 0, timedOut: 0, notices: 0, failedAgain: 0 },
  };
}

/** Adds one seed's result to a summary. */
export function add(summary: Summary, result: SeedResult): void {
  summary.seeds += 1;
  summary.shapes.add(result.shapeHash);
  summary.traces.add(result.traceHash);
  summary.calls += result.calls;
  summary.aggregates += result.aggregates;
  for (const kind of ['retries', 'heartbeats', 'timedOut', 'notices', 'failedAgain'] as const)
    summary.responders[kind] += result.responders[kind];
  for (const kind of FAULT_KINDS) summary.faults[kind] += result.faults[kind];
  if (result.violations.length > 0) summary.failures.push(result);
}
