import type { Calibration } from './calibrate.ts';
import type { Bill, Usage } from './cost.ts';
import type { AwsLimits, HotBounds, HotDesign, HotMeasurement, HotSimulation } from './hot-aggregate.ts';

/** One fan-out of the scale curve: fanin and the naive baseline on the same replies. */
export interface ScalePoint {
  readonly fanOut: number;
  readonly aggregates: number;
  readonly replies: number;
  readonly fanin: {
    readonly writeUnitsPerReply: number;
    readonly recordingWriteUnitsPerReply: number;
    readonly indexWriteUnitsPerReply: number;
    readonly readUnitsPerReply: number;
    readonly repliesPerSecond: number;
    readonly outcomes: Readonly<Record<string, number>>;
  };
  readonly baseline: {
    /** `replayed` reply by reply, or sampled at reply positions (large fan-outs, see `sampleNaive`). */
    readonly method: string;
    readonly writeUnitsPerReply: number;
    readonly recordingWriteUnitsPerReply: number;
    readonly readUnitsPerReply: number;
    /** Null when sampled. */
    readonly repliesPerSecond: number | null;
  };
  /** Baseline write units per reply over fanin's. */
  readonly ratio: number;
}

/** One arrival phase's figures, per reply unless named otherwise; all-in (the deadline timer's firing included). */
export interface ArrivalFigures {
  readonly fan_out: number;
  readonly batching_window_seconds: number;
  /** Null: as fast as the responders could send. */
  readonly offered_replies_per_second: number | null;
  readonly aggregates: number;
  readonly replies: number;
  readonly write_units: number;
  readonly index_write_units: number;
  readonly read_units: number;
  /** fanin's handlers and its event source mappings, empty receives left out. */
  readonly sqs_calls: number;
  /** Producer, responders and result consumer. */
  readonly client_sqs_calls: number;
  readonly reply_invocations: number;
  readonly replies_per_batch: number;
  /** Mean replies of one aggregate in one reply batch: what a state protocol can share a write across. */
  readonly replies_per_aggregate_per_batch: number;
  readonly cost_per_million_aggregates_usd: number;
  readonly fanin_only_per_million_usd: number;
  readonly completion_latency_ms: { readonly p50: number; readonly p99: number; readonly samples: number };
  readonly outcomes: Readonly<Record<string, number>>;
}

/** One arrival pattern (issue 12): the contract fields first, then every phase measured. */
export interface ArrivalPatternResult {
  /** By fan-out. */
  readonly write_units_per_reply: Readonly<Record<string, number>>;
  readonly read_units_per_reply: Readonly<Record<string, number>>;
  readonly sqs_calls_per_reply: Readonly<Record<string, number>>;
  /** Fan-out 10, end to end (fanin plus its clients' SQS calls). */
  readonly cost_per_million_aggregates_usd: number;
  /** Fan-out 10, from the last reply's send to the result read off the output queue. */
  readonly completion_latency_ms: { readonly p50: number; readonly p99: number; readonly samples: number };
  readonly batching_window_seconds: number;
  /** At the topology's batching window, every fan-out. */
  readonly measured: readonly ArrivalFigures[];
  /** Fan-out 10 at other batching windows. */
  readonly other_batching_windows: readonly ArrivalFigures[];
}

/** The arrival patterns, as `bench/rig.ts` names them. */
export type ArrivalPatternName = 'together' | 'independent' | 'spread';

/** The raw store capacity over one window. */
export interface CapacityFigures {
  readonly puts_per_second: number;
  readonly per_second: readonly number[];
  readonly duration_ms: number;
}

/** `bench/results/*.json`. The first block is the contract of issues 7 and 12; the rest explains it. */
export interface Results {
  readonly schema: 2;
  readonly date: string;
  readonly commit: string;
  readonly quick: boolean;
  /** How this run was started. */
  readonly command: string;
  readonly duration_seconds: number;
  readonly machine: {
    readonly cpus: number;
    readonly memory_gib: number;
    readonly node: string;
    readonly load_average_start: readonly number[];
    readonly load_average_end: readonly number[];
    readonly emulators: readonly string[];
  };
  /** The pattern of the headline figures (replies arriving independently). */
  readonly headline_pattern: ArrivalPatternName;
  readonly arrival: Readonly<Record<ArrivalPatternName, ArrivalPatternResult>>;
  readonly arrival_setup: {
    readonly offered_replies_per_second: number;
    readonly rotation: number;
    readonly spread: { readonly medianMs: number; readonly sigma: number; readonly maxMs: number };
    readonly default_batching_window_seconds: number;
  };
  /** Saturated, replies independent: from the first reply released to the last result. */
  readonly replies_per_second: number;
  readonly aggregates_per_second: number;
  readonly completion_latency_ms: {
    readonly p50: number;
    readonly p99: number;
    readonly samples: number;
    readonly pattern: ArrivalPatternName;
    readonly offered_replies_per_second: number;
    readonly saturated: { readonly p50: number; readonly p99: number };
  };
  /** fanin's write units per reply (all-in) by fan-out. */
  readonly write_units_per_reply: Readonly<Record<string, number>>;
  /** Baseline write units per reply over fanin's, by fan-out. */
  readonly baseline_ratio: Readonly<Record<string, number>>;
  /** The scale curve as a line: write units per reply plus write units per aggregate. */
  readonly write_units_fit: { readonly per_reply: number; readonly per_aggregate: number };
  readonly sqs_calls_per_reply: number;
  /** Null when the capacity windows before and after the run disagree by more than the limit. */
  readonly fraction_of_store_capacity: number | null;
  readonly cost_per_million_aggregates_usd: number;
  readonly headline: {
    readonly pattern: ArrivalPatternName;
    readonly aggregates: number;
    readonly replies: number;
    readonly fan_out: number;
    readonly reply_bytes: number;
    /** Mean bytes a headline body takes in its reply item (fanin stores it compressed when smaller). */
    readonly stored_payload_bytes?: number;
    readonly elapsed_ms: number;
    readonly outcomes: Readonly<Record<string, number>>;
    readonly per_reply: {
      readonly write_units: number;
      readonly index_write_units: number;
      readonly read_units: number;
      readonly write_units_by_operation: Readonly<Record<string, number>>;
      readonly read_units_by_operation: Readonly<Record<string, number>>;
      readonly dynamodb_calls_by_operation: Readonly<Record<string, number>>;
      readonly sqs_calls_by_operation: Readonly<Record<string, number>>;
      readonly sqs_billed_requests: Readonly<Record<string, number>>;
      readonly timer_firing_sqs_calls_by_operation: Readonly<Record<string, number>>;
      readonly handler_invocations: Readonly<Record<string, number>>;
      readonly records_per_invocation: Readonly<Record<string, number>>;
      readonly emulator_reported_transaction_write_units: number;
      readonly empty_receives_excluded: number;
    };
  };
  readonly saturated: {
    readonly pattern: ArrivalPatternName;
    readonly aggregates: number;
    readonly replies: number;
    readonly release_to_last_result_ms: number;
    readonly write_units_per_reply: number;
  };
  readonly store_capacity: {
    readonly item: string;
    readonly concurrency: number;
    readonly window_ms: number;
    readonly before: CapacityFigures;
    readonly after: CapacityFigures;
    readonly mean_puts_per_second: number;
    /** |after − before| / mean. */
    readonly spread: number;
    readonly spread_limit: number;
    /** Slowest and fastest whole second over both windows. */
    readonly per_second_range: readonly number[];
    /** The fraction against the faster and the slower window. */
    readonly fraction_range: readonly number[];
    readonly meaningful: boolean;
  };
  readonly cost: {
    readonly prices_taken: string;
    readonly region: string;
    readonly scenario: string;
    readonly fanin: {
      readonly usage_per_aggregate: Usage;
      readonly per_million_aggregates: Bill;
      readonly timer_firing_usage: Usage;
    };
    readonly fanin_clients: { readonly usage_per_aggregate: Usage; readonly per_million_aggregates: Bill };
    readonly fanin_total_per_million: number;
    readonly step_functions_standard: {
      readonly transitions_per_aggregate: number;
      readonly orchestration_per_million: Bill;
      readonly clients_per_million: Bill;
      readonly total_per_million: number;
    };
    readonly step_functions_express: {
      readonly per_million_by_answer_seconds: readonly {
        readonly seconds: number;
        readonly per_million_usd: number;
      }[];
      /** Express costs less than fanin end to end while the slowest responder answers within this. */
      readonly cheaper_than_fanin_below_seconds: number;
    };
    /** The least fan-out 10's replies can cost per million aggregates: {@link replyFloorPerMillion}. */
    readonly reply_floor_per_million: {
      readonly one_reply_per_batch: number;
      readonly ten_replies_per_batch: number;
    };
    readonly naive_baseline_dynamodb: {
      readonly usage_per_aggregate: { readonly write_units: number; readonly read_units: number };
      readonly per_million_aggregates: number;
    };
    readonly fixed_monthly: {
      readonly items: readonly { readonly item: string; readonly how: string; readonly usd: number }[];
      readonly total_usd: number;
      /** The total README's "What it costs at rest" states; null if not found. */
      readonly readme_total_usd: number | null;
      readonly reply_partitions: number;
    };
  };
  readonly scale: readonly ScalePoint[];
  /** The baseline at one fan-out both replayed and sampled: how far the sampling is from the replay. */
  readonly baseline_sampling_check?: {
    readonly fan_out: number;
    readonly positions: number;
    readonly replayed_write_units_per_reply: number;
    readonly sampled_write_units_per_reply: number;
  };
  readonly hot_aggregate: {
    /** The definition's default layout, `writeShards: 1`. */
    readonly measured: Omit<HotMeasurement, 'counters'> & { readonly counters: undefined };
    /** The same aggregate with `writeShards` > 1, spread by the state store itself. */
    readonly sharded: Omit<HotMeasurement, 'counters'> & { readonly counters: undefined };
    readonly aws_limits: AwsLimits;
    readonly model: readonly {
      readonly design: HotDesign;
      readonly bounds: HotBounds;
      readonly simulation: HotSimulation;
    }[];
  };
  readonly calibration: Calibration;
  readonly timers: { readonly fired: number; readonly completed_first: Readonly<Record<string, number>> };
  readonly sanity: {
    readonly failedRecords: number;
    readonly pollerErrors: number;
    readonly responderErrors: number;
    readonly collectorErrors: number;
    readonly outputsSeen: Readonly<Record<string, number>>;
    /** Transactional updates of items the meter had not seen, by who (costed as 1 KB). */
    readonly transactionSizesUnknown: Readonly<Record<string, number>>;
    readonly unregisteredTables: number;
  };
}

/**
 * Least-squares fit of an aggregate's write units against its fan-out over the scale curve:
 * `perReply` × fan-out + `perAggregate`. It says what a reply costs and what an aggregate costs
 * whatever its size.
 */
export function fitUnits(points: readonly ScalePoint[]): { perReply: number; perAggregate: number } {
  const xs = points.map((p) => p.fanOut);
  const ys = points.map((p) => p.fanin.writeUnitsPerReply * p.fanOut);
  const n = xs.length;
  const mx = xs.reduce((a, b) => a + b, 0) / n;
  const my = ys.reduce((a, b) => a + b, 0) / n;
  let sxy = 0;
  let sxx = 0;
  for (const [i, x] of xs.entries()) {
    sxy += (x - mx) * ((ys[i] ?? 0) - my);
    sxx += (x - mx) ** 2;
  }
  const perReply = sxx === 0 ? 0 : sxy / sxx;
  return { perReply, perAggregate: my - perReply * mx };
}

const fmt = (n: number | null | undefined, digits = 2): string =>
  n === null || n === undefined || !Number.isFinite(n)
    ? '—'
    : n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: 0 });
const usd = (n: number): string =>
  `$${n.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;

/**
 * The scale chart: write units per reply against fan-out, fanin (all-in and recording only) and
 * the naive baseline, both axes logarithmic (the baseline grows by two orders of magnitude).
 */
export function renderScaleSvg(results: Results): string {
  const width = 720;
  const height = 440;
  const margin = { left: 70, right: 190, top: 40, bottom: 60 };
  const plotW = width - margin.left - margin.right;
  const plotH = height - margin.top - margin.bottom;
  const points = results.scale;
  const xs = points.map((p) => p.fanOut);
  const ys = points.flatMap((p) => [
    p.fanin.writeUnitsPerReply,
    p.fanin.recordingWriteUnitsPerReply,
    p.baseline.writeUnitsPerReply,
  ]);
  const xMin = Math.log10(Math.min(...xs, 10));
  const xMax = Math.log10(Math.max(...xs, 10_000));
  const yMin = Math.floor(Math.log10(Math.max(0.5, Math.min(...ys))));
  const yMax = Math.ceil(Math.log10(Math.max(...ys, 10)));
  const x = (v: number) => margin.left + ((Math.log10(v) - xMin) / (xMax - xMin || 1)) * plotW;
  const y = (v: number) => margin.top + plotH - ((Math.log10(v) - yMin) / (yMax - yMin || 1)) * plotH;
  const parts: string[] = [];
  parts.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="${width}" height="${height}" fill="white"/>`,
    `<text x="${margin.left}" y="22" font-size="15" font-weight="bold">DynamoDB write units per reply vs fan-out (log–log)</text>`,
  );
  for (let e = Math.ceil(xMin); e <= Math.floor(xMax); e += 1) {
    const px = x(10 ** e);
    parts.push(
      `<line x1="${px}" y1="${margin.top}" x2="${px}" y2="${margin.top + plotH}" stroke="#ddd"/>`,
      `<text x="${px}" y="${margin.top + plotH + 18}" text-anchor="middle">${fmt(10 ** e, 0)}</text>`,
    );
  }
  for (let e = yMin; e <= yMax; e += 1) {
    for (const m of [1, 2, 5]) {
      const v = m * 10 ** e;
      if (Math.log10(v) > yMax) continue;
      const py = y(v);
      parts.push(
        `<line x1="${margin.left}" y1="${py}" x2="${margin.left + plotW}" y2="${py}" stroke="${m === 1 ? '#ccc' : '#eee'}"/>`,
      );
      if (m !== 5)
        parts.push(`<text x="${margin.left - 8}" y="${py + 4}" text-anchor="end">${fmt(v, 1)}</text>`);
    }
  }
  parts.push(
    `<rect x="${margin.left}" y="${margin.top}" width="${plotW}" height="${plotH}" fill="none" stroke="#333"/>`,
    `<text x="${margin.left + plotW / 2}" y="${height - 18}" text-anchor="middle">replies per aggregate (fan-out)</text>`,
    `<text transform="translate(18 ${margin.top + plotH / 2}) rotate(-90)" text-anchor="middle">write units per reply</text>`,
  );
  const series: {
    name: string;
    color: string;
    dash: string;
    value: (p: ScalePoint) => number;
    hollow: (p: ScalePoint) => boolean;
  }[] = [
    {
      name: 'naive baseline (one item)',
      color: '#c0392b',
      dash: '',
      value: (p) => p.baseline.writeUnitsPerReply,
      hollow: (p) => p.baseline.method !== 'replayed',
    },
    {
      name: 'fanin, all-in',
      color: '#1f6fb2',
      dash: '',
      value: (p) => p.fanin.writeUnitsPerReply,
      hollow: () => false,
    },
    {
      name: 'fanin, recording only',
      color: '#1f6fb2',
      dash: '5 4',
      value: (p) => p.fanin.recordingWriteUnitsPerReply,
      hollow: () => false,
    },
  ];
  for (const [i, s] of series.entries()) {
    const path = points
      .map((p, j) => `${j === 0 ? 'M' : 'L'}${x(p.fanOut).toFixed(1)},${y(s.value(p)).toFixed(1)}`)
      .join(' ');
    parts.push(
      `<path d="${path}" fill="none" stroke="${s.color}" stroke-width="2.5" stroke-dasharray="${s.dash}"/>`,
    );
    for (const p of points) {
      const px = x(p.fanOut);
      const py = y(s.value(p));
      parts.push(
        `<circle cx="${px.toFixed(1)}" cy="${py.toFixed(1)}" r="4" fill="${s.hollow(p) ? 'white' : s.color}" stroke="${s.color}" stroke-width="2"/>`,
        // Labels go right of a point, except at the right edge, where they would run into the legend.
        // The baseline's labels sit below its points, clear of fanin's lines above them.
        p.fanOut === Math.max(...xs)
          ? `<text x="${(px - 6).toFixed(1)}" y="${(py - 7).toFixed(1)}" fill="${s.color}" text-anchor="end">${fmt(s.value(p), 2)}</text>`
          : `<text x="${(px + 6).toFixed(1)}" y="${(i === 0 ? py + 16 : py - 7).toFixed(1)}" fill="${s.color}">${fmt(s.value(p), 2)}</text>`,
      );
    }
    const ly = margin.top + 20 + i * 22;
    const lx = margin.left + plotW + 16;
    parts.push(
      `<line x1="${lx}" y1="${ly}" x2="${lx + 26}" y2="${ly}" stroke="${s.color}" stroke-width="2.5" stroke-dasharray="${s.dash}"/>`,
      `<text x="${lx + 32}" y="${ly + 4}">${s.name}</text>`,
    );
  }
  parts.push(
    `<text x="${margin.left + plotW + 16}" y="${margin.top + plotH - 32}" fill="#555">${results.quick ? 'quick run' : 'full run'}, ${results.date.slice(0, 10)}</text>`,
    `<text x="${margin.left + plotW + 16}" y="${margin.top + plotH - 16}" fill="#555">small replies (~20 B body)</text>`,
    ...(points.some((p) => p.baseline.method !== 'replayed')
      ? [
          `<text x="${margin.left + plotW + 16}" y="${margin.top + plotH}" fill="#555">hollow: sampled, not replayed</text>`,
        ]
      : []),
    '</svg>',
  );
  return `${parts.join('\n')}\n`;
}

/** The markdown report: every figure with the sentence that says what it is. */
export function renderMarkdown(results: Results, svgName: string): string {
  const r = results;
  const h = r.headline.per_reply;
  const c = r.cost;
  const lines: string[] = [];
  const push = (...more: string[]) => lines.push(...more);
  push(
    `# fanin benchmark — ${r.quick ? 'quick' : 'full'} run`,
    '',
    `${r.date} · \`${r.command}\` · commit \`${r.commit.slice(0, 12)}\` · ${r.duration_seconds} s · ${r.machine.cpus} CPUs, ${r.machine.memory_gib} GiB, Node ${r.machine.node} · emulators: ${r.machine.emulators.join(', ') || 'none (endpoint from the environment)'} · load average ${r.machine.load_average_start.join(' / ')} at the start, ${r.machine.load_average_end.join(' / ')} at the end`,
    '',
    '> Throughput and latency here are those of **local emulators** (fauxqs in the benchmark process, DynamoDB Local',
    '> in a JVM) on a small shared machine: read them as ratios (fanin against the raw store, fanin against the baseline),',
    '> not as what AWS would do. Counts — API calls, write and read units, invocations — do not depend on the machine:',
    '> they are what AWS would bill for the same work.',
    '',
    '## Reproduce',
    '',
    '```sh',
    'npm ci',
    'npm run bench             # full run (≤ 12 min): bench/results/latest.{json,md}, scale.svg',
    'npm run bench -- --quick  # smoke run (≤ 3 min): bench/results/quick.{json,md}, quick-scale.svg',
    'npm run bench -- --replay-baseline  # also replay the naive baseline at fan-out 10,000 (+5–15 min)',
    '```',
    '',
    'Java 17+ is needed for DynamoDB Local; with `AWS_ENDPOINT_URL` set (LocalStack) nothing is started.',
    '',
    '## Headline figures',
    '',
    `Replies arrive **${r.headline_pattern}ly** (see "Arrival patterns" for all three side by side): each reply sent on its own, round-robin over ${r.arrival_setup.rotation} aggregates at a time, ${fmt(r.arrival_setup.offered_replies_per_second, 0)} replies/s offered; reply batching window ${r.arrival_setup.default_batching_window_seconds} s (the topology's).`,
    '',
    '| figure | value | what it is |',
    '|---|---|---|',
    `| cost per million aggregates | ${usd(r.cost_per_million_aggregates_usd)} | fan-out 10, 1 KB replies, at us-east-1 list prices of ${c.prices_taken}: fanin's own bill plus its clients' SQS calls, the deadline timer's firing included; details below. Step Functions Standard with callback tokens: ${usd(c.step_functions_standard.total_per_million)} (${fmt(c.step_functions_standard.total_per_million / r.cost_per_million_aggregates_usd, 1)}×). Replies together: ${usd(r.arrival.together.cost_per_million_aggregates_usd)}. |`,
    `| write units per reply | ${byFanOut(r.arrival[r.headline_pattern].write_units_per_reply)} | every DynamoDB write unit fanin spent on an aggregate (opening, recording, completing, closing, the timer firing) over its replies, 1 KB replies. Replies together: ${byFanOut(r.arrival.together.write_units_per_reply)}; spread: ${byFanOut(r.arrival.spread.write_units_per_reply)}. |`,
    `| completion latency p50 / p99 | ${fmt(r.completion_latency_ms.p50, 0)} / ${fmt(r.completion_latency_ms.p99, 0)} ms | from the moment the last reply of an aggregate is handed to SQS to the moment its result is received from the output queue, over ${r.completion_latency_ms.samples} aggregates. ${r.arrival_setup.default_batching_window_seconds > 0 ? `It is mostly the reply batching window (${r.arrival_setup.default_batching_window_seconds} s) running out` : 'No reply batching window by default'}: see "Batching window" for the trade-off. |`,
    `| SQS calls per reply | ${fmt(r.sqs_calls_per_reply, 3)} | all-in: calls of fanin's handlers and of Lambda's event source mappings for them (receives that returned messages, deletes), the deadline timer's send, receive and delete included. Clients' calls are apart (below). |`,
    `| replies per second | ${fmt(r.replies_per_second, 1)} | saturated, replies independent: ${fmt(r.saturated.replies, 0)} replies of 1 KB released as fast as the responders send, from the first reply released to the last result read. |`,
    `| fraction of store capacity | ${r.fraction_of_store_capacity === null ? `not reported (capacity moved ${fmt(r.store_capacity.spread * 100, 0)} % between the windows)` : fmt(r.fraction_of_store_capacity, 3)} | those replies per second over the raw PutItem rate of the same warm DynamoDB Local, measured just before and just after the run (${fmt(r.store_capacity.before.puts_per_second, 0)} and ${fmt(r.store_capacity.after.puts_per_second, 0)} puts/s); see "Store capacity". |`,
    `| scale curve, write units per reply | ${byFanOut(r.write_units_per_reply)} | small replies arriving together, fan-out 10 to ${fmt(Math.max(...r.scale.map((p) => p.fanOut)), 0)}, beside the naive baseline (${Object.entries(
      r.baseline_ratio,
    )
      .map(([f, v]) => `${fmt(v, 2)}× @${f}`)
      .join(', ')}; below 1× the naive design is cheaper). |`,
    '',
    ...arrivalSection(r),
    ...storeCapacitySection(r),
    `## Per reply, headline run (fan-out 10, 1 KB replies, ${r.headline_pattern})`,
    '',
    `Write units per reply: **${fmt(h.write_units, 3)}** (of which ${fmt(h.index_write_units, 3)} on secondary indexes); read units per reply: **${fmt(h.read_units, 3)}**. ${(h.write_units_by_operation['fanin:reply TransactWriteItems'] ?? 0) > 0 ? `DynamoDB Local reported ${fmt(h.emulator_reported_transaction_write_units, 3)} units per reply for the transactions, which it undercounts (see "How units are counted"); the figures here apply DynamoDB's rules to the items written.` : 'The figures apply DynamoDB\'s rules to the items written (see "How units are counted").'}`,
    '',
    '| who · operation | write units / reply | read units / reply | calls / reply |',
    '|---|---|---|---|',
    ...Object.keys({
      ...h.write_units_by_operation,
      ...h.read_units_by_operation,
      ...h.dynamodb_calls_by_operation,
    })
      .sort()
      .map(
        (k) =>
          `| ${k} | ${fmt(h.write_units_by_operation[k], 3)} | ${fmt(h.read_units_by_operation[k], 3)} | ${fmt(h.dynamodb_calls_by_operation[k], 3)} |`,
      ),
    '',
    "SQS calls per reply, by who makes them (`esm` is Lambda's event source mapping; `clients` are the producer, the responders and the result consumer; the last word is the queue):",
    '',
    '| who · operation · queue | calls / reply |',
    '|---|---|',
    ...Object.entries(h.sqs_calls_by_operation).map(
      ([k, v]) => `| ${k.replaceAll('|', ' · ')} | ${fmt(v, 4)} |`,
    ),
    '',
    `The deadline timer's firing adds, per reply: ${
      Object.entries(h.timer_firing_sqs_calls_by_operation)
        .map(([k, v]) => `${k.replaceAll('|', ' · ')} ${fmt(v, 3)}`)
        .join(', ') || 'nothing'
    } (in the all-in figures, not in this table).`,
    '',
    `Handler invocations per reply: ${Object.entries(h.handler_invocations)
      .map(([k, v]) => `${k} ${fmt(v, 3)}`)
      .join(', ')} (records per invocation: ${Object.entries(h.records_per_invocation)
      .map(([k, v]) => `${k} ${fmt(v, 1)}`)
      .join(
        ', ',
      )}). ${fmt(h.empty_receives_excluded, 0)} empty long-poll receives during the run are left out of every per-reply figure: they measure how long the pollers idled, not the work.`,
    '',
    ...whereTheUnitsGo(r),
    '## Scale curve',
    '',
    `![write units per reply vs fan-out](${svgName})`,
    '',
    'Write units per reply at each fan-out, small replies (a score and an id), fanin through its real handlers, the naive baseline',
    '(`bench/baseline.ts`: one item per aggregate holding every reply, one conditional `UpdateItem` per reply) on the same replies',
    'against the same DynamoDB Local. DynamoDB bills an update by the larger of the item before and after, so each naive reply',
    'pays for every reply before it: its cost per reply grows linearly with the fan-out, and the item would stop at 400 KB.',
    '',
    '| fan-out | aggregates | fanin all-in | fanin recording | fanin index | fanin read | baseline all-in | baseline recording | ratio | fanin replies/s | baseline replies/s |',
    '|---|---|---|---|---|---|---|---|---|---|---|',
    ...r.scale.map(
      (p) =>
        `| ${fmt(p.fanOut, 0)} | ${p.aggregates} | ${fmt(p.fanin.writeUnitsPerReply, 3)} | ${fmt(p.fanin.recordingWriteUnitsPerReply, 3)} | ${fmt(p.fanin.indexWriteUnitsPerReply, 3)} | ${fmt(p.fanin.readUnitsPerReply, 3)} | ${fmt(p.baseline.writeUnitsPerReply, 3)}${p.baseline.method === 'replayed' ? '' : ' *'} | ${fmt(p.baseline.recordingWriteUnitsPerReply, 3)} | ${fmt(p.ratio, 2)}× | ${fmt(p.fanin.repliesPerSecond, 1)} | ${fmt(p.baseline.repliesPerSecond, 1)} |`,
    ),
    '',
    ...sampledNote(r),
    `Fitted over the curve, an aggregate costs **${fmt(r.write_units_fit.per_reply, 3)} write units per reply + ${fmt(r.write_units_fit.per_aggregate, 1)} per aggregate** (small replies): the per-reply part does not depend on the fan-out.`,
    '',
    '"All-in" is every write unit of the aggregate\'s life over its replies; "recording" only the reply handler\'s writes that',
    'record replies (a transaction per batch, or a conditional put per reply; for the baseline, its per-reply updates).',
    'Each naive reply pays for every reply before it, so its cost grows with the fan-out; what fanin pays per reply should not.',
    '',
    '## Cost per million aggregates',
    '',
    `Scenario: ${c.scenario}. Prices: \`bench/prices.json\` (${c.region}, taken ${c.prices_taken}, no free tier). Usage is counted in the headline run and divided by its aggregates; the deadline timer's firing is measured in a separate phase (${r.timers.fired} timers) and added.`,
    '',
    '| | DynamoDB | SQS | Lambda | Step Functions | total |',
    '|---|---|---|---|---|---|',
    `| fanin (handlers, event source polling) | ${usd(c.fanin.per_million_aggregates.dynamodb)} | ${usd(c.fanin.per_million_aggregates.sqs)} | ${usd(c.fanin.per_million_aggregates.lambda)} | — | ${usd(c.fanin.per_million_aggregates.total)} |`,
    `| fanin's clients (producer, responders, consumer) | — | ${usd(c.fanin_clients.per_million_aggregates.sqs)} | — | — | ${usd(c.fanin_clients.per_million_aggregates.total)} |`,
    `| **fanin, end to end** | | | | | **${usd(c.fanin_total_per_million)}** |`,
    `| Step Functions Standard, orchestration | — | ${usd(c.step_functions_standard.orchestration_per_million.sqs)} | — | ${usd(c.step_functions_standard.orchestration_per_million.stepFunctions)} | ${usd(c.step_functions_standard.orchestration_per_million.total)} |`,
    `| Step Functions' clients | — | ${usd(c.step_functions_standard.clients_per_million.sqs)} | — | — | ${usd(c.step_functions_standard.clients_per_million.total)} |`,
    `| **Step Functions Standard, end to end** | | | | | **${usd(c.step_functions_standard.total_per_million)}** |`,
    `| naive baseline, DynamoDB alone | ${usd(c.naive_baseline_dynamodb.per_million_aggregates)} | | | | |`,
    '',
    `The naive baseline stores reply bodies as fanin does (\`encodePayload\` of \`shared/adapters/payload-codec.ts\`: Brotli when smaller, ${fmt(r.headline.stored_payload_bytes ?? Number.NaN, 0)} of ${fmt(r.headline.reply_bytes, 0)} bytes on average), and its cost does not depend on how replies arrive (one update per reply whatever the batch). It is a floor, not a design that could ship: **it does not survive a crash during completion**. Only the invocation whose update made the count reach the fan-out completes; stopped before it closes the item, nobody completes (the result is lost and the aggregate stays open); a retry that re-ran completion on finding the item full would emit a second result when the first invocation was only slow (a duplicate). It has no claim, no member set, no lease, no deadline timer, no late-reply routing and no tombstone, all of which fanin pays for.`,
    '',
    `fanin per aggregate: ${fmt(c.fanin.usage_per_aggregate.writeUnits, 1)} write units, ${fmt(c.fanin.usage_per_aggregate.readUnits, 1)} read units, ${fmt(c.fanin.usage_per_aggregate.sqsStandard, 2)} standard and ${fmt(c.fanin.usage_per_aggregate.sqsFifo, 2)} FIFO SQS requests, ${fmt(c.fanin.usage_per_aggregate.invocations, 2)} Lambda invocations of ~${fmt(c.fanin.usage_per_aggregate.lambdaMs / Math.max(c.fanin.usage_per_aggregate.invocations, 1e-9), 0)} ms estimated (512 MB, arm64: the CDK construct's defaults; duration from the calls counted, at 8 ms per DynamoDB and 12 ms per SQS call — see \`prices.json\`). Of that, the deadline timer firing adds ${fmt(c.fanin.timer_firing_usage.sqsStandard, 2)} SQS requests, ${fmt(c.fanin.timer_firing_usage.invocations, 2)} invocations and ${fmt(c.fanin.timer_firing_usage.readUnits, 2)} read units.`,
    '',
    `Step Functions Standard is counted at ${c.step_functions_standard.transitions_per_aggregate} state transitions per aggregate (a Map state, one \`.waitForTaskToken\` SQS task per branch, a Pass state to aggregate, an SQS task for the result) at $0.025 per 1,000, plus one SendMessage per branch and one for the result; responders answer with SendTaskSuccess (not billed) instead of a reply message. That machine has no timeout handling, so it is a lower bound. The transitions alone cost ${usd(c.step_functions_standard.orchestration_per_million.stepFunctions)} per million aggregates.`,
    '',
    ...expressSection(r),
    ...fixedSection(r),
    ...hotSection(r),
    '## How units are counted',
    '',
    "- Every DynamoDB call of the benchmark's clients goes through SDK middleware that adds `ReturnConsumedCapacity: 'INDEXES'`",
    "  and counts the answer. DynamoDB Local applies DynamoDB's rules correctly to single-item writes, batch writes and reads",
    `  (checked at the start of each run: ${r.calibration.agreeing} of ${r.calibration.probes} probe writes agree with the model, and a transaction of items of distinct sizes reports ${r.calibration.distinctTransaction.reported} for ${r.calibration.distinctTransaction.model}).`,
    `- For \`TransactWriteItems\` it does not: it counts items of equal cost once (ten 3 KB puts in one transaction: ${r.calibration.equalTransaction.reported} reported, ${r.calibration.equalTransaction.model} by the rules). Transactions are therefore costed by the rules: 2 units per KB of each item (the larger of before and after; the image before is the last one the meter saw), plus a standard write for each secondary-index entry that changes (index propagation follows the commit; if AWS billed it double, add the index units once more).`,
    '- A failed conditional write is charged like a write of the existing item, as AWS does. Cancelled transactions (conflicts) are not charged in these figures; AWS does not document their cost.',
    '- SQS calls are counted per operation; billed requests count each 64 KB of payload (bodies and attributes) as one request. Empty receives are kept apart.',
    '',
    '## Sanity',
    '',
    `Failed records ${r.sanity.failedRecords}, poller errors ${r.sanity.pollerErrors}, responder errors ${r.sanity.responderErrors}, collector errors ${r.sanity.collectorErrors}; transactional updates of items the meter had not seen (costed as 1 KB) ${
      Object.entries(r.sanity.transactionSizesUnknown)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ') || 'none'
    }; outputs seen: ${Object.entries(r.sanity.outputsSeen)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}.`,
    '',
  );
  return lines.join('\n');
}

/** The hot-aggregate section: both layouts as measured, then the AWS model. */
function hotSection(r: Results): string[] {
  const h = r.hot_aggregate;
  const runs = [h.measured, h.sharded];
  const row = (label: string, cell: (m: Results['hot_aggregate']['measured']) => string, what: string) =>
    `| ${label} | ${runs.map(cell).join(' | ')} | ${what} |`;
  const keys = (m: Results['hot_aggregate']['measured']) =>
    Object.entries(m.unitsByKey)
      .sort((a, b) => Number(a[0].slice(6)) - Number(b[0].slice(6)))
      .map(([, units]) => fmt(units, 0))
      .join(' · ');
  const l = h.aws_limits;
  return [
    '## Hot aggregate',
    '',
    `One aggregate (fan-out \`none\`, strategy \`all\`, expected ${fmt(h.measured.replies, 0)}) receiving ${fmt(h.measured.replies, 0)} small replies from 4 concurrent batch senders to its reply partition, through the real reply handler, once per layout: \`${h.measured.definition}\` (\`writeShards: ${h.measured.writeShards}\`, the default) and \`${h.sharded.definition}\` (\`writeShards: ${h.sharded.writeShards}\`: the state store spreads the reply items over ${h.sharded.writeShards} partition keys). A reply is one conditional \`PutItem\` of its own item: no transaction, no header write per reply. See [docs/hot-aggregates.md](../../docs/hot-aggregates.md).`,
    '',
    `| figure | writeShards ${h.measured.writeShards} | writeShards ${h.sharded.writeShards} | what it is |`,
    '|---|---|---|---|',
    row(
      'write units per reply',
      (m) => `${fmt(m.writeUnitsPerReply, 3)} all-in, ${fmt(m.recordingWriteUnitsPerReply, 3)} recording`,
      'recording: the reply `PutItem`s; all-in adds the completion trigger, the seal and the close (and their index entries).',
    ),
    row(
      'other writes on the header key, per reply',
      (m) => fmt(m.headerKeyOtherWriteUnitsPerReply, 3),
      'table units on `A#<id>` besides the reply puts: above 128 expected replies with no index ids, a counter update per batch triggers the completion read (`addToCounter`), plus the seal and the close once.',
    ),
    row(
      'read units per reply',
      (m) =>
        `${fmt(m.readUnitsPerReply, 3)} (header ${fmt(m.headerReadUnitsPerReply, 3)}, reply set ${fmt(m.setReadUnitsPerReply, 3)})`,
      'consistent reads: the header before and after the puts (`GetItem`), the reply set once the counter says it can be complete (`Query`, one per shard).',
    ),
    row(
      'recording transactions',
      (m) => fmt(m.transactions, 0),
      '`TransactWriteItems` by the reply handler: none, so no transaction conflict.',
    ),
    row(
      'replies per invocation',
      (m) =>
        `${fmt(m.repliesPerInvocation, 2)} (${fmt(m.invocations, 0)} invocations; ${Object.entries(
          m.callsPerInvocation,
        )
          .filter(([, n]) => n > 0)
          .map(([op, n]) => `${op} ${fmt(n, 2)}`)
          .join(', ')})`,
      `Lambda-style batches of up to 10 records, batching window ${h.measured.batchingWindowSeconds} s; DynamoDB calls per invocation.`,
    ),
    row(
      'write units by partition key',
      keys,
      "table units on each key of the aggregate, shard 0 (the header's key `A#<id>`) first.",
    ),
    row(
      'busiest key share of the write units',
      (m) => `**${fmt(m.busiestKeyShare * 100, 1)} %** (${m.busiestKey})`,
      'what a per-key limit divides; of the reply puts alone the busiest key took ' +
        runs.map((m) => `${fmt(m.busiestKeyReplyShare * 100, 1)} %`).join(' and ') +
        ' (ids in blocks of 32 per shard).',
    ),
    row(
      'write units per reply on the busiest key',
      (m) => fmt(m.busiestKeyWriteUnitsPerReply, 3),
      '1,000 per second per key divided by this is the write bound.',
    ),
    row(
      'read units by partition key',
      (m) =>
        Object.entries(m.readUnitsByKey)
          .sort(([a], [b]) => Number(a.split(' ')[1]) - Number(b.split(' ')[1]))
          .map(([, n]) => fmt(n, 0))
          .join(' · '),
      "consistent and eventually consistent reads on each key, shard 0 first: the header before and after the puts, the other shards' counters, the reply set once.",
    ),
    row(
      'read units per reply on the key read most',
      (m) => fmt(m.busiestKeyReadUnitsPerReply, 3),
      '3,000 per second per key divided by this is the read bound.',
    ),
    row(
      'DynamoDB round trips per invocation',
      (m) => fmt(m.roundTripsPerInvocation, 2),
      "measured: calls made in parallel (a batch's puts, the other shards' counters) count once.",
    ),
    row(
      'replies per second (emulator)',
      (m) => fmt(m.repliesPerSecond, 0),
      'first reply sent to result visible; the emulator enforces no per-key limit.',
    ),
    row('outcome', (m) => m.outcome, ''),
    '',
    `On AWS, by calculation and simulation from the measured figures: ${fmt(l.keyWriteUnitsPerSecond, 0)} write units/s and ${fmt(l.keyReadUnitsPerSecond, 0)} read units/s per partition key (no split for heat assumed), ${l.callMs} ms per DynamoDB round trip (as measured per invocation above), ${l.overheadMs} ms per invocation besides; a throttled put retried in place up to ${l.throttleRetries} times after random × min(1 s, 20·2^attempt ms), then failed back to SQS for ${l.visibilityTimeoutSeconds} s. The write and read bounds divide the per-key limits by the units measured on the busiest key (writes) and on the key read most (reads). 100,000 replies simulated (token bucket per key, empty at the start, so the rate is the steady state):`,
    '',
    '| layout | write units / reply on the busiest key | write bound | read bound | consumer bound | bound (replies/s) | binding limit | simulated, sustained (DynamoDB) | throttled puts | failed back to SQS |',
    '|---|---|---|---|---|---|---|---|---|---|',
    ...h.model.map(
      (m) =>
        `| ${m.design.name} | ${fmt(m.bounds.busiestKeyWriteUnitsPerReply, 3)} | ${fmt(m.bounds.writeBound, 0)} | ${fmt(m.bounds.readBound, 0)} | ${fmt(m.bounds.consumerBound, 0)} | **${fmt(m.bounds.bound, 0)}** | ${m.bounds.bindingConstraint} | ${fmt(m.simulation.sustainedRepliesPerSecond, 0)} | ${fmt(m.simulation.throttles, 0)} | ${fmt(m.simulation.redeliveries, 0)} |`,
    ),
    '',
    "The consumer bound is the reply partition's invocations (`replyConcurrency` × batch per invocation time): at the default concurrency (5) it binds a sharded aggregate before its keys do; `replyConcurrency` (topology and construct option, per partition) lifts it, and `writeShards` lifts the keys'. The simulation models the keys only (the DynamoDB side), with as many consumers as the row. The last row is the reply puts alone (no other write on the busiest key): the difference to the first rows is what the completion trigger's counter update per batch takes from the busiest key.",
    '',
  ];
}

const byFanOut = (values: Readonly<Record<string, number>>): string =>
  Object.entries(values)
    .map(([f, v]) => `${fmt(v, 2)} @${f}`)
    .join(', ');

const PATTERN_TEXT: Record<ArrivalPatternName, string> = {
  together:
    "a responder answers all sub-requests of an aggregate in one `SendMessageBatch` (the first rig's pattern): a reply batch holds whole aggregates",
  independent:
    'each reply sent on its own (`SendMessage`), round-robin over the aggregates in flight: a reply batch holds about one reply per aggregate',
  spread:
    'independent responders with seeded lognormal answer times; each reply sent on its own when its time comes',
};

/** The three arrival patterns side by side, and the batching-window trade-off. */
function arrivalSection(r: Results): string[] {
  const names = (['together', 'independent', 'spread'] as const).filter((p) => r.arrival[p]);
  const fanOuts = [...new Set(names.flatMap((p) => Object.keys(r.arrival[p].write_units_per_reply)))].sort(
    (a, b) => Number(a) - Number(b),
  );
  const at = (p: ArrivalPatternName, fanOut: string) =>
    r.arrival[p].measured.find((f) => String(f.fan_out) === fanOut);
  const row = (label: string, value: (f: ArrivalFigures) => string, fanOut = '10') =>
    `| ${label} | ${names
      .map((p) => {
        const f = at(p, fanOut);
        return f ? value(f) : '—';
      })
      .join(' | ')} |`;
  const s = r.arrival_setup;
  const lines = [
    '## Arrival patterns',
    '',
    `Each pattern runs the same aggregates (fan-out 10, 1 KB replies, results collected) through the real handlers: every request is sent at once, the responders hold every answer until all sub-requests are in, then release them at ${fmt(s.offered_replies_per_second, 0)} replies/s${r.arrival.independent?.measured.some((f) => f.fan_out !== 10) ? ' (the larger fan-outs as fast as the responders send)' : ''}:`,
    '',
    ...names.map(
      (p) =>
        `- \`${p}\`${p === r.headline_pattern ? ' (the headline)' : ''}: ${PATTERN_TEXT[p]}${p === 'independent' ? ` (${s.rotation} aggregates in turn)` : ''}${p === 'spread' ? ` (median ${fmt(s.spread.medianMs, 0)} ms, σ ${s.spread.sigma}, at most ${fmt(s.spread.maxMs / 1000, 0)} s; aggregates taken up at the offered rate)` : ''}.`,
    ),
    '',
    'Per reply unless stated, all-in: the deadline timer armed, and its firing (measured apart) added.',
    '',
    `| reply batching window ${s.default_batching_window_seconds} s | ${names.map((p) => `\`${p}\``).join(' | ')} |`,
    `|---|${names.map(() => '---').join('|')}|`,
    ...fanOuts.map((fo) => row(`write units per reply @${fo}`, (f) => fmt(f.write_units, 3), fo)),
    row('of which index writes', (f) => fmt(f.index_write_units, 3)),
    ...fanOuts.map((fo) => row(`read units per reply @${fo}`, (f) => fmt(f.read_units, 3), fo)),
    ...fanOuts.map((fo) => row(`SQS calls per reply @${fo} (fanin)`, (f) => fmt(f.sqs_calls, 3), fo)),
    row("clients' SQS calls per reply", (f) => fmt(f.client_sqs_calls, 3)),
    row('reply invocations per reply', (f) => fmt(f.reply_invocations, 3)),
    row('replies per batch', (f) => fmt(f.replies_per_batch, 2)),
    row('replies of one aggregate per batch', (f) => fmt(f.replies_per_aggregate_per_batch, 2)),
    row(
      'completion latency p50 / p99',
      (f) => `${fmt(f.completion_latency_ms.p50, 0)} / ${fmt(f.completion_latency_ms.p99, 0)} ms`,
    ),
    row('fanin per million aggregates', (f) => usd(f.fanin_only_per_million_usd)),
    row('**end to end per million aggregates**', (f) => `**${usd(f.cost_per_million_aggregates_usd)}**`),
    '',
  ];
  const others = names.flatMap((p) => r.arrival[p].other_batching_windows.map((f) => ({ p, f })));
  if (others.length > 0) {
    const windowRow = (p: ArrivalPatternName, f: ArrivalFigures) =>
      `| \`${p}\` | ${f.batching_window_seconds} s | ${fmt(f.completion_latency_ms.p50, 0)} / ${fmt(f.completion_latency_ms.p99, 0)} ms | ${fmt(f.replies_per_batch, 2)} | ${fmt(f.replies_per_aggregate_per_batch, 2)} | ${fmt(f.reply_invocations, 3)} | ${fmt(f.sqs_calls, 3)} | ${fmt(f.write_units, 3)} | ${usd(f.cost_per_million_aggregates_usd)} |`;
    lines.push(
      '### Batching window',
      '',
      "The reply consumers' batching window (Lambda's `MaximumBatchingWindowInSeconds`; topology option `replyBatchingWindowSeconds`, one value or one per partition) holds a batch open until it is full or the window runs out. With replies arriving apart, it runs out: the last reply of an aggregate waits for it. Without a window, batches are smaller, so there are more invocations, receives and deletes, and fewer replies of one aggregate share a write. Same aggregates and offered rate, fan-out 10:",
      '',
      '| pattern | window | latency p50 / p99 | replies per batch | of one aggregate | reply invocations / reply | SQS calls / reply | write units / reply | end to end / M |',
      '|---|---|---|---|---|---|---|---|---|',
      ...names.flatMap((p) => {
        const base = at(p, '10');
        const mine = others.filter((o) => o.p === p).map((o) => windowRow(p, o.f));
        return mine.length > 0 && base ? [windowRow(p, base), ...mine] : [];
      }),
      '',
      'The rig changes the window by describing the same topology again with `replyBatchingWindowSeconds` and replacing its reply pollers (`Rig.setReplyBatchingWindow`), as a redeploy would. On AWS, Lambda also scales its pollers with the backlog, so batch sizes there may differ at the same rate; the calls and units per batch do not.',
      '',
    );
  }
  return lines;
}

/** The store-capacity figure: both windows, their spread, and whether the ratio means anything. */
function storeCapacitySection(r: Results): string[] {
  const k = r.store_capacity;
  const verdict = k.meaningful
    ? `The two windows agree within ${fmt(k.spread_limit * 100, 0)} %, so the fraction is reported: ${fmt(r.fraction_of_store_capacity, 3)} (${fmt(k.fraction_range[0], 3)}–${fmt(k.fraction_range[1], 3)} against the faster and the slower window).`
    : `The two windows differ by more than ${fmt(k.spread_limit * 100, 0)} %, so no fraction is reported in the headline: against one window or the other it would be ${fmt(k.fraction_range[0], 3)} or ${fmt(k.fraction_range[1], 3)}, and that spread is the emulator's, not fanin's.`;
  return [
    '## Store capacity',
    '',
    `The raw write rate of the same DynamoDB Local: plain \`PutItem\`s of reply-sized items (1 KB body) by ${k.concurrency} writers (the reply consumers' concurrency), after a warm-up that is not counted: one window just before the saturated run (${fmt(k.before.duration_ms / 1000, 1)} s; the run was sized from a warm-up run to last about as long, and took ${fmt(r.saturated.release_to_last_result_ms / 1000, 1)} s) and one just after, as long as the run (${fmt(k.after.duration_ms / 1000, 1)} s).`,
    '',
    '| window | puts/s | per whole second |',
    '|---|---|---|',
    `| before | ${fmt(k.before.puts_per_second, 1)} | ${k.before.per_second.join(' · ')} |`,
    `| after | ${fmt(k.after.puts_per_second, 1)} | ${k.after.per_second.join(' · ')} |`,
    '',
    `Spread between the windows ${fmt(k.spread * 100, 1)} % (slowest to fastest second ${k.per_second_range.join('–')} puts/s). ${verdict} The emulator shares two cores with the benchmark's Node process (fauxqs, the handlers, the load generator): read the fraction as how much of that machine's store fanin's protocol leaves unused, not as an AWS figure.`,
    '',
  ];
}

/** When Step Functions Express is the cheaper pick, with the figure; and the floor of any design. */
function expressSection(r: Results): string[] {
  const e = r.cost.step_functions_express;
  const breakEven = e.cheaper_than_fanin_below_seconds;
  const floor = r.cost.reply_floor_per_million;
  return [
    `**The floor of any design.** Whatever the state protocol, each of an aggregate's ten replies is one SQS message its responder sends, that a Lambda event source receives and deletes in a batch, and one DynamoDB write unit (1 KB) that makes it durable before it is acknowledged. Those alone, and nothing else (no read, no Lambda duration, no request, fan-out, completion or result), cost ${usd(floor.one_reply_per_batch)} per million aggregates when each batch holds one reply — as it does when replies arrive independently at a rate the consumers keep up with, with no batching window — and ${usd(floor.ten_replies_per_batch)} when batches hold ten (\`bench/cost.ts\`, \`replyFloorPerMillion\`). fanin's figures above are that floor plus the aggregate's own work; a target below the first figure for independently arriving replies needs full batches, i.e. a batching window (latency) or a load high enough to fill them.`,
    '',
    `**When Step Functions Express is cheaper.** Express bills $1.00 per million executions plus its duration (rounded up to 100 ms) at 64 MB, not state transitions, but runs at most five minutes and has no callback tokens: responders must answer synchronously (a Lambda or HTTP task in the Map). Then one aggregate is one execution as long as its slowest responder, plus the result's FIFO send: ${e.per_million_by_answer_seconds.map((x) => `${usd(x.per_million_usd)} per million at ${fmt(x.seconds, 1)} s`).join(', ')}. ${breakEven > 0 ? `Against fanin's ${usd(r.cost_per_million_aggregates_usd)} (replies ${r.headline_pattern}), **Express is the cheaper pick whenever responders are synchronous and the slowest answers within ${fmt(breakEven, 1)} s**` : 'Express is cheaper than fanin at any answer time up to its five-minute limit'}; fanin is the pick when responders are asynchronous (queues, other teams' services, humans), take longer than five minutes, or when the aggregation needs fanin's completion strategies, late-reply routing or partitions.`,
    '',
  ];
}

/** Fixed monthly costs, priced as README's "What it costs at rest" and checked against it. */
function fixedSection(r: Results): string[] {
  const f = r.cost.fixed_monthly;
  const agree =
    f.readme_total_usd === null
      ? "README's total was not found to compare."
      : Math.abs(f.readme_total_usd - f.total_usd) <= 0.05
        ? `README ("What it costs at rest") states ≈ ${usd(f.readme_total_usd)}: the same items at the same prices, so the two agree.`
        : `**README ("What it costs at rest") states ≈ ${usd(f.readme_total_usd)}, which no longer agrees with ${usd(f.total_usd)} here: one of them needs updating.**`;
  return [
    `Fixed costs a month, whatever the number of aggregates (an idle deployment with ${f.reply_partitions} reply partitions, priced from \`bench/prices.json\` by \`fixedMonthly\` in \`bench/cost.ts\`):`,
    '',
    '| item | how much | per month |',
    '|---|---|---|',
    ...f.items.map((i) => `| ${i.item} | ${i.how} | ${usd(i.usd)} |`),
    `| **total** | | **${usd(f.total_usd)}** |`,
    '',
    `${agree} The per-aggregate figures above leave these out (the empty receives of idle polling are excluded from every per-reply count); at a million aggregates a month they add ${usd(f.total_usd)} to the bill.`,
    '',
  ];
}

/** Where fanin's write units go in the headline run: the largest shares, by handler and operation. */
function whereTheUnitsGo(r: Results): string[] {
  const h = r.headline.per_reply;
  const all = h.write_units;
  const bytes = r.headline.stored_payload_bytes;
  const parts = Object.entries(h.write_units_by_operation)
    .filter(([, v]) => v > 0)
    .sort((a, b) => b[1] - a[1]);
  return [
    `Where the write units of the headline run go (${fmt(all, 3)} per reply${bytes === undefined ? '' : `; each ${fmt(r.headline.reply_bytes, 0)}-byte JSON body is stored compressed in ${fmt(bytes, 0)} bytes on average, so a reply item fits one write unit`}):`,
    '',
    ...parts.map(([k, v]) => `- ${k}: ${fmt(v, 3)} per reply, ${fmt((100 * v) / all, 0)} %;`),
    `- of all of it, secondary-index writes: ${fmt(h.index_write_units, 3)} per reply.`,
    '',
  ];
}

/** The footnote of the sampled baseline points, with the check of the sampling against a replay. */
function sampledNote(r: Results): string[] {
  const sampled = r.scale.filter((p) => p.baseline.method !== 'replayed');
  const check = r.baseline_sampling_check;
  if (sampled.length === 0) {
    return check
      ? [
          `Every baseline point here was replayed reply by reply${r.command.includes('--replay-baseline') ? ' (`--replay-baseline`)' : ''}. The sampling a default run uses above fan-out 1,000 (\`sampleNaive\` in \`bench/baseline.ts\`: the item written as it stands before reply k, the real update of reply k measured, the replies in between interpolated) gives ${fmt(check.sampled_write_units_per_reply, 3)} write units per reply at fan-out ${fmt(check.fan_out, 0)} (${check.positions} positions) against ${fmt(check.replayed_write_units_per_reply, 3)} replayed.`,
          '',
        ]
      : [];
  }
  return [
    `\\* Replaying ${sampled.map((p) => fmt(p.fanOut, 0)).join(', ')} naive updates one by one takes DynamoDB Local tens of minutes (each rewrites an item of up to ~300 KB), so there the baseline is ${sampled[0]?.baseline.method}: the item is written as it stands before reply k and the real update of reply k is measured; the replies in between are interpolated (\`sampleNaive\` in \`bench/baseline.ts\`).${
      check
        ? ` Checked at fan-out ${fmt(check.fan_out, 0)}, where both are run: replayed ${fmt(check.replayed_write_units_per_reply, 3)}, sampled at ${check.positions} positions ${fmt(check.sampled_write_units_per_reply, 3)} write units per reply. \`npm run bench -- --replay-baseline\` replays every fan-out.`
        : ''
    }`,
    '',
  ];
}
