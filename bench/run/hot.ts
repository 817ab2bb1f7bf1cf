import { type HotDesign, hotBounds, simulateHot } from '../model/hot-aggregate.ts';
import type { Rig } from '../rig/rig.ts';
import { type HotMeasurement, runHotAggregate } from '../workload/hot-aggregate.ts';
import { log } from './log.ts';
import { AWS_LIMITS, HOT_SHARDS, type Plan } from './plan.ts';

/** One hot aggregate through the real reply handler, once per layout (`writeShards` 1 and `HOT_SHARDS`). */
export async function runHot(rig: Rig, plan: Plan) {
  const run = (definition: string) =>
    runHotAggregate(rig, { definition, replies: plan.hotReplies, senders: 4, timeoutMs: plan.hotTimeoutMs });
  log(`hot aggregate: one aggregate, ${plan.hotReplies} replies as fast as they come, writeShards 1`);
  const hot = await run('bench-hot');
  log(`hot aggregate: the same, writeShards ${HOT_SHARDS}`);
  const hotSharded = await run('bench-hot-sharded');

  log('AWS model: bounds and simulation of one hot aggregate');
  const consumers = rig.topology.consumers.reply.maxConcurrency;
  const designs: HotDesign[] = [
    hotDesign(hot, `writeShards 1, replyConcurrency ${consumers} (the default)`, consumers),
    hotDesign(hot, 'writeShards 1, replyConcurrency 40', 40),
    hotDesign(
      hotSharded,
      `writeShards ${HOT_SHARDS}, replyConcurrency ${consumers} (the default)`,
      consumers,
    ),
    hotDesign(hotSharded, `writeShards ${HOT_SHARDS}, replyConcurrency 40`, 40),
    hotDesign(hotSharded, `writeShards ${HOT_SHARDS}, replyConcurrency 80`, 80),
    // Not measured: the writeShards 8 run's figures with the replies spread over 16 keys.
    hotDesign(hotSharded, 'writeShards 16, replyConcurrency 160 (from the writeShards 8 run)', 160, 16),
    // The reply puts alone on the keys (no other write on the busiest key), to show what the
    // completion trigger's counter costs the bound.
    {
      ...hotDesign(hot, 'writeShards 1, replyConcurrency 40, reply puts only (no per-batch counter)', 40),
      headerKeyWriteUnitsPerReply: 0,
    },
  ];
  // One row per layout: the design and what the arithmetic and the simulation found.
  const model = designs.map((design) => ({
    design,
    bounds: hotBounds(design, AWS_LIMITS),
    simulation: simulateHot(design, AWS_LIMITS, 100_000),
  }));
  return { hot, hotSharded, model };
}

/**
 * The AWS model's design of a layout from a hot run `m`: `consumers` reply consumers, `shards` write shards
 * (by default the run's own).
 */
export function hotDesign(
  m: HotMeasurement,
  name: string,
  consumers: number,
  shards = m.writeShards,
): HotDesign {
  return {
    name,
    shards,
    replyUnits: m.recordingWriteUnitsPerReply,
    // What the busiest key takes besides its share of the reply puts, and what it is read, both
    // as measured per key (with more shards than measured, the per-batch writes spread alike).
    headerKeyWriteUnitsPerReply:
      (Math.max(0, m.busiestKeyWriteUnitsPerReply - m.recordingWriteUnitsPerReply / m.writeShards) *
        m.writeShards) /
      shards,
    headerKeyReadUnitsPerReply: m.busiestKeyReadUnitsPerReply,
    batch: Math.max(1, Math.round(m.repliesPerInvocation)),
    consumers,
    // Measured: parallel calls (a batch's puts, the other shards' counters) are one round trip.
    roundTrips: m.roundTripsPerInvocation,
  };
}
