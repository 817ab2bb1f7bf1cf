import type { Rig } from '../rig/rig.ts';
import { type ArrivalPhaseResult, Bodies, runArrival, storeCapacity } from '../workload/phases.ts';
import { log } from './log.ts';
import { type Plan, SATURATED_RELEASE } from './plan.ts';

/** The raw-capacity writes: reply items with a 1 KB body. */
const CAPACITY_BODY = Bodies.kilobyte('capacity', '0');

/** DynamoDB Local's JVM is slow until warm: the first seconds of writes are not its capacity. */
export async function warmStore(rig: Rig, plan: Plan, concurrency: number): Promise<void> {
  log(`warming the store: PutItem x ${concurrency} writers for ${plan.warmupMs} ms (not counted)`);
  await storeCapacity(rig, { concurrency, durationMs: plan.warmupMs, body: CAPACITY_BODY, label: 'warm' });
}

/**
 * The raw store capacity around the saturated run, and the pace of the paced phases it sets. A warm-up run
 * (not counted) sizes the saturated run to last about as long as a capacity window.
 */
export async function runSaturation(rig: Rig, plan: Plan, concurrency: number) {
  // Replies independent, as fast as they go.
  const saturatedRun = (idPrefix: string, aggregates: number) =>
    runArrival(rig, {
      pattern: 'independent',
      definition: 'bench-collect',
      idPrefix,
      aggregates,
      fanOut: 10,
      body: Bodies.kilobyte,
      release: SATURATED_RELEASE,
      timeoutMs: 600_000,
    });
  const capacity = (label: string, durationMs: number) => {
    log(`raw store capacity ${label}: PutItem x ${concurrency} writers for ${durationMs} ms`);
    return storeCapacity(rig, { concurrency, durationMs, body: CAPACITY_BODY, label });
  };
  log(`warm-up: ${plan.warmupAggregates} aggregates, replies independent, as fast as they go (not counted)`);
  const warm = await saturatedRun('warm', plan.warmupAggregates);
  const saturatedAggregates = saturatedAggregatesAfter(warm, plan);
  const capacityBefore = await capacity('before', plan.capacityMs);
  log(`saturated: ${saturatedAggregates} aggregates x 10 replies of 1 KB, independent, as fast as they go`);
  const saturated = await saturatedRun('sat', saturatedAggregates);
  const capacityAfter = await capacity('after', capacityAfterMs(saturated, plan));
  return { capacityBefore, capacityAfter, saturated, ...pacing(saturated, plan) };
}

/** A saturated run's replies and how long they took, release to last result. */
type Run = Pick<ArrivalPhaseResult, 'replies' | 'releaseToLastResultMs'>;

/** Aggregates of fan-out 10 that the warm-up's rate says last about a capacity window (30 at least). */
export function saturatedAggregatesAfter(warm: Run, plan: Plan): number {
  const estimate = (warm.replies * 1000) / warm.releaseToLastResultMs;
  return Math.max(30, Math.round((estimate * plan.capacityMs) / 1000 / 10));
}

/** The window after the saturated run: as long as it was (its sizing may be off), within half to twice. */
export function capacityAfterMs(saturated: Run, plan: Plan): number {
  const { capacityMs } = plan;
  return Math.round(Math.min(2 * capacityMs, Math.max(capacityMs / 2, saturated.releaseToLastResultMs)));
}

/**
 * The pace (replies per second the responders offer in the paced phases): half the saturated rate,
 * within 10 and the plan's most. On a slow or busy machine the pace drops, and fewer aggregates (20 at
 * least) keep each phase within its time.
 */
export function pacing(saturated: Run, plan: Plan): { pace: number; arrivalAggregates: number } {
  const saturatedRate = (saturated.replies * 1000) / saturated.releaseToLastResultMs;
  const pace = Math.max(10, Math.min(plan.maxOfferedRepliesPerSecond, saturatedRate / 2));
  const paced = Math.max(20, Math.round((pace * plan.arrivalSeconds) / 10));
  return { pace, arrivalAggregates: Math.min(plan.arrivalAggregates, paced) };
}
