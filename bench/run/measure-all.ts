import type { Connection } from '../../shared/aws/clients.ts';
import type { Prices } from '../cost/prices.ts';
import { calibrateCapacityModel } from '../measure/calibrate.ts';
import { grouped, total } from '../measure/counters.ts';
import { prose } from '../report/format.ts';
import type { Rig } from '../rig/rig.ts';
import type { NaiveAggregateStore } from '../workload/naive-baseline.ts';
import { Bodies } from '../workload/phases.ts';
import { runArrivals } from './arrival.ts';
import { runHot } from './hot.ts';
import { log } from './log.ts';
import {
  OPEN_SECONDS_FULL,
  OPEN_SECONDS_QUICK,
  runOpenTime,
  runResponderCosts,
  runTimerKinds,
} from './open-time.ts';
import type { RunOptions } from './plan.ts';
import { runSaturation, warmStore } from './saturation.ts';
import { measureNaive, runScale } from './scale.ts';
import { runTimers } from './timers.ts';

/** Every phase in order, on the rig (the open-time dimension on topologies of its own). */
export async function measureAll(run: {
  readonly rig: Rig;
  readonly naive: NaiveAggregateStore;
  readonly prices: Prices;
  readonly options: RunOptions;
  readonly connection: Connection;
}) {
  const { rig, naive, prices, connection } = run;
  const { quick, plan, replayUpTo } = run.options;
  log('calibrating the capacity model against the emulator');
  const calibration = await calibrateCapacityModel(rig.fanin.setup.dynamo, rig.fanin.tableShape);
  const concurrency = rig.topology.replyPartitions.length * rig.topology.consumers.reply.maxConcurrency;
  await warmStore(rig, plan, concurrency);
  rig.start();
  rig.startTimers();
  /** The topology's reply batching window and batch size. */
  const defaultBatching = rig.replyBatching;
  const saturation = await runSaturation(rig, plan, concurrency);
  /** `pace`: replies per second offered; `arrivalAggregates`: per paced arrival phase at fan-out 10. */
  const { pace, arrivalAggregates } = saturation;
  const arrival = await runArrivals(rig, plan, { defaultBatching, pace, arrivalAggregates });
  log(
    prose`deadline timers: ${plan.timerAggregates} aggregates per variant (batched: 10 s deadline; paced: 3 s),
      then their timers firing`,
  );
  const timers = await runTimers(rig, plan.timerAggregates);
  const openSeconds = quick ? OPEN_SECONDS_QUICK : OPEN_SECONDS_FULL;
  log(`open time: aggregates open until deadlines of ${openSeconds.join(', ')} s, on a virtual clock`);
  const openTime = await runOpenTime(connection, prices, openSeconds);
  log('timer kinds: a daily snapshot over 7 days, an allowed life of 7 days, on a virtual clock');
  const timerKinds = await runTimerKinds(connection, prices);
  log('responders: a round of retries and cancellation notices to ten silent recipients, on a virtual clock');
  const responders = await runResponderCosts(connection, prices);
  log(`baseline at the headline: ${plan.baselineHeadlineAggregates} aggregates x 10 replies of 1 KB`);
  const naiveHeadline = await measureNaive(rig.meter, naive, {
    idPrefix: 'nhead',
    aggregates: plan.baselineHeadlineAggregates,
    fanOut: 10,
    body: Bodies.kilobyte,
    concurrency,
  });
  const { scale, samplingCheck } = await runScale(rig, naive, { plan, replayUpTo, concurrency });
  const { hot, hotSharded, model } = await runHot(rig, plan);
  const { capacityBefore: before, capacityAfter: after, saturated } = saturation;
  return {
    calibration,
    capacity: { before, after, concurrency, durationMs: plan.capacityMs },
    saturated,
    arrival,
    defaultBatching,
    arrivalAggregates,
    pace,
    timers,
    /** The open-time dimension (`open-time.ts`): by deadline. */
    openTime,
    /** The other long timers (`open-time.ts`, `TIMER_KINDS`): by kind. */
    timerKinds,
    /** Looking after the responders (`open-time.ts`, `runResponderCosts`): a retry and a cancellation. */
    responders,
    topology: {
      replyPartitions: rig.topology.replyPartitions.length,
      sweepIntervalSeconds: rig.topology.sweepIntervalSeconds,
      distributorIntervalSeconds: rig.topology.partitioning.distributorIntervalSeconds,
    },
    naiveHeadline,
    scale,
    samplingCheck,
    hot,
    hotSharded,
    model,
    sanity: sanityOf(rig),
  };
}

/** Failures, errors and what the meter could not cost, over the whole run. */
function sanityOf(rig: Rig) {
  const counters = rig.meter.snapshot();
  return {
    ...rig.failures(),
    responderErrors: rig.responders.errors,
    collectorErrors: rig.collector.errors,
    outputsSeen: Object.fromEntries(rig.collector.types),
    /** Transactional updates of items the meter had not seen, by who (costed as 1 KB). */
    transactionSizesUnknown: grouped(counters, 'ddb.size_unknown', (who) => who),
    unregisteredTables: total(counters, 'ddb.unregistered_table'),
  };
}
