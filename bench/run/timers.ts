import { type Counters, diff, total } from '../counters.ts';
import { Bodies, runFanin } from '../phases.ts';
import type { Rig } from '../rig.ts';
import { sleep } from '../sleep.ts';

/** The deadline timers' firing, measured apart from the aggregates they were armed for. */
export interface TimerFiring {
  /** Timer records the timer handler took. */
  readonly fired: number;
  /** How the aggregates ended before their timers fired (completed, all of them, normally). */
  readonly outcomes: Record<string, number>;
  /** What the firing cost, and nothing else. */
  readonly counters: Counters;
}

/** Aggregates with a 3 s deadline complete first; then the counters cover only their timers firing. */
export async function runTimers(rig: Rig, aggregates: number): Promise<TimerFiring> {
  const completed = await runFanin(rig, {
    definition: 'bench-timer',
    idPrefix: 'tmr',
    aggregates,
    fanOut: 10,
    body: Bodies.kilobyte,
    requestsPerSecond: 20,
    timeoutMs: 120_000,
  });
  const before = rig.meter.snapshot();
  const firedBefore = total(before, 'lambda.records', (who) => who === 'timer');
  const deadline = Date.now() + 60_000;
  while (total(rig.meter.snapshot(), 'lambda.records', (who) => who === 'timer') - firedBefore < aggregates) {
    if (Date.now() > deadline) break;
    await sleep(100);
  }
  await rig.idle();
  const counters = diff(rig.meter.snapshot(), before);
  return {
    fired: total(counters, 'lambda.records', (who) => who === 'timer'),
    outcomes: { ...completed.outcomes },
    counters,
  };
}
