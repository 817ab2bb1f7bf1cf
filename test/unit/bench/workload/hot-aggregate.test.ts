/**
 * The hot aggregate's figures: what one aggregate receiving replies as fast as they come costs per reply,
 * and how its write units fall on its partition keys (the header's `A#<id>`, its shards and counters).
 */
import { describe, expect, it } from 'vitest';
import { Meter } from '../../../../bench/measure/meter.ts';
import { byKey, hotFigures } from '../../../../bench/workload/hot-aggregate.ts';
import { KEY_SEPARATOR } from '../../../../shared/adapters/state-keys.ts';

describe("the hot aggregate's keys", () => {
  it("labels the aggregate's own keys by shard and counter, and leaves other aggregates' keys out", () => {
    const meter = new Meter();
    meter.keyUnits.set('table:A#h', 5);
    meter.keyUnits.set(`table:A#h${KEY_SEPARATOR}s3`, 2);
    meter.keyUnits.set(`table:A#h${KEY_SEPARATOR}c1`, 1);
    meter.keyUnits.set('table:A#hx', 9);
    meter.keyUnits.set('due:A#h', 9);
    meter.keyReadUnits.set('table:A#h', 4);
    expect(byKey(meter, 'h')).toEqual({
      writes: { 'shard 0': 5, 'shard 3': 2, 'counter 1': 1 },
      reads: { 'shard 0': 4 },
    });
  });
});

describe("the hot aggregate's figures", () => {
  // 100 replies in 10 invocations: 100 units of reply puts, 30 of other writes (20 of them on counters).
  const counters = {
    'ddb.wcu|fanin:reply|PutItem': 100,
    'ddb.wcu|fanin:reply|UpdateItem': 20,
    'ddb.wcu|fanin:reply|TransactWriteItems': 10,
    'ddb.wcu|clients|PutItem': 50,
    'ddb.rcu|fanin:reply|GetItem': 5,
    'ddb.rcu|fanin:reply|Query': 15,
    'ddb.calls|fanin:reply|PutItem': 100,
    'ddb.calls|fanin:reply|GetItem': 10,
    'ddb.calls|fanin:reply|TransactWriteItems': 2,
    'lambda.invocations|reply': 10,
    'lambda.records|reply': 100,
    'ddb.round_trips|reply': 30,
  };
  const keys = {
    writes: { 'shard 0': 60, 'shard 1': 50, 'counter 1': 15, 'counter 2': 5 },
    reads: { 'shard 0': 20 },
  };
  const figures = hotFigures(counters, keys, 100);

  it("counts fanin's write and read units per reply, the reply puts apart", () => {
    expect(figures.writeUnitsPerReply).toBeCloseTo(1.3, 9);
    expect(figures.recordingWriteUnitsPerReply).toBeCloseTo(1, 9);
    expect(figures.readUnitsPerReply).toBeCloseTo(0.2, 9);
    expect(figures.headerReadUnitsPerReply).toBeCloseTo(0.05, 9);
    expect(figures.setReadUnitsPerReply).toBeCloseTo(0.15, 9);
  });

  it("takes the header key's other writes as what is left besides the reply puts and the counters", () => {
    // 130 units on the keys, 100 of reply puts, 20 on counters: 10 on the header's key.
    expect(figures.headerKeyOtherWriteUnitsPerReply).toBeCloseTo(0.1, 9);
    // Shard 0 holds 60, 10 of them not reply puts: 50 and 50, half the puts on the busiest.
    expect(figures.busiestKeyReplyShare).toBeCloseTo(0.5, 9);
  });

  it('finds the busiest key and what it takes per reply', () => {
    expect(figures.busiestKey).toBe('shard 0');
    expect(figures.busiestKeyShare).toBeCloseTo(60 / 130, 9);
    expect(figures.busiestKeyWriteUnitsPerReply).toBeCloseTo(0.6, 9);
    expect(figures.busiestKeyReadUnitsPerReply).toBeCloseTo(0.2, 9);
  });

  it("gives the reply handler's calls, replies and round trips per invocation", () => {
    expect(figures.invocations).toBe(10);
    expect(figures.transactions).toBe(2);
    expect(figures.repliesPerInvocation).toBe(10);
    expect(figures.roundTripsPerInvocation).toBe(3);
    expect(figures.callsPerInvocation).toEqual({
      GetItem: 1,
      PutItem: 10,
      UpdateItem: 0,
      Query: 0,
      TransactWriteItems: 0.2,
    });
  });
});
