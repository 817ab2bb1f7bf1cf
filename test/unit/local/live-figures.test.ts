import { describe, expect, it } from 'vitest';
import { type ConsumerSample, LiveFigures, type Sample } from '../../../local/live-figures.ts';
import type { OutputMessage } from '../../../shared/ports.ts';

/**
 * The dashboard's figures, on a clock the test moves: each output counted once by its id, closed
 * aggregates by outcome, latencies (close minus open) and their percentiles, throughput over the
 * window from the consumers' counters, the history bounded. The dashboard's integration test reads
 * the same document over HTTP from a running runtime.
 */

const T0 = Date.UTC(2026, 0, 1);

function output(id: string, type: string, latency?: number): OutputMessage {
  return {
    id,
    type,
    aggregateId: `a-${id}`,
    definition: 'quotes',
    ...(latency !== undefined ? { openedAt: T0, closedAt: T0 + latency } : {}),
  } as unknown as OutputMessage;
}

function sample(at: number, requests: number, replies: number, open: Record<string, number> = {}): Sample {
  const consumers: ConsumerSample[] = [
    { name: 'ingress', role: 'fan-out', invocations: 1, records: requests, failures: 0, errors: 0 },
    { name: 'reply-0', role: 'reply', invocations: 1, records: replies - 1, failures: 0, errors: 0 },
    { name: 'reply-1', role: 'reply', invocations: 1, records: 1, failures: 0, errors: 0 },
  ];
  return {
    at,
    partitions: [
      {
        index: 0,
        name: 'r0',
        depth: requests,
        visible: 0,
        inFlight: 0,
        enabled: true,
        available: true,
        reason: null,
      },
    ],
    backlogDepth: 0,
    openByDefinition: open,
    completing: 1,
    dlqs: [],
    consumers,
  };
}

describe('LiveFigures', () => {
  it('counts each output once by its id, and closed aggregates by outcome', () => {
    const figures = new LiveFigures({
      prefix: 'p',
      watermarks: { low: 1, high: 2, highThreshold: 3 },
      clock: () => T0,
    });

    expect(figures.recordOutput('completed', output('1', 'fanin.aggregate.completed', 100))).toMatchObject({
      role: 'completed',
      id: '1',
      aggregateId: 'a-1',
      definition: 'quotes',
      latencyMs: 100,
    });
    expect(figures.recordOutput('completed', output('1', 'fanin.aggregate.completed', 100))).toBeUndefined();
    figures.recordOutput('timed-out', output('2', 'fanin.aggregate.timed-out', 300));
    figures.recordOutput('status', output('3', 'fanin.aggregate.purged'));
    figures.recordOutput('completed', output('4', 'fanin.aggregate.failed'));
    figures.recordOutput('late', output('5', 'fanin.reply.late'));

    const snapshot = figures.snapshot();
    expect(snapshot.aggregates).toMatchObject({ completed: 1, timedOut: 1, purged: 1, failed: 1 });
    expect(snapshot.totals.outputs).toBe(5);
    expect(snapshot.outputs.map((o) => o.id)).toEqual(['5', '4', '3', '2', '1']);
  });

  it('keeps the latest outputs only, newest first', () => {
    const figures = new LiveFigures({
      prefix: 'p',
      watermarks: { low: 1, high: 2, highThreshold: 3 },
      outputsSize: 2,
    });
    for (const id of ['a', 'b', 'c']) figures.recordOutput('late', output(id, 'fanin.reply.late'));
    expect(figures.snapshot().outputs.map((o) => o.id)).toEqual(['c', 'b']);
  });

  it('gives the latency of the results: last, median, 95th percentile and maximum', () => {
    const figures = new LiveFigures({ prefix: 'p', watermarks: { low: 1, high: 2, highThreshold: 3 } });
    for (let i = 1; i <= 20; i += 1)
      figures.recordOutput('completed', output(String(i), 'fanin.aggregate.completed', i * 10));
    figures.recordOutput('status', output('p', 'fanin.aggregate.purged'));

    expect(figures.snapshot().latency).toEqual({
      count: 20,
      lastMs: 200,
      p50Ms: 110,
      p95Ms: 200,
      maxMs: 200,
    });
  });

  it('has no latency before a result', () => {
    const figures = new LiveFigures({ prefix: 'p', watermarks: { low: 1, high: 2, highThreshold: 3 } });
    expect(figures.snapshot().latency).toEqual({
      count: 0,
      lastMs: null,
      p50Ms: null,
      p95Ms: null,
      maxMs: null,
    });
  });

  it('derives requests and replies per second over the window from the consumers counters', () => {
    let now = T0;
    const figures = new LiveFigures({
      prefix: 'p',
      watermarks: { low: 1, high: 2, highThreshold: 3 },
      windowSeconds: 10,
      clock: () => now,
    });
    figures.recordSample(sample(T0, 0, 1));
    figures.recordSample(sample(T0 + 5_000, 10, 21));
    now = T0 + 10_000;
    figures.recordSample(sample(T0 + 10_000, 20, 41, { quotes: 2, orders: 3 }));

    const snapshot = figures.snapshot();
    expect(snapshot.throughput).toMatchObject({
      windowSeconds: 10,
      requestsPerSecond: 2,
      repliesPerSecond: 4,
    });
    expect(snapshot.throughput.history.map((h) => h.replies)).toEqual([0, 4, 4]);
    expect(snapshot.totals).toMatchObject({ requests: 20, replies: 41 });
    expect(snapshot.aggregates).toMatchObject({
      open: 5,
      openByDefinition: { quotes: 2, orders: 3 },
      completing: 1,
    });
    expect(snapshot.history.map((h) => h.depths)).toEqual([[0], [10], [20]]);
  });

  it('keeps at most historySize samples', () => {
    const figures = new LiveFigures({
      prefix: 'p',
      watermarks: { low: 1, high: 2, highThreshold: 3 },
      historySize: 2,
    });
    for (let i = 0; i < 5; i += 1) figures.recordSample(sample(T0 + i * 1000, i, i + 1));
    expect(figures.snapshot().history.map((h) => h.at)).toEqual([T0 + 3000, T0 + 4000]);
  });
});
