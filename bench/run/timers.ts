import { type Counters, diff, total } from '../measure/counters.ts';
import type { Rig } from '../rig/rig.ts';
import { Bodies, runFanin } from '../workload/phases.ts';
import { sleep } from '../workload/sleep.ts';
import { log } from './log.ts';

/** How the requests of a timer variant were sent, and so how their deadline timers were armed. */
export type TimerVariant = 'batched' | 'paced';

/** The variant whose firing the arrival patterns' all-in figures include. */
export const ARRIVAL_TIMER_VARIANT: TimerVariant = 'batched';

/** Requests per second of the `paced` variant. */
export const PACED_REQUESTS_PER_SECOND = 20;

/** The deadline timers' firing, measured apart from the aggregates they were armed for. */
export interface TimerFiring {
  readonly variant: TimerVariant;
  /** The definition its aggregates ran (`run/plan.ts`: the deadline). */
  readonly definition: string;
  /** Aggregates run (one deadline timer each). */
  readonly aggregates: number;
  /** Requests per second (`undefined`: all at once, in batches of ten). */
  readonly requestsPerSecond: number | undefined;
  /** Timer records the timer handler took within the measured window. */
  readonly fired: number;
  /** Timer records taken before the aggregates' run was over (outside the window; 0 normally). */
  readonly firedEarly: number;
  /** How the aggregates ended before their timers fired (completed, all of them, normally). */
  readonly outcomes: Record<string, number>;
  /** What the firing cost, and nothing else. */
  readonly counters: Counters;
  /** The aggregates' own run (requests to results): how their timers were armed. */
  readonly armingCounters: Counters;
}

/** Both variants, measured one after the other on the same rig. */
export interface TimerFirings {
  readonly batched: TimerFiring;
  readonly paced: TimerFiring;
}

/** The deadline timers' firing in two variants of `aggregates` aggregates each. */
export async function runTimers(rig: Rig, aggregates: number): Promise<TimerFirings> {
  log(`deadline timers, batched: ${aggregates} requests in SendMessageBatches of ten, all at once`);
  const batched = await runVariant(rig, 'batched', aggregates);
  log(`deadline timers, paced: ${aggregates} requests one at a time, ${PACED_REQUESTS_PER_SECOND}/s`);
  const paced = await runVariant(rig, 'paced', aggregates);
  return { batched, paced };
}

async function runVariant(rig: Rig, variant: TimerVariant, aggregates: number): Promise<TimerFiring> {
  const requestsPerSecond = variant === 'paced' ? PACED_REQUESTS_PER_SECOND : undefined;
  const definition = variant === 'paced' ? 'bench-timer' : 'bench-timer-batched';
  const completed = await runFanin(rig, {
    definition,
    idPrefix: variant === 'paced' ? 'tmr' : 'tmb',
    aggregates,
    fanOut: 10,
    body: Bodies.kilobyte,
    ...(requestsPerSecond === undefined ? {} : { requestsPerSecond }),
    timeoutMs: 120_000,
  });
  const timerRecords = (counters: Counters) => total(counters, 'lambda.records', (who) => who === 'timer');
  const firedEarly = timerRecords(completed.counters);
  if (firedEarly > 0) {
    log(
      `deadline timers, ${variant}: ${firedEarly} fired before their aggregates' run was over (not counted)`,
    );
  }
  const before = rig.meter.snapshot();
  const firedBefore = timerRecords(before);
  const deadline = Date.now() + 60_000;
  while (timerRecords(rig.meter.snapshot()) - firedBefore < aggregates - firedEarly) {
    if (Date.now() > deadline) break;
    await sleep(100);
  }
  await rig.idle();
  const counters = diff(rig.meter.snapshot(), before);
  return {
    variant,
    definition,
    aggregates,
    requestsPerSecond,
    fired: timerRecords(counters),
    firedEarly,
    outcomes: { ...completed.outcomes },
    counters,
    armingCounters: completed.counters,
  };
}

/** A timer firing's SQS calls and invocations per fired timer (so per aggregate). */
export function firingPerTimer(firing: TimerFiring): {
  readonly receives: number;
  readonly deletes: number;
  readonly invocations: number;
  readonly recordsPerInvocation: number;
} {
  const c = firing.counters;
  const fired = Math.max(1, firing.fired);
  const onTimerQueue = (op: string) => (who: string, detail: string) =>
    who === 'esm' && detail.startsWith(op) && detail.endsWith('|timer') && !detail.includes('(empty)');
  const invocations = total(c, 'lambda.invocations', (who) => who === 'timer');
  return {
    receives: total(c, 'sqs.calls', onTimerQueue('ReceiveMessage')) / fired,
    deletes: total(c, 'sqs.calls', onTimerQueue('DeleteMessage')) / fired,
    invocations: invocations / fired,
    recordsPerInvocation: firing.fired / Math.max(1, invocations),
  };
}

/** How a variant's timers were armed, per aggregate, from the aggregates' own run. */
export function armingPerAggregate(firing: TimerFiring): {
  readonly fanOutInvocations: number;
  readonly timerSends: number;
} {
  const c = firing.armingCounters;
  const per = Math.max(1, firing.aggregates);
  return {
    fanOutInvocations: total(c, 'lambda.invocations', (who) => who === 'fan-out') / per,
    timerSends:
      total(
        c,
        'sqs.calls',
        (who, detail) => who.startsWith('fanin') && /^SendMessage(Batch)?\|timer$/.test(detail),
      ) / per,
  };
}
