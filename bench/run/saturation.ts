import type { Rig } from '../rig/rig.ts';
import { Bodies, runArrival, storeCapacity } from '../workload/phases.ts';
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
  // Sized to last about as long as each capacity window around it.
  const estimate = (warm.replies * 1000) / warm.releaseToLastResultMs;
  const saturatedAggregates = Math.max(30, Math.round((estimate * plan.capacityMs) / 1000 / 10));
  const capacityBefore = await capacity('before', plan.capacityMs);
  log(`saturated: ${saturatedAggregates} aggregates x 10 replies of 1 KB, independent, as fast as they go`);
  const saturated = await saturatedRun('sat', saturatedAggregates);
  // As long as the run was (the estimate that sized it may be off), within reason.
  const afterMs = Math.round(
    Math.min(2 * plan.capacityMs, Math.max(plan.capacityMs / 2, saturated.releaseToLastResultMs)),
  );
  const capacityAfter = await capacity('after', afterMs);
  const saturatedRate = (saturated.replies * 1000) / saturated.releaseToLastResultMs;
  const pace = Math.max(10, Math.min(plan.maxOfferedRepliesPerSecond, saturatedRate / 2));
  // On a slow or busy machine the pace drops: fewer aggregates keep each phase within its time.
  const arrivalAggregates = Math.min(
    plan.arrivalAggregates,
    Math.max(20, Math.round((pace * plan.arrivalSeconds) / 10)),
  );
  // The pace: replies per second the responders offer in the paced phases.
  return { capacityBefore, capacityAfter, saturated, pace, arrivalAggregates };
}
