import type { Calibration } from './calibrate.ts';
import type { Bill, Usage } from './cost.ts';
import type {
  AwsLimits,
  HotBounds,
  HotDesign,
  HotMeasurement,
  HotSimulation,
  ShardedMeasurement,
} from './hot-aggregate.ts';

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

/** `bench/results/*.json`. The first block is the contract of issue 7; the rest explains it. */
export interface Results {
  readonly schema: 1;
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
  readonly replies_per_second: number;
  readonly aggregates_per_second: number;
  readonly completion_latency_ms: {
    readonly p50: number;
    readonly p99: number;
    readonly samples: number;
    readonly offered_aggregates_per_second: number;
    readonly saturated: { readonly p50: number; readonly p99: number };
  };
  /** fanin's write units per reply (all-in) by fan-out. */
  readonly write_units_per_reply: Readonly<Record<string, number>>;
  /** Baseline write units per reply over fanin's, by fan-out. */
  readonly baseline_ratio: Readonly<Record<string, number>>;
  /** The scale curve as a line: write units per reply plus write units per aggregate. */
  readonly write_units_fit: { readonly per_reply: number; readonly per_aggregate: number };
  readonly sqs_calls_per_reply: number;
  readonly fraction_of_store_capacity: number;
  readonly cost_per_million_aggregates_usd: number;
  readonly headline: {
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
      readonly handler_invocations: Readonly<Record<string, number>>;
      readonly records_per_invocation: Readonly<Record<string, number>>;
      readonly emulator_reported_transaction_write_units: number;
      readonly empty_receives_excluded: number;
    };
  };
  readonly store_capacity: {
    readonly puts_per_second: number;
    readonly concurrency: number;
    readonly item: string;
    readonly duration_ms: number;
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
    readonly naive_baseline_dynamodb: {
      readonly usage_per_aggregate: { readonly write_units: number; readonly read_units: number };
      readonly per_million_aggregates: number;
    };
    readonly fixed_monthly: { readonly sweeper_invocations: number; readonly note: string };
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
    readonly measured: Omit<HotMeasurement, 'counters'> & { readonly counters: undefined };
    readonly sharded_prototype: readonly ShardedMeasurement[];
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
  const hot = r.hot_aggregate.measured;
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
    'npm run bench             # full run (4–10 min): bench/results/latest.{json,md}, scale.svg',
    'npm run bench -- --quick  # smoke run (< 2 min): bench/results/quick.{json,md}, quick-scale.svg',
    'npm run bench -- --replay-baseline  # also replay the naive baseline at fan-out 10,000 (+5–15 min)',
    '```',
    '',
    'Java 17+ is needed for DynamoDB Local; with `AWS_ENDPOINT_URL` set (LocalStack) nothing is started.',
    '',
    '## Headline figures',
    '',
    '| figure | value | what it is |',
    '|---|---|---|',
    `| replies per second | ${fmt(r.replies_per_second, 1)} | ${fmt(r.headline.replies, 0)} replies of 1 KB (${fmt(r.headline.aggregates, 0)} aggregates of fan-out 10, requested all at once) from the first request sent to the last result read off the output queue, through the real fan-out and reply handlers. |`,
    `| aggregates per second | ${fmt(r.aggregates_per_second, 2)} | the same run counted in aggregates. |`,
    `| completion latency p50 / p99 | ${fmt(r.completion_latency_ms.p50, 0)} / ${fmt(r.completion_latency_ms.p99, 0)} ms | wall time from the moment the last reply of an aggregate is handed to SQS to the moment its result is received from the output queue, over ${r.completion_latency_ms.samples} aggregates offered at ${fmt(r.completion_latency_ms.offered_aggregates_per_second, 1)}/s (half the saturated rate). Saturated, the same measure is ${fmt(r.completion_latency_ms.saturated.p50, 0)} / ${fmt(r.completion_latency_ms.saturated.p99, 0)} ms: mostly queueing behind other aggregates' replies. On AWS the reply event source's 1 s batching window adds up to a second. |`,
    `| write units per reply | ${Object.entries(r.write_units_per_reply)
      .map(([f, v]) => `${fmt(v, 2)} @${f}`)
      .join(
        ', ',
      )} | every DynamoDB write unit fanin spent on an aggregate (opening, recording, completing, closing) divided by its replies, at each fan-out of the scale curve (small replies). The cost of a reply is flat (${fmt(r.write_units_fit.per_reply, 2)} units whatever the fan-out); what falls from left to right is the aggregate's own ${fmt(r.write_units_fit.per_aggregate, 1)} units spread over more replies. |`,
    `| baseline ratio | ${Object.entries(r.baseline_ratio)
      .map(([f, v]) => `${fmt(v, 2)}× @${f}`)
      .join(
        ', ',
      )} | the naive design's write units per reply over fanin's, same replies, same fan-out. Below 1 the naive design is cheaper. |`,
    `| SQS calls per reply | ${fmt(r.sqs_calls_per_reply, 3)} | API calls made by fanin's handlers and by Lambda's event source mapping for them (receives that returned messages, deletes), per reply, in the headline run. |`,
    `| fraction of store capacity | ${fmt(r.fraction_of_store_capacity, 3)} | fanin's replies per second over the raw PutItem rate of the same DynamoDB Local (${fmt(r.store_capacity.puts_per_second, 1)} puts/s, ${r.store_capacity.concurrency} writers, reply-sized items). |`,
    `| cost per million aggregates | ${usd(r.cost_per_million_aggregates_usd)} | fan-out 10, 1 KB replies, at us-east-1 list prices of ${c.prices_taken}: fanin's own bill plus its clients' SQS calls; details below. Step Functions Standard with callback tokens: ${usd(c.step_functions_standard.total_per_million)}. |`,
    '',
    '## Per reply, headline run (fan-out 10, 1 KB replies)',
    '',
    `Write units per reply: **${fmt(h.write_units, 3)}** (of which ${fmt(h.index_write_units, 3)} on secondary indexes); read units per reply: **${fmt(h.read_units, 3)}**. DynamoDB Local reported ${fmt(h.emulator_reported_transaction_write_units, 3)} units per reply for the transactions, which it undercounts (see "How units are counted"); the figures here apply DynamoDB's rules to the items written.`,
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
    '"All-in" is every write unit of the aggregate\'s life over its replies; "recording" only the transactions that record',
    "replies (for the baseline, its per-reply updates). fanin's all-in cost is about 2 units per reply for the reply item",
    '(transactional writes cost double), 1 for deleting it at close, and a share of the header, index and request items.',
    "At small fan-outs with tiny replies the naive design is cheaper: a 1-unit update against fanin's transactional 2 units",
    "plus the delete; its cost overtakes fanin's as soon as the aggregate item passes a few KB.",
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
    ...(r.headline.stored_payload_bytes === undefined
      ? []
      : [
          `The naive baseline stores the bodies as they come. Compressed as fanin stores them (${fmt(r.headline.stored_payload_bytes, 0)} of ${fmt(r.headline.reply_bytes, 0)} bytes), its item, and with it the cost of each update, would shrink to about ${fmt((100 * r.headline.stored_payload_bytes) / r.headline.reply_bytes, 0)} %: it would still pay for every earlier reply on each new one.`,
          '',
        ]),
    `fanin per aggregate: ${fmt(c.fanin.usage_per_aggregate.writeUnits, 1)} write units, ${fmt(c.fanin.usage_per_aggregate.readUnits, 1)} read units, ${fmt(c.fanin.usage_per_aggregate.sqsStandard, 2)} standard and ${fmt(c.fanin.usage_per_aggregate.sqsFifo, 2)} FIFO SQS requests, ${fmt(c.fanin.usage_per_aggregate.invocations, 2)} Lambda invocations of ~${fmt(c.fanin.usage_per_aggregate.lambdaMs / Math.max(c.fanin.usage_per_aggregate.invocations, 1e-9), 0)} ms estimated (512 MB, arm64: the CDK construct's defaults; duration from the calls counted, at 8 ms per DynamoDB and 12 ms per SQS call — see \`prices.json\`). Of that, the deadline timer firing adds ${fmt(c.fanin.timer_firing_usage.sqsStandard, 2)} SQS requests, ${fmt(c.fanin.timer_firing_usage.invocations, 2)} invocations and ${fmt(c.fanin.timer_firing_usage.readUnits, 2)} read units.`,
    '',
    `Step Functions Standard is counted at ${c.step_functions_standard.transitions_per_aggregate} state transitions per aggregate (a Map state, one \`.waitForTaskToken\` SQS task per branch, a Pass state to aggregate, an SQS task for the result) at $0.025 per 1,000, plus one SendMessage per branch and one for the result; responders answer with SendTaskSuccess (not billed) instead of a reply message. That machine has no timeout handling, so it is a lower bound. The transitions alone cost ${usd(c.step_functions_standard.orchestration_per_million.stepFunctions)} per million aggregates.`,
    '',
    `Fixed costs, not per aggregate: ${c.fixed_monthly.note}`,
    '',
    '## Hot aggregate',
    '',
    `One aggregate (fan-out \`none\`, expected ${fmt(hot.replies, 0)}) receiving ${fmt(hot.replies, 0)} small replies from 4 concurrent batch senders to its reply partition. See [docs/hot-aggregates.md](../../docs/hot-aggregates.md) for what this means on AWS.`,
    '',
    '| figure | value | what it is |',
    '|---|---|---|',
    `| replies per second | ${fmt(hot.repliesPerSecond, 1)} | first reply sent to result visible, on the emulator (which enforces no per-partition limit). |`,
    `| write units per reply | ${fmt(hot.writeUnitsPerReply, 3)} all-in, ${fmt(hot.recordingWriteUnitsPerReply, 3)} recording | as in the scale curve. |`,
    `| recording units per reply, by tenth of the replies | ${hot.recordingUnitsPerReplyByDecile.map((v) => fmt(v, 2)).join(' · ')} | flat from the first reply to the last: the ${fmt(hot.replies, 0)}th reply costs what the first did. |`,
    `| replies per transaction | ${fmt(hot.meanRepliesPerTransaction, 2)} (${fmt(hot.transactions, 0)} transactions) | Lambda-style batches of up to 10 records, all of one aggregate. Sizes: ${Object.entries(
      hot.transactionSizes,
    )
      .sort((a, b) => Number(a[0]) - Number(b[0]))
      .map(([k, v]) => `${k}×${v}`)
      .join(', ')}. |`,
    `| transaction conflicts | ${fmt(hot.conflicts, 0)} | recording transactions cancelled because a concurrent one held the header (fanin backs off and retries). |`,
    `| peak write units/s on the aggregate's key | ${fmt(hot.peakUnitsPerSecondOnKey, 0)} | the busiest second of recording transactions, all on partition key \`A#<id>\`. AWS allows 1,000 per partition. |`,
    `| share of write units on that key | ${fmt(hot.shareOnAggregateKey * 100, 1)} % | every write of the aggregate shares one partition key. ${fmt(hot.indexUnitsOnDefinitionKey, 0)} more units landed on the \`open\` index's key for the definition (it holds keys only: written when an aggregate opens and when it closes, not by recording). |`,
    '',
    "Write-sharded prototype (`ShardedRecorder` in `bench/hot-aggregate.ts`, not fanin's code), same emulator, 5 consumers:",
    '',
    '| shards | batch | write units / reply | read units / reply | transactions / reply | busiest key share | replies/s (emulator) |',
    '|---|---|---|---|---|---|---|',
    ...r.hot_aggregate.sharded_prototype.map(
      (p) =>
        `| ${p.shards} | ${p.batch} | ${fmt(p.writeUnitsPerReply, 3)} | ${fmt(p.readUnitsPerReply, 3)} | ${fmt(p.transactionsPerReply, 3)} | ${fmt(p.busiestKeyShare * 100, 1)} % | ${fmt(p.repliesPerSecondOnEmulator, 0)} |`,
    ),
    '',
    `On AWS, by calculation and simulation (${fmt(r.hot_aggregate.aws_limits.keyUnitsPerSecond, 0)} write units/s per partition and per item, ${r.hot_aggregate.aws_limits.transactionMs} ms per transaction, ${r.hot_aggregate.aws_limits.overheadMs} ms per invocation besides it, a failed batch back after ${r.hot_aggregate.aws_limits.visibilityTimeoutSeconds} s; 100,000 replies simulated):`,
    '',
    '| design | units / reply | bound (replies/s) | binding limit | simulated, sustained | conflicts | throttled | batches failed back to SQS |',
    '|---|---|---|---|---|---|---|---|',
    ...r.hot_aggregate.model.map(
      (m) =>
        `| ${m.design.name} | ${fmt(m.bounds.unitsPerReply, 2)} | ${fmt(m.bounds.bound, 0)} | ${m.bounds.bindingConstraint} | ${fmt(m.simulation.sustainedRepliesPerSecond, 0)} | ${fmt(m.simulation.conflicts, 0)} | ${fmt(m.simulation.throttles, 0)} | ${fmt(m.simulation.redeliveries, 0)} |`,
    ),
    '',
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
    `Failed records ${r.sanity.failedRecords}, poller errors ${r.sanity.pollerErrors}, responder errors ${r.sanity.responderErrors}, collector errors ${r.sanity.collectorErrors}; transactional updates of items the meter had not seen (costed as 1 KB; the prototype's counters are created by their first update) ${
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

/** Where fanin's write units go in the headline run, and what each part would save if changed. */
function whereTheUnitsGo(r: Results): string[] {
  const h = r.headline.per_reply;
  const units = h.write_units_by_operation;
  const all = h.write_units;
  const share = (n: number) => `${fmt((100 * n) / all, 0)} %`;
  const recording = units['fanin:reply TransactWriteItems'] ?? 0;
  const deletes = (units['fanin:reply BatchWriteItem'] ?? 0) + (units['fanin:fan-out BatchWriteItem'] ?? 0);
  const bytes = r.headline.stored_payload_bytes;
  const stored =
    bytes === undefined
      ? ''
      : ` — each ${fmt(r.headline.reply_bytes, 0)}-byte JSON body is stored compressed in ${fmt(bytes, 0)} bytes on average, so its item stays under 1 KB`;
  return [
    'Where the write units of the headline run go:',
    '',
    `- recording (one transaction per batch: each reply item at 2 units per KB it takes, plus the header counter)${stored}: ${fmt(recording, 2)} per reply, ${share(recording)};`,
    `- shrinking the reply items to markers at close (a standard write, charged by the item's size before): ${fmt(deletes, 2)} per reply, ${share(deletes)} — a TTL on reply items would make these writes free, but a TTL that could fire before the aggregate closes would lose replies;`,
    `- secondary-index writes (the \`open\` index's entry when the aggregate opens and when it closes, the \`due\` index's when the deadline is armed and cleared; a reply's counter increment writes neither): ${fmt(h.index_write_units, 2)} per reply, ${share(h.index_write_units)};`,
    '- the rest: opening (header and request items, in a transaction), marking dispatched, completing, emitting, the tombstone.',
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
