import { fmt, ms, msPair, prose, secs, table, usd, when } from './format.ts';
import type { ArrivalFigures, ArrivalPatternName, BatchingComparison, Results } from './schema.ts';

type Row = BatchingComparison;
type Pattern = Results['arrival'][ArrivalPatternName];
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
/** Messages per receive from the reply partitions, from receives per reply. */
export const perReceive = (receivesPerReply: number): number => 1 / Math.max(receivesPerReply, 1e-9);
/** The setting of `rows` that costs least end to end (the first of equals). */
export const cheapest = (rows: readonly Row[]): Row | undefined =>
  rows.reduce<Row | undefined>(
    (a, b) => (a && a.cost_per_million_aggregates_usd <= b.cost_per_million_aggregates_usd ? a : b),
    undefined,
  );
/** The longest a reply waits for its consumer under a setting: its window, or its drain's interval. */
const waitSeconds = (b: Row): number => (drained(b) ? b.drain_interval_seconds : b.batching_window_seconds);
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
  const head = (p: ArrivalPatternName) => `\`${p}\`${p === r.headline_pattern ? ' (the headline)' : ''}`;
  return [
    '## Arrival patterns',
    '',
    prose`Each pattern runs the same aggregates (fan-out 10, 1 KB replies) through the real handlers; the
      responders hold every answer until all sub-requests are in, then release them at
      ${fmt(s.offered_replies_per_second, 0)} replies/s${larger ? ' (larger fan-outs as fast as they go)' : ''}:`,
    '',
    ...names.map((p) => `- ${head(p)}: ${PATTERN_TEXT[p]}${extra[p]}.`),
    '',
    prose`Per reply unless stated, all-in: the deadline timer armed, and its firing (measured apart)
      added${when(
        b,
        (b) => prose`: the batched variant's (${fmt(b.arming_per_aggregate.timer_sends, 2)} sends,
      ${fmt(b.firing_per_aggregate.receives, 2)} receives, ${fmt(b.firing_per_aggregate.deletes, 2)} deletes,
      ${fmt(b.firing_per_aggregate.invocations, 2)} invocations per aggregate; the last row has the paced
      variant's)`,
      )}.`,
    '',
  ];
}

/** Rows of figures at fan-out 10 that are one field each: label, field, decimals. */
const PLAIN_ROWS = [
  ["clients' SQS calls per reply", 'client_sqs_calls', 3],
  ['reply invocations per reply', 'reply_invocations', 3],
  ['replies per batch', 'replies_per_batch', 2],
  ['replies of one aggregate per batch', 'replies_per_aggregate_per_batch', 2],
] as const;

/** The patterns side by side at the topology's batching, per reply and per million aggregates. */
function arrivalTable(r: Results, names: readonly ArrivalPatternName[]): string[] {
  const fanOuts = [...new Set(names.flatMap((p) => Object.keys(r.arrival[p].write_units_per_reply)))];
  fanOuts.sort((a, b) => Number(a) - Number(b));
  const at = (p: ArrivalPatternName, fanOut: string) =>
    r.arrival[p].measured.find((f) => String(f.fan_out) === fanOut);
  const row = (label: string, value: (f: ArrivalFigures) => string, fanOut = '10') => [
    label,
    ...names.map((p) => when(at(p, fanOut), value) || '—'),
  ];
  const perFanOut = (label: string, value: (f: ArrivalFigures) => number) =>
    fanOuts.map((fo) => row(label.replace('@', `@${fo}`), (f) => fmt(value(f), 3), fo));
  const byOp = (f: ArrivalFigures) =>
    Object.entries(f.failed_conditions_per_aggregate ?? {}).map(([op, n]) => `${fmt(n, 4)} ${op}`);
  const paced = names.some((p) => at(p, '10')?.cost_per_million_aggregates_usd_timers_paced !== undefined);
  const window = r.arrival_setup.default_batching_window_seconds;
  return table(
    [`reply batching window ${window} s`, ...names.map((p) => `\`${p}\``)],
    [
      ...perFanOut('write units per reply @', (f) => f.write_units),
      row('of which index writes', (f) => fmt(f.index_write_units, 3)),
      row('of which failed conditions (billed, no effect)', (f) =>
        fmt(f.failed_condition_write_units ?? 0, 4),
      ),
      row('failed conditional writes per aggregate', (f) => byOp(f).join(', ') || '0'),
      ...perFanOut('read units per reply @', (f) => f.read_units),
      ...perFanOut('SQS calls per reply @ (fanin)', (f) => f.sqs_calls),
      ...PLAIN_ROWS.map(([label, key, digits]) => row(label, (f) => fmt(f[key], digits))),
      row('completion latency p50 / p99', ({ completion_latency_ms: l }) => msPair(l.p50, l.p99)),
      row('fanin per million aggregates', (f) => usd(f.fanin_only_per_million_usd)),
      row('**end to end per million aggregates**', (f) => `**${usd(f.cost_per_million_aggregates_usd)}**`),
      ...ownWorkRows(r, names),
      ...(paced ? [row(PACED, (f) => maybeUsd(f.cost_per_million_aggregates_usd_timers_paced))] : []),
    ],
  );
}

const PACED = 'end to end, timer firing of requests one at a time';
const maybeUsd = (n: number | undefined, bold = '') => (n === undefined ? '—' : `${bold}${usd(n)}${bold}`);

const FLOOR = 'of which the floor of any design (its batching as measured)';
/** The floor and the aggregate's own work, per pattern (none when the results have no own-work figure). */
function ownWorkRows(r: Results, names: readonly ArrivalPatternName[]): string[][] {
  if (!names.some((p) => r.arrival[p].own_work_per_million_aggregates_usd !== undefined)) return [];
  const row = (label: string, cell: (a: Pattern) => string) => [
    label,
    ...names.map((p) => cell(r.arrival[p])),
  ];
  const byService = (by: NonNullable<Pattern['own_work_by_service_usd']>) =>
    [by.dynamodb, by.sqs, by.lambda].map(signed).join(' / ');
  return [
    row(FLOOR, (a) => maybeUsd(a.reply_floor_per_million_aggregates_usd)),
    row("**the aggregate's own work per million aggregates**", (a) =>
      maybeUsd(a.own_work_per_million_aggregates_usd, '**'),
    ),
    row('own work: DynamoDB / SQS / Lambda', (a) => when(a.own_work_by_service_usd, byService) || '—'),
  ];
}

/** What the own-work rows mean, with each pattern's floor batching. */
function ownWorkText(r: Results, names: readonly ArrivalPatternName[]): string[] {
  const batching = names.flatMap((p) => {
    const b = r.arrival[p].reply_floor_batching;
    if (!b) return [];
    return prose`\`${p}\` ${fmt(b.replies_per_batch, 2)} replies per batch, ${fmt(b.messages_per_receive, 2)}
      per receive, ${fmt(b.write_units_per_reply, 3)} write units per reply`;
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

const phase = (b: Row) => when(b.drain_phase, (p) => `, ${p}`);
/** The columns of "Batching window", a cell of a setting's row each (`aggregates split` for drains only). */
const SETTING_COLUMNS: readonly (readonly [string, (b: Row, p: ArrivalPatternName) => string])[] = [
  ['pattern', (_, p) => `\`${p}\``],
  [
    'consumer',
    (b) => (drained(b) ? `drain every ${fmt(b.drain_interval_seconds, 0)} s${phase(b)}` : 'event source'),
  ],
  ['window', (b) => (drained(b) ? '—' : `${fmt(b.batching_window_seconds, 0)} s`)],
  ['batch size', (b) => fmt(b.batch_size, 0)],
  ['latency p50 / p99', (b) => msPair(b.completion_latency_ms.p50, b.completion_latency_ms.p99)],
  ['replies span', (b) => msPair(b.reply_span_ms.p50, b.reply_span_ms.p90)],
  ['replies per batch', (b) => fmt(b.replies_per_batch, 2)],
  ['of one aggregate', (b) => fmt(b.replies_per_aggregate_per_batch, 2)],
  ['aggregates split', (b) => (drained(b) ? fmt(b.aggregates_split_across_drains) : '—')],
  ['receives / reply', (b) => fmt(b.reply_receives_per_reply, 3)],
  ['reply invocations / reply', (b) => fmt(b.reply_invocations_per_reply, 3)],
  ['SQS calls / reply', (b) => fmt(b.sqs_calls_per_reply, 3)],
  ['write units / reply', (b) => fmt(b.write_units_per_reply, 3)],
  ['end to end / M', (b) => usd(b.cost_per_million_aggregates_usd)],
];

/** "Batching window": every reply batching setting measured, side by side. */
function batchingSection(r: Results, compared: readonly ArrivalPatternName[]): string[] {
  const s = r.arrival_setup;
  const rows = compared.flatMap((p) => r.arrival[p].by_batching.map((b) => [b, p] as const));
  const splits = rows.some(([b]) => drained(b));
  const cols = SETTING_COLUMNS.filter(([name]) => splits || name !== 'aggregates split');
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
      "replies span" is an aggregate's first reply's send to its last's (p50 / p90)${when(
        s.independent_reply_span_seconds,
        (n) => ` (\`independent\`: about ${fmt(n, 1)} s)`,
      )}; "receives / reply"
      counts the receives that returned messages${when(
        splits,
        () => prose`; "aggregates split" counts the drained
      phase's aggregates (${fmt(drainedPhaseAggregates(r, compared), 0)}) whose replies more than one drain
      took`,
      )}. How the rig sets them and why: ${MORE}.`,
    '',
    ...table(
      cols.map(([name]) => name),
      rows.map(([b, p]) => cols.map(([, cell]) => cell(b, p))),
    ),
    '',
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
  return when(
    findings.length > 0,
    () => ` Measured against the topology's setting (in brackets): ${findings.join('; ')}.`,
  );
}

type Figure = readonly [label: string, pick: (b: Row) => string];
/** The figures the comparisons give, each label with `#` where the figure and its brackets go. */
const FIGURES = {
  split: ['# split across drains', (b) => fmt(b.aggregates_split_across_drains ?? 0, 0)],
  ofOne: ['# replies of one aggregate per batch', (b) => fmt(b.replies_per_aggregate_per_batch, 2)],
  perReceive: ['# messages per receive', (b) => fmt(perReceive(b.reply_receives_per_reply), 1)],
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
  if (rows.length === 0 && !r.quick) return [];
  if (rows.length === 0) {
    return [
      prose`Reply partitions drained on a schedule (\`replyDrainIntervalSeconds\`) are compared in the full
        run only: each drained phase waits for a schedule of at least a minute.`,
      '',
    ];
  }
  const splits = rows.filter(alignedDrain).flatMap((b) => b.aggregates_split_across_drains ?? []);
  return [
    prose`**Drained every ${fmt(rows[0]?.drain_interval_seconds, 0)} s** (\`replyDrainIntervalSeconds\`; how a
      drain works: ${MORE}). Measured: ${drainFindings(r, patterns).join('; ')}.${when(
        splits.length > 0,
        () =>
          ` Aggregates whose replies two drains took, after a drain: ${splits.map((n) => fmt(n, 0)).join(' and ')}.`,
      )}
      An idle partition's drain is one receive and one invocation per interval
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
    const [base] = rows;
    const least = cheapest(rows.filter((b) => !drained(b)));
    if (!drain || !base || !least) return [];
    const figures = compare(drain, [base, least], ['perReceive', 'ofOne', 'units', 'sqs', 'cost']);
    return [
      prose`\`${p}\` (${rows.some(straddled) ? 'aligned; ' : ''}in brackets: the topology's event source, and
        the cheapest, ${settingText(least)}): ${figures}; latency p50
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
