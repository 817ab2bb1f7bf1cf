import type { OutputMessage } from '../shared/ports.ts';
import type { OutputRole } from '../shared/topology/topology.ts';
import { describeOutput, latencyOf } from './describe.ts';

/** One output as the dashboard lists it. */
export interface OutputRecord {
  readonly at: number;
  readonly role: OutputRole;
  readonly id: string;
  readonly type: string;
  readonly aggregateId?: string;
  readonly definition?: string;
  readonly latencyMs?: number;
  readonly summary: string;
}

/** A reply partition at one moment. */
export interface PartitionSample {
  readonly index: number;
  readonly name: string;
  readonly depth: number | null;
  readonly visible: number | null;
  readonly inFlight: number | null;
  readonly enabled: boolean;
  readonly available: boolean;
  readonly reason: string | null;
}

/** A consumer's counters (one poller per queue; the reply consumer per partition). */
export interface ConsumerSample {
  readonly name: string;
  readonly role: 'fan-out' | 'reply' | 'timer' | 'control';
  readonly invocations: number;
  readonly records: number;
  readonly failures: number;
  readonly errors: number;
}

/** What the sampler reads each tick. */
export interface Sample {
  readonly at: number;
  readonly partitions: readonly PartitionSample[];
  readonly backlogDepth: number | null;
  readonly openByDefinition: Readonly<Record<string, number>>;
  /** Aggregates won by a completing invocation that has not closed them yet. */
  readonly completing: number;
  readonly dlqs: readonly { readonly name: string; readonly depth: number }[];
  readonly consumers: readonly ConsumerSample[];
}

/** Everything the dashboard shows, as one JSON document. */
export interface DashboardSnapshot {
  readonly at: number;
  readonly prefix: string;
  readonly startedAt: number;
  readonly watermarks: { readonly low: number; readonly high: number; readonly highThreshold: number };
  readonly partitions: readonly PartitionSample[];
  readonly backlogDepth: number | null;
  /** Depth of each partition (by index) and of the backlog over time, oldest first. */
  readonly history: readonly {
    readonly at: number;
    readonly depths: readonly (number | null)[];
    readonly backlog: number | null;
  }[];
  readonly aggregates: {
    readonly open: number;
    readonly openByDefinition: Readonly<Record<string, number>>;
    readonly completing: number;
    readonly completed: number;
    readonly timedOut: number;
    readonly purged: number;
    readonly failed: number;
  };
  readonly throughput: {
    readonly windowSeconds: number;
    readonly requestsPerSecond: number;
    readonly repliesPerSecond: number;
    readonly resultsPerSecond: number;
    readonly history: readonly { readonly at: number; readonly replies: number; readonly results: number }[];
  };
  readonly latency: {
    readonly count: number;
    readonly lastMs: number | null;
    readonly p50Ms: number | null;
    readonly p95Ms: number | null;
    readonly maxMs: number | null;
  };
  readonly consumers: readonly ConsumerSample[];
  readonly dlqs: readonly { readonly name: string; readonly depth: number }[];
  readonly outputs: readonly OutputRecord[];
  readonly totals: { readonly requests: number; readonly replies: number; readonly outputs: number };
}

/** Options of {@link LiveFigures}. */
export interface LiveFiguresOptions {
  readonly prefix: string;
  readonly watermarks: DashboardSnapshot['watermarks'];
  /** Samples kept (one per tick). @default 180 */
  readonly historySize?: number;
  /** Latest outputs kept. @default 25 */
  readonly outputsSize?: number;
  /** Window of the throughput rates, seconds. @default 10 */
  readonly windowSeconds?: number;
  readonly clock?: () => number;
}

/**
 * The local runtime's live figures: fed by the sampler (depths, open aggregates, consumer
 * counters) and by every output the runtime publishes; read by the dashboard.
 */
export class LiveFigures {
  private readonly options: Required<Omit<LiveFiguresOptions, 'clock'>>;
  private readonly clock: () => number;
  private readonly startedAt: number;
  private readonly samples: Sample[] = [];
  private readonly totalsHistory: { at: number; requests: number; replies: number; results: number }[] = [];
  private readonly outputs: OutputRecord[] = [];
  private readonly seen = new Set<string>();
  private readonly latencies: number[] = [];
  private readonly closed = { completed: 0, timedOut: 0, purged: 0, failed: 0 };
  private results = 0;
  private outputCount = 0;

  public constructor(options: LiveFiguresOptions) {
    this.options = {
      prefix: options.prefix,
      watermarks: options.watermarks,
      historySize: options.historySize ?? 180,
      outputsSize: options.outputsSize ?? 25,
      windowSeconds: options.windowSeconds ?? 10,
    };
    this.clock = options.clock ?? Date.now;
    this.startedAt = this.clock();
  }

  /**
   * Records an output the runtime published. A retried publication of the same id (the output
   * ids are deterministic) is counted once. Returns the record, or undefined for a repeat.
   */
  public recordOutput(role: OutputRole, message: OutputMessage): OutputRecord | undefined {
    if (this.seen.has(message.id)) return undefined;
    this.seen.add(message.id);
    if (this.seen.size > 10_000) this.seen.delete(this.seen.values().next().value as string);
    const latencyMs = latencyOf(message);
    const record: OutputRecord = {
      at: this.clock(),
      role,
      id: message.id,
      type: message.type,
      ...(message.aggregateId ? { aggregateId: message.aggregateId } : {}),
      ...(message.definition ? { definition: message.definition } : {}),
      ...(latencyMs !== undefined ? { latencyMs } : {}),
      summary: describeOutput(message),
    };
    this.outputCount += 1;
    this.outputs.unshift(record);
    this.outputs.length = Math.min(this.outputs.length, this.options.outputsSize);
    switch (message.type) {
      case 'fanin.aggregate.completed':
        this.closed.completed += 1;
        break;
      case 'fanin.aggregate.timed-out':
        this.closed.timedOut += 1;
        break;
      case 'fanin.aggregate.purged':
        this.closed.purged += 1;
        break;
      case 'fanin.aggregate.failed':
        this.closed.failed += 1;
        break;
    }
    if (message.type === 'fanin.aggregate.completed' || message.type === 'fanin.aggregate.timed-out') {
      this.results += 1;
      if (latencyMs !== undefined) {
        this.latencies.push(latencyMs);
        if (this.latencies.length > 500) this.latencies.shift();
      }
    }
    return record;
  }

  /** Records one tick of the sampler. */
  public recordSample(sample: Sample): void {
    this.samples.push(sample);
    if (this.samples.length > this.options.historySize) this.samples.shift();
    const sum = (role: ConsumerSample['role']) =>
      sample.consumers.filter((c) => c.role === role).reduce((total, c) => total + c.records, 0);
    this.totalsHistory.push({
      at: sample.at,
      requests: sum('fan-out'),
      replies: sum('reply'),
      results: this.results,
    });
    if (this.totalsHistory.length > this.options.historySize) this.totalsHistory.shift();
  }

  /** The dashboard's document. */
  public snapshot(): DashboardSnapshot {
    const latest = this.samples.at(-1);
    const open = Object.values(latest?.openByDefinition ?? {}).reduce((a, b) => a + b, 0);
    const totals = this.totalsHistory.at(-1) ?? { at: this.startedAt, requests: 0, replies: 0, results: 0 };
    const windowStart = totals.at - this.options.windowSeconds * 1000;
    const base = this.totalsHistory.find((t) => t.at >= windowStart) ?? totals;
    const seconds = Math.max(1, (totals.at - base.at) / 1000);
    const rate = (now: number, then: number) => Math.round(((now - then) / seconds) * 10) / 10;
    const perSecond = this.totalsHistory.map((t, i) => {
      const previous = this.totalsHistory[i - 1] ?? t;
      const dt = Math.max(0.001, (t.at - previous.at) / 1000);
      return {
        at: t.at,
        replies: Math.round(((t.replies - previous.replies) / dt) * 10) / 10,
        results: Math.round(((t.results - previous.results) / dt) * 10) / 10,
      };
    });
    const sorted = [...this.latencies].sort((a, b) => a - b);
    const percentile = (p: number) =>
      sorted.length === 0
        ? null
        : (sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? null);
    return {
      at: this.clock(),
      prefix: this.options.prefix,
      startedAt: this.startedAt,
      watermarks: this.options.watermarks,
      partitions: latest?.partitions ?? [],
      backlogDepth: latest?.backlogDepth ?? null,
      history: this.samples.map((s) => ({
        at: s.at,
        depths: s.partitions.map((p) => p.depth),
        backlog: s.backlogDepth,
      })),
      aggregates: {
        open,
        openByDefinition: latest?.openByDefinition ?? {},
        completing: latest?.completing ?? 0,
        ...this.closed,
      },
      throughput: {
        windowSeconds: this.options.windowSeconds,
        requestsPerSecond: rate(totals.requests, base.requests),
        repliesPerSecond: rate(totals.replies, base.replies),
        resultsPerSecond: rate(totals.results, base.results),
        history: perSecond,
      },
      latency: {
        count: this.latencies.length,
        lastMs: this.latencies.at(-1) ?? null,
        p50Ms: percentile(0.5),
        p95Ms: percentile(0.95),
        maxMs: sorted.at(-1) ?? null,
      },
      consumers: latest?.consumers ?? [],
      dlqs: latest?.dlqs ?? [],
      outputs: [...this.outputs],
      totals: { requests: totals.requests, replies: totals.replies, outputs: this.outputCount },
    };
  }
}
