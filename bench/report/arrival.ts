import { fmt, prose, table, usd } from './format.ts';
import type { ArrivalFigures, ArrivalPatternName, BatchingComparison, Results } from './schema.ts';

type Row = BatchingComparison;
const PATTERNS = ['together', 'independent', 'spread'] as const;
const MORE = 'docs/costs.md, "Batching: latency against cost"';
const PATTERN_TEXT: Record<ArrivalPatternName, string> = {
  together: 'a responder answers all sub-requests of an aggregate in one `SendMessageBatch`',
  independent: 'each reply sent on its own (`SendMessage`), round-robin over the aggregates in flight',
  spread: 'independent responders with seeded lognormal answer times; each reply sent when its time comes',
};

/** A setting that drained its reply partitions on a schedule rather than through an event source. */
export const drained = (b: Pick<Row, 'drain_interval_seconds'>): boolean =>
  (b.drain_interval_seconds ?? 0) > 0;
/** A drained row whose sending was timed to have a drain in its middle. */
export const straddled = (b: Pick<Row, 'drain_interval_seconds' | 'drain_phase'>): boolean =>
  drained(b) && b.drain_phase === 'straddled';
/** A drained row measured just after a drain (every drained row of results without `drain_phase`). */
export const alignedDrain = (b: Pick<Row, 'drain_interval_seconds' | 'drain_phase'>): boolean =>
  drained(b) && b.drain_phase !== 'straddled';
/** Messages per receive from the reply partitions under a setting. */
const perReceive = (b: Row): number => 1 / Math.max(b.reply_receives_per_reply, 1e-9);
/** The longest a reply waits for its consumer under a setting: its window, or its drain's interval. */
const waitSeconds = (b: Row): number => (drained(b) ? b.drain_interval_seconds : b.batching_window_seconds);
const ms = (n: number) => `${fmt(n, 0)} ms`;
const secs = (n: number) => `${fmt(n / 1000, 1)} s`;
const usdOrDash = (n: number | undefined) => (n === undefined ? '—' : usd(n));
const signed = (n: number) => (n < 0 ? `−${usd(-n)}` : usd(n));

/** A setting in words: `a 10 s window and batches of 1,000`, `replies drained every 60 s in batches of 1,000`. */
export function settingText(b: Row): string {
  return drained(b)
    ? `replies drained every ${fmt(b.drain_interval_seconds, 0)} s in batches of ${fmt(b.batch_size, 0)}`
    : `a ${fmt(b.batching_window_seconds, 0)} s window and batches of ${fmt(b.batch_size, 0)}`;
}

/** The three arrival patterns side by side, and the batching-window trade-off. */
export function arrivalSection(r: Results): string[] {
  const names = PATTERNS.filter((p) => r.arrival[p]);
  const compared = names.filter((p) => r.arrival[p].by_batching.length > 1);
  return [
    ...arrivalIntro(r, names),
    ...arrivalTable(r, names),
    '',
    ...ownWorkText(r, names),
    ...(compared.length > 0 ? batchingSection(r, compared) : r.quick ? drainText(r, compared) : []),
  ];
}

/** The section's heading and what the patterns are. */
function arrivalIntro(r: Results, names: readonly ArrivalPatternName[]): string[] {
  const s = r.arrival_setup;
  const b = r.timers.used === 'batched' ? r.timers.batched : undefined;
  const larger = r.arrival.independent?.measured.some((f) => f.fan_out !== 10);
  const extra: Record<ArrivalPatternName, string> = {
    together: '',
    independent: ` (${s.rotation} aggregates in turn)`,
    spread: prose` (median ${fmt(s.spread.median_ms, 0)} ms, σ ${s.spread.sigma}, at most
      ${fmt(s.spread.max_ms / 1000, 0)} s; aggregates taken up at the offered rate)`,
  };
  return [
    '## Arrival patterns',
    '',
    prose`Each pattern runs the same aggregates (fan-out 10, 1 KB replies) through the real handlers; the
      responders hold every answer until all sub-requests are in, then release them at
      ${fmt(s.offered_replies_per_second, 0)} replies/s${larger ? ' (larger fan-outs as fast as they go)' : ''}:`,
    '',
    ...names.map(
      (p) => `- \`${p}\`${p === r.headline_pattern ? ' (the headline)' : ''}: ${PATTERN_TEXT[p]}${extra[p]}.`,
    ),
    '',
    prose`Per reply unless stated, all-in: the deadline timer armed, and its firing (measured apart) added${
      b
        ? prose`: the batched variant's (${fmt(b.arming_per_aggregate.timer_sends, 2)} sends,
          ${fmt(b.firing_per_aggregate.receives, 2)} receives, ${fmt(b.firing_per_aggregate.deletes, 2)}
          deletes, ${fmt(b.firing_per_aggregate.invocations, 2)} invocations per aggregate; the last row has
          the paced variant's)`
        : ''
    }.`,
    '',
  ];
}

/** The patterns side by side at the topology's batching, per reply and per million aggregates. */
function arrivalTable(r: Results, names: readonly ArrivalPatternName[]): string[] {
  const fanOuts = [...new Set(names.flatMap((p) => Object.keys(r.arrival[p].write_units_per_reply)))].sort(
    (a, b) => Number(a) - Number(b),
  );
  const at = (p: ArrivalPatternName, fanOut: string) =>
    r.arrival[p].measured.find((f) => String(f.fan_out) === fanOut);
  const row = (label: string, value: (f: ArrivalFigures) => string, fanOut = '10') => [
    label,
    ...names.map((p) => {
      const f = at(p, fanOut);
      return f ? value(f) : '—';
    }),
  ];
  const perFanOut = (label: string, value: (f: ArrivalFigures) => number) =>
    fanOuts.map((fo) => row(label.replace('@', `@${fo}`), (f) => fmt(value(f), 3), fo));
  const paced = (f: ArrivalFigures) => f.cost_per_million_aggregates_usd_timers_paced;
  const byOp = (f: ArrivalFigures) =>
    Object.entries(f.failed_conditions_per_aggregate ?? {}).map(([op, n]) => `${fmt(n, 4)} ${op}`);
  return table(
    [
      `reply batching window ${r.arrival_setup.default_batching_window_seconds} s`,
      ...names.map((p) => `\`${p}\``),
    ],
    [
      ...perFanOut('write units per reply @', (f) => f.write_units),
      row('of which index writes', (f) => fmt(f.index_write_units, 3)),
      row('of which failed conditions (billed, no effect)', (f) =>
        fmt(f.failed_condition_write_units ?? 0, 4),
      ),
      row('failed conditional writes per aggregate', (f) => byOp(f).join(', ') || '0'),
      ...perFanOut('read units per reply @', (f) => f.read_units),
      ...perFanOut('SQS calls per reply @ (fanin)', (f) => f.sqs_calls),
      row("clients' SQS calls per reply", (f) => fmt(f.client_sqs_calls, 3)),
      row('reply invocations per reply', (f) => fmt(f.reply_invocations, 3)),
      row('replies per batch', (f) => fmt(f.replies_per_batch, 2)),
      row('replies of one aggregate per batch', (f) => fmt(f.replies_per_aggregate_per_batch, 2)),
      row(
        'completion latency p50 / p99',
        (f) => `${fmt(f.completion_latency_ms.p50, 0)} / ${ms(f.completion_latency_ms.p99)}`,
      ),
      row('fanin per million aggregates', (f) => usd(f.fanin_only_per_million_usd)),
      row('**end to end per million aggregates**', (f) => `**${usd(f.cost_per_million_aggregates_usd)}**`),
      ...ownWorkRows(r, names),
      ...(names.some((p) => at(p, '10')?.cost_per_million_aggregates_usd_timers_paced !== undefined)
        ? [row('end to end, timer firing of requests one at a time', (f) => usdOrDash(paced(f)))]
        : []),
    ],
  );
}

/** The floor and the aggregate's own work, per pattern (none when the results have no own-work figure). */
function ownWorkRows(r: Results, names: readonly ArrivalPatternName[]): string[][] {
  if (!names.some((p) => r.arrival[p].own_work_per_million_aggregates_usd !== undefined)) return [];
  const cell = (value: (a: Results['arrival'][ArrivalPatternName]) => string | undefined) =>
    names.map((p) => value(r.arrival[p]) ?? '—');
  const dollars = (n: number | undefined, bold = '') =>
    n === undefined ? undefined : `${bold}${usd(n)}${bold}`;
  return [
    [
      'of which the floor of any design (its batching as measured)',
      ...cell((a) => dollars(a.reply_floor_per_million_aggregates_usd)),
    ],
    [
      "**the aggregate's own work per million aggregates**",
      ...cell((a) => dollars(a.own_work_per_million_aggregates_usd, '**')),
    ],
    [
      'own work: DynamoDB / SQS / Lambda',
      ...cell((a) => {
        const by = a.own_work_by_service_usd;
        return by && `${signed(by.dynamodb)} / ${signed(by.sqs)} / ${signed(by.lambda)}`;
      }),
    ],
  ];
}

/** What the own-work rows mean, with each pattern's floor batching. */
function ownWorkText(r: Results, names: readonly ArrivalPatternName[]): string[] {
  const batching = names.flatMap((p) => {
    const b = r.arrival[p].reply_floor_batching;
    return b
      ? [
          prose`\`${p}\` ${fmt(b.replies_per_batch, 2)} replies per batch, ${fmt(b.messages_per_receive, 2)} per
            receive, ${fmt(b.write_units_per_reply, 3)} write units per reply`,
        ]
      : [];
  });
  if (batching.length === 0) return [];
  return [
    prose`The floor is what each reply costs at the least whatever the design (\`replyFloorPerMillion\`,
      \`bench/cost/floor.ts\`), at the batching the pattern measured: ${batching.join('; ')}. The aggregate's
      own work is the end-to-end cost less that floor; by service it can come out below zero where fanin
      batches more than the floor assumes (docs/costs.md, "The aggregate's own work").`,
    '',
  ];
}

/** "Batching window": every reply batching setting measured, side by side. */
function batchingSection(r: Results, compared: readonly ArrivalPatternName[]): string[] {
  const s = r.arrival_setup;
  const rows = compared.flatMap((p) => r.arrival[p].by_batching.map((b) => [p, b] as const));
  const splits = rows.some(([, b]) => drained(b));
  const header = ['pattern', 'consumer', 'window', 'batch size', 'latency p50 / p99', 'replies span'];
  const columns = ['replies per batch', 'of one aggregate', ...(splits ? ['aggregates split'] : [])];
  const perReply = [
    'receives / reply',
    'reply invocations / reply',
    'SQS calls / reply',
    'write units / reply',
  ];
  return [
    '### Batching window',
    '',
    prose`\`replyBatchingWindowSeconds\` holds a reply batch open until it holds \`replyBatchSize\` replies
      (${s.default_batch_size} by default) or the window runs out: an aggregate's replies that share a batch
      are one pack, and larger batches take fewer calls per reply, at the price of
      latency.${batchingFindings(r, compared)}`,
    '',
    ...drainText(r, compared),
    prose`Same aggregates and offered rate, fan-out 10, each setting on every partition, the topology's first;
      "replies span" is an aggregate's first reply's send to its last's (p50 / p90)${
        s.independent_reply_span_seconds === undefined
          ? ''
          : ` (\`independent\`: about ${fmt(s.independent_reply_span_seconds, 1)} s)`
      }; "receives / reply" counts the receives that returned messages${
        splits
          ? prose`; "aggregates split" counts the drained phase's aggregates
            (${fmt(drainedPhaseAggregates(r, compared), 0)}) whose replies more than one drain took`
          : ''
      }. How the rig sets them and why: ${MORE}.`,
    '',
    ...table(
      [...header, ...columns, ...perReply, 'end to end / M'],
      rows.map(([p, b]) => settingRow(p, b, splits)),
    ),
    '',
  ];
}

/** One setting's row of "Batching window". */
function settingRow(p: ArrivalPatternName, b: Row, splits: boolean): string[] {
  const phase = b.drain_phase === undefined ? '' : `, ${b.drain_phase}`;
  return [
    `\`${p}\``,
    drained(b) ? `drain every ${fmt(b.drain_interval_seconds, 0)} s${phase}` : 'event source',
    drained(b) ? '—' : `${fmt(b.batching_window_seconds, 0)} s`,
    fmt(b.batch_size, 0),
    `${fmt(b.completion_latency_ms.p50, 0)} / ${ms(b.completion_latency_ms.p99)}`,
    `${fmt(b.reply_span_ms.p50, 0)} / ${ms(b.reply_span_ms.p90)}`,
    fmt(b.replies_per_batch, 2),
    fmt(b.replies_per_aggregate_per_batch, 2),
    ...(splits ? [drained(b) ? fmt(b.aggregates_split_across_drains) : '—'] : []),
    ...[b.reply_receives_per_reply, b.reply_invocations_per_reply, b.sqs_calls_per_reply].map((n) =>
      fmt(n, 3),
    ),
    fmt(b.write_units_per_reply, 3),
    usd(b.cost_per_million_aggregates_usd),
  ];
}

/** Per pattern compared, the setting with the fewest write units per reply against the topology's. */
function batchingFindings(r: Results, patterns: readonly ArrivalPatternName[]): string {
  const findings = patterns.flatMap((p) => {
    const [base, ...rest] = r.arrival[p].by_batching;
    // A straddled drain is the same setting as its aligned row, timed otherwise: not a setting to pick.
    const others = rest.filter((b) => !straddled(b));
    if (!base || others.length === 0) return [];
    const best = others.reduce((a, b) =>
      b.write_units_per_reply < a.write_units_per_reply ||
      (b.write_units_per_reply === a.write_units_per_reply && waitSeconds(b) < waitSeconds(a))
        ? b
        : a,
    );
    const figures = compare(best, [base], ['ofOne', 'units', 'invocations', 'sqs', 'cost', 'p50ms']);
    return [`\`${p}\` ${settingText(best)}: ${figures}`];
  });
  return findings.length === 0
    ? ''
    : ` Measured against the topology's setting (in brackets): ${findings.join('; ')}.`;
}

type Figure = readonly [label: string, pick: (b: Row) => string];
/** The figures the comparisons give, each label with `#` where the figure and its brackets go. */
const FIGURES = {
  split: ['# split across drains', (b) => fmt(b.aggregates_split_across_drains ?? 0, 0)],
  ofOne: ['# replies of one aggregate per batch', (b) => fmt(b.replies_per_aggregate_per_batch, 2)],
  perReceive: ['# messages per receive', (b) => fmt(perReceive(b), 1)],
  units: ['write units per reply #', (b) => fmt(b.write_units_per_reply, 3)],
  invocations: ['reply invocations per reply #', (b) => fmt(b.reply_invocations_per_reply, 3)],
  sqs: ['SQS calls per reply #', (b) => fmt(b.sqs_calls_per_reply, 3)],
  cost: ['# per million aggregates end to end', (b) => usd(b.cost_per_million_aggregates_usd)],
  p50ms: ['latency p50 #', (b) => ms(b.completion_latency_ms.p50)],
  p50: ['latency p50 #', (b) => secs(b.completion_latency_ms.p50)],
  p99: ['p99 #', (b) => secs(b.completion_latency_ms.p99)],
} satisfies Record<string, Figure>;

/** Figures of `row`, each with the same of `others` in brackets: `write units per reply 1.1 (1.6 and 1.5)`. */
function compare(row: Row, others: readonly Row[], figures: readonly (keyof typeof FIGURES)[]): string {
  return figures
    .map((name) => {
      const [label, pick] = FIGURES[name];
      return label.replace('#', `${pick(row)} (${others.map(pick).join(' and ')})`);
    })
    .join(', ');
}

/** The phase figures behind a drained row of `by_batching` (same interval and drain phase, fan-out 10). */
function drainedFigures(r: Results, p: ArrivalPatternName, b: Row): ArrivalFigures | undefined {
  return r.arrival[p].other_batching_windows.find(
    (f) =>
      f.fan_out === 10 &&
      f.drain_interval_seconds === b.drain_interval_seconds &&
      (f.drain_phase ?? 'aligned') === (b.drain_phase ?? 'aligned'),
  );
}

/** Aggregates of a drained phase (every phase at fan-out 10 has as many). */
function drainedPhaseAggregates(r: Results, patterns: readonly ArrivalPatternName[]): number | undefined {
  return patterns.flatMap((p) => r.arrival[p].other_batching_windows.filter(drained))[0]?.aggregates;
}

/** The drained rows in words, from their figures; or, when no setting was drained (the quick run), where. */
function drainText(r: Results, patterns: readonly ArrivalPatternName[]): string[] {
  const rows = patterns.flatMap((p) => r.arrival[p].by_batching.filter(drained));
  if (rows.length === 0) {
    return r.quick
      ? [
          prose`Reply partitions drained on a schedule (\`replyDrainIntervalSeconds\`) are compared in the full
            run only: each drained phase waits for a schedule of at least a minute.`,
          '',
        ]
      : [];
  }
  const splits = rows
    .filter(alignedDrain)
    .flatMap((b) =>
      b.aggregates_split_across_drains === undefined ? [] : [b.aggregates_split_across_drains],
    );
  return [
    prose`**Drained every ${fmt(rows[0]?.drain_interval_seconds, 0)} s** (\`replyDrainIntervalSeconds\`; how a
      drain works: ${MORE}). Measured: ${drainFindings(r, patterns).join('; ')}.${
        splits.length === 0
          ? ''
          : ` Aggregates whose replies two drains took, after a drain: ${splits.map((n) => fmt(n, 0)).join(' and ')}.`
      } An idle partition's drain is one receive and one invocation per interval
      (${fmt(r.cost.fixed_monthly.reply_partitions, 0)} partitions here), left out of the per-reply figures.`,
    '',
    ...patterns.flatMap((p) => straddledParagraph(r, p)),
  ];
}

/** Per pattern drained, what the drain measured against the event sources: one sentence each. */
function drainFindings(r: Results, patterns: readonly ArrivalPatternName[]): string[] {
  return patterns.flatMap((p) => {
    const rows = r.arrival[p].by_batching;
    const drain = rows.find(alignedDrain);
    const base = rows[0];
    if (!drain || !base) return [];
    const cheapest = rows
      .filter((b) => !drained(b))
      .reduce((a, b) => (b.cost_per_million_aggregates_usd < a.cost_per_million_aggregates_usd ? b : a));
    const figures = compare(drain, [base, cheapest], ['perReceive', 'ofOne', 'units', 'sqs', 'cost']);
    return [
      prose`\`${p}\` (${rows.some(straddled) ? 'aligned; ' : ''}in brackets: the topology's event source, and
        the cheapest, ${settingText(cheapest)}): ${figures}; latency p50
        ${secs(drain.completion_latency_ms.p50)}, p99
        ${secs(drain.completion_latency_ms.p99)}${drainsText(drainedFigures(r, p, drain), drain)}`,
    ];
  });
}

/** `(2 drains that found replies took the phase's 800 in 2 batches)`. */
function drainsText(phase: ArrivalFigures | undefined, b: Row): string {
  if (!phase) return '';
  const drains = Math.round(b.reply_invocations_per_reply * phase.replies);
  const batches = Math.round(phase.replies / Math.max(b.replies_per_batch, 1e-9));
  return prose` (${fmt(drains, 0)} drains that found replies took the phase's ${fmt(phase.replies, 0)} in
    ${fmt(batches, 0)} batches)`;
}

/** One pattern's straddled drain (a drain in the middle of the sending) against its aligned one. */
function straddledParagraph(r: Results, p: ArrivalPatternName): string[] {
  const rows = r.arrival[p].by_batching;
  const cut = rows.find(straddled);
  const aligned = rows.find(alignedDrain);
  if (!cut || !aligned) return [];
  const phase = drainedFigures(r, p, cut);
  const timing = phase?.drain_timing;
  const when =
    timing && timing.first_drain_after_release_ms !== null
      ? prose`: the first drain came ${secs(timing.first_drain_after_release_ms)} into
        ${secs(timing.sending_ms)} of sending (${fmt(timing.partition_drains_during_sending, 0)} partition drains)`
      : '';
  const of = phase?.aggregates === undefined ? '' : `of ${fmt(phase.aggregates, 0)} aggregates, `;
  const figures = ['split', 'ofOne', 'perReceive', 'units', 'sqs', 'cost', 'p50', 'p99'] as const;
  return [
    prose`**A drain in the middle of the sending** (\`${p}\`, "straddled"; the aligned row in brackets): the
      replies held until half their sending time before a drain. Measured${when}:
      ${of}${compare(cut, [aligned], figures)}${drainsText(phase, cut)}. A steady stream lies between the two
      timings (${MORE}).`,
    '',
  ];
}
