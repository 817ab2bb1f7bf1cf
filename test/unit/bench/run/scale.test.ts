/** The scale curve: fanin against the naive baseline at each fan-out, and the fit of fanin's units. */
import { describe, expect, it } from 'vitest';
import { Meter } from '../../../../bench/measure/meter.ts';
import {
  type BaselineFigures,
  fitUnits,
  measureNaive,
  type ScalePoint,
  scalePoint,
} from '../../../../bench/run/scale.ts';
import type { NaiveAggregateStore } from '../../../../bench/workload/naive-baseline.ts';
import type { FaninPhaseResult } from '../../../../bench/workload/phases.ts';

const baseline: BaselineFigures = {
  method: 'replayed',
  writeUnitsPerReply: 2,
  recordingWriteUnitsPerReply: 1.5,
  readUnitsPerReply: 0.1,
  repliesPerSecond: 100,
};

describe('a point of the scale curve', () => {
  // 100 replies in 2 s: 40 units of reply transactions, 10 of other writes, 5 of them on an index.
  const fanin = {
    replies: 100,
    elapsedMs: 2_000,
    outcomes: { 'fanin.aggregate.completed': 10 },
    counters: {
      'ddb.wcu|fanin:reply|TransactWriteItems': 40,
      'ddb.wcu|fanin:fan-out|PutItem': 10,
      'ddb.wcu|clients|PutItem': 99,
      'ddb.wcu_index|fanin:fan-out|PutItem': 5,
      'ddb.rcu|fanin:reply|GetItem': 20,
    },
  } as unknown as FaninPhaseResult;

  it("gives fanin's units per reply, the reply handler's recording writes apart, and the baseline's ratio", () => {
    const point = scalePoint(10, 10, fanin, baseline);
    expect(point.fanin).toMatchObject({
      writeUnitsPerReply: 0.5,
      recordingWriteUnitsPerReply: 0.4,
      indexWriteUnitsPerReply: 0.05,
      readUnitsPerReply: 0.2,
      repliesPerSecond: 50,
    });
    expect(point.ratio).toBe(4);
  });
});

describe("the fit of fanin's units", () => {
  const point = (fanOut: number, writeUnitsPerReply: number) =>
    ({ fanOut, fanin: { writeUnitsPerReply } }) as ScalePoint;

  it("splits an aggregate's units into a part per reply and a part per aggregate, by least squares", () => {
    // 7 units at fan-out 10 and 25 at 100: 0.2 a reply and 5 an aggregate.
    const fit = fitUnits([point(10, 0.7), point(100, 0.25)]);
    expect(fit.perReply).toBeCloseTo(0.2, 9);
    expect(fit.perAggregate).toBeCloseTo(5, 9);
  });

  it('gives everything to the aggregate when there is one fan-out', () => {
    expect(fitUnits([point(10, 0.7)])).toEqual({ perReply: 0, perAggregate: 7 });
  });
});

describe('a naive baseline measurement', () => {
  /** A store whose every reply update costs 2 units on the meter, and that completes on the last reply. */
  const store = (meter: Meter, completes = true) =>
    ({
      open: async () => undefined,
      record: async (_: string, replyId: string) => {
        meter.add('ddb.wcu|naive|UpdateItem', 2);
        return completes && replyId === '1';
      },
      complete: async () => 0,
    }) as unknown as NaiveAggregateStore;

  it('counts what the baseline did during its run only', async () => {
    const meter = new Meter();
    meter.add('ddb.wcu|naive|UpdateItem', 100);
    const result = await measureNaive(meter, store(meter), {
      idPrefix: 'n',
      aggregates: 3,
      fanOut: 2,
      body: () => '',
      concurrency: 2,
    });
    expect(result).toMatchObject({ aggregates: 3, replies: 6, counters: { 'ddb.wcu|naive|UpdateItem': 12 } });
  });

  it('fails when an aggregate did not complete', async () => {
    const meter = new Meter();
    const options = { idPrefix: 'n', aggregates: 2, fanOut: 2, body: () => '', concurrency: 1 };
    await expect(measureNaive(meter, store(meter, false), options)).rejects.toThrow(
      'baseline completed 0 of 2 aggregates',
    );
  });
});
