/**
 * The results' `arrival`: per arrival pattern, the figures of its phases per reply, all-in (each
 * aggregate's share of its deadline timer's firing added), and every reply batching setting compared.
 */
import { describe, expect, it } from 'vitest';
import { loadPrices } from '../../../../bench/cost/prices.ts';
import { arrivalResults, independentSpanSeconds } from '../../../../bench/run/arrival.ts';
import type { TimerFiring, TimerFirings } from '../../../../bench/run/timers.ts';
import type { ArrivalPhaseResult } from '../../../../bench/workload/phases.ts';

const DEFAULT = { windowSeconds: 1, batchSize: 10, drainIntervalSeconds: 0 };

/** Ten aggregates of ten replies at the topology's batching, taken in 20 batches of 5 replies. */
const phase = (over: Partial<ArrivalPhaseResult> = {}): ArrivalPhaseResult =>
  ({
    pattern: 'independent',
    batchingWindowSeconds: 1,
    batchSize: 10,
    drainIntervalSeconds: 0,
    drainPhase: undefined,
    drainsDuringSending: 0,
    aggregatesSplitAcrossDrains: undefined,
    sendingMs: 5_000,
    firstDrainAfterReleaseMs: undefined,
    offeredRepliesPerSecond: 20,
    aggregates: 10,
    replies: 100,
    latenciesMs: [10, 20, 30, 40, 50, 60, 70, 80, 90, 100],
    replySpansMs: [1_000, 2_000],
    outcomes: { 'fanin.aggregate.completed': 10 },
    counters: {
      'ddb.wcu|fanin:reply|TransactWriteItems': 50,
      'ddb.wcu|clients|PutItem': 1_000,
      'ddb.rcu|fanin:reply|GetItem': 10,
      'sqs.calls|esm|ReceiveMessage|reply': 20,
      'sqs.calls|esm|ReceiveMessage(empty)|reply': 500,
      'sqs.calls|fanin:reply|SendMessage|output': 10,
      'sqs.calls|clients|SendMessage|reply': 100,
      'sqs.billed|clients|std|SendMessage|reply': 100,
      'lambda.invocations|reply': 20,
      'lambda.batches|reply': 20,
      'lambda.records|reply': 100,
      'lambda.aggregates|reply': 50,
    },
    ...over,
  }) as unknown as ArrivalPhaseResult;

/** Ten timers fired: 20 write units and 5 receives of the timer queue, 2 units and half a receive each. */
const firing = (counters: Record<string, number>): TimerFiring =>
  ({
    variant: 'batched',
    aggregates: 10,
    fired: 10,
    firedEarly: 0,
    outcomes: {},
    counters,
    armingCounters: {},
  }) as TimerFiring;
const timers: TimerFirings = {
  batched: firing({ 'ddb.wcu|fanin:timer|UpdateItem': 20, 'sqs.calls|esm|ReceiveMessage|timer': 5 }),
  paced: { ...firing({}), variant: 'paced' },
};

describe("the results' arrival figures", () => {
  it("gives a pattern's units and calls per reply, its aggregates' share of the timers' firing added", async () => {
    const arrival = arrivalResults([phase()], DEFAULT, timers, await loadPrices());
    // (50 + 2 × 10) / 100 replies; (20 + 10 + 0.5 × 10) / 100; 10 / 100.
    expect(arrival.independent?.write_units_per_reply).toEqual({ '10': 0.7 });
    expect(arrival.independent?.sqs_calls_per_reply).toEqual({ '10': 0.35 });
    expect(arrival.independent?.read_units_per_reply).toEqual({ '10': 0.1 });
  });

  it('gives how the replies were batched, and the latency and reply span percentiles', async () => {
    const arrival = arrivalResults([phase()], DEFAULT, timers, await loadPrices());
    const [figures] = arrival.independent?.measured ?? [];
    expect(figures).toMatchObject({
      fan_out: 10,
      replies_per_batch: 5,
      replies_per_aggregate_per_batch: 2,
      reply_invocations: 0.2,
      reply_receives: 0.2,
      client_sqs_calls: 1,
      offered_replies_per_second: 20,
      completion_latency_ms: { p50: 50, p99: 100, samples: 10 },
      reply_span_ms: { p50: 1_000, p90: 2_000, samples: 2 },
    });
    expect(arrival.independent?.completion_latency_ms).toEqual(figures?.completion_latency_ms);
  });

  it('leaves out a pattern with no fan-out 10 phase at the topology’s batching', async () => {
    const arrival = arrivalResults(
      [phase(), phase({ pattern: 'spread', batchingWindowSeconds: 2, batchSize: 100 })],
      DEFAULT,
      timers,
      await loadPrices(),
    );
    expect(Object.keys(arrival)).toEqual(['independent']);
  });

  it("compares every batching setting at fan-out 10, the topology's first, a drain's timing on its row only", async () => {
    const drained = phase({
      batchingWindowSeconds: 0,
      batchSize: 1_000,
      drainIntervalSeconds: 60,
      drainPhase: 'aligned',
      aggregatesSplitAcrossDrains: 2,
      drainsDuringSending: 3,
      firstDrainAfterReleaseMs: 1_234.4,
    });
    const large = phase({ replies: 1_000 });
    const arrival = arrivalResults([drained, phase(), large], DEFAULT, timers, await loadPrices());
    const rows = arrival.independent?.by_batching ?? [];
    expect(rows.map((r) => [r.batching_window_seconds, r.batch_size, r.drain_interval_seconds])).toEqual([
      [1, 10, 0],
      [0, 1_000, 60],
    ]);
    expect(JSON.parse(JSON.stringify(rows[0]))).not.toHaveProperty('drain_phase');
    expect(rows[1]).toMatchObject({ drain_phase: 'aligned', aggregates_split_across_drains: 2 });
    expect(arrival.independent?.other_batching_windows[0]?.drain_timing).toEqual({
      sending_ms: 5_000,
      partition_drains_during_sending: 3,
      first_drain_after_release_ms: 1_234,
    });
    expect(Object.keys(arrival.independent?.write_units_per_reply ?? {})).toEqual(['10', '100']);
  });

  it("adds the clients' bill to fanin's: ten standard SQS requests an aggregate, $4 a million at $0.40", async () => {
    const [figures] =
      arrivalResults([phase()], DEFAULT, timers, await loadPrices()).independent?.measured ?? [];
    const clients =
      (figures?.cost_per_million_aggregates_usd ?? 0) - (figures?.fanin_only_per_million_usd ?? 0);
    expect(clients).toBeCloseTo(4, 2);
  });
});

describe("the independent pattern's reply span", () => {
  it('is nine turns of the rotation, at most 30 aggregates a turn, at the offered rate', () => {
    expect(independentSpanSeconds(20, 60)).toBe(3);
    expect(independentSpanSeconds(100, 60)).toBe(4.5);
  });
});
