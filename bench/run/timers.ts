import type { Prices } from '../cost/prices.ts';
import { type Usage, usageOf } from '../cost/usage.ts';
import { type Counters, diff, total } from '../measure/counters.ts';
import type { Rig } from '../rig/rig.ts';
import { Bodies, runFanin } from '../workload/phases.ts';
import { sleep } from '../workload/sleep.ts';
import { faninWho, perReply, round, roundAll, snakeKeys } from './figures.ts';
import { log } from './log.ts';

/** How the requests of a deadline-timer variant were sent, and so how their deadline timers were armed. */
export type TimerVariantName = 'batched' | 'paced';

/** The variant whose firing the arrival patterns' all-in figures include. */
export const ARRIVAL_TIMER_VARIANT: TimerVariantName = 'batched';

/** Requests per second of the `paced` variant. */
export const PACED_REQUESTS_PER_SECOND = 20;

/** The deadline timers' firing, measured apart from the aggregates they were armed for. */
export type TimerFiring = Awaited<ReturnType<typeof runVariant>>;

/** Both variants, measured one after the other on the same rig. */
export type TimerFirings = Awaited<ReturnType<typeof runTimers>>;

/** The deadline timers' firing in two variants of `aggregates` aggregates each. */
export async function runTimers(rig: Rig, aggregates: number) {
  log(`deadline timers, batched: ${aggregates} requests in SendMessageBatches of ten, all at once`);
  const batched = await runVariant(rig, 'batched', aggregates);
  log(`deadline timers, paced: ${aggregates} requests one at a time, ${PACED_REQUESTS_PER_SECOND}/s`);
  const paced = await runVariant(rig, 'paced', aggregates);
  return { batched, paced };
}

async function runVariant(rig: Rig, variant: TimerVariantName, aggregates: number) {
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
    /** The definition its aggregates ran (`run/plan.ts`: the deadline). */
    definition,
    /** Aggregates run (one deadline timer each). */
    aggregates,
    /** `undefined`: all at once, in batches of ten. */
    requestsPerSecond,
    /** Timer records the timer handler took within the measured window. */
    fired: timerRecords(counters),
    /** Timer records taken before the aggregates' run was over (outside the window; 0 normally). */
    firedEarly,
    /** How the aggregates ended before their timers fired (completed, all of them, normally). */
    outcomes: { ...completed.outcomes },
    /** What the firing cost, and nothing else. */
    counters,
    /** The aggregates' own run (requests to results): how their timers were armed. */
    armingCounters: completed.counters,
  };
}

/** A timer firing's usage per fired timer (so per aggregate: what an aggregate's all-in figures add). */
export function firingUsage(firing: TimerFiring, prices: Prices): Usage {
  return usageOf(firing.counters, 'fanin', Math.max(1, firing.fired), prices);
}

/** One timer variant as the results give it (`timers.<variant>`): how its requests were sent, what its firing cost. */
export function timerVariantFigures(firing: TimerFiring, prices: Prices) {
  const a = firing.armingCounters;
  const c = firing.counters;
  const aggregates = Math.max(1, firing.aggregates);
  const fired = Math.max(1, firing.fired);
  const onTimerQueue = (op: string) => (who: string, detail: string) =>
    who === 'esm' && detail.startsWith(op) && detail.endsWith('|timer') && !detail.includes('(empty)');
  const timerSend = (who: string, detail: string) =>
    who.startsWith('fanin') && /^SendMessage(Batch)?\|timer$/.test(detail);
  const invocations = total(c, 'lambda.invocations', (who) => who === 'timer');
  return {
    requests:
      firing.requestsPerSecond === undefined
        ? 'all at once, in SendMessageBatches of ten (as the arrival phases send them)'
        : `one SendMessage at a time, ${firing.requestsPerSecond} per second`,
    /** Null: all at once, in batches of ten. */
    requests_per_second: firing.requestsPerSecond ?? null,
    definition: firing.definition,
    aggregates: firing.aggregates,
    fired: firing.fired,
    /** Timer records taken before the aggregates' run was over, so outside the window (0 normally). */
    fired_early: firing.firedEarly,
    completed_first: firing.outcomes,
    // How the timers were armed, from the aggregates' own run.
    arming_per_aggregate: {
      fan_out_invocations: round(total(a, 'lambda.invocations', (who) => who === 'fan-out') / aggregates, 3),
      timer_sends: round(total(a, 'sqs.calls', timerSend) / aggregates, 3),
    },
    firing_per_aggregate: {
      receives: round(total(c, 'sqs.calls', onTimerQueue('ReceiveMessage')) / fired, 3),
      deletes: round(total(c, 'sqs.calls', onTimerQueue('DeleteMessage')) / fired, 3),
      invocations: round(invocations / fired, 3),
      records_per_invocation: round(firing.fired / Math.max(1, invocations), 2),
    },
    usage_per_aggregate: snakeKeys(roundAll(firingUsage(firing, prices))),
    sqs_calls_by_operation: timerSqsCalls(firing, 1),
  };
}

/** A timer firing's SQS calls per fired timer and `per`, by who, operation and queue. */
export function timerSqsCalls(firing: TimerFiring, per: number): Record<string, number> {
  return perReply(firing.counters, 'sqs.calls', Math.max(1, firing.fired) * per, (who, d) =>
    !d.includes('(empty)') && (faninWho(who) || who === 'esm') ? `${who} ${d}` : undefined,
  );
}
