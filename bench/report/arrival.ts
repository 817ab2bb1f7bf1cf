import { fmt, prose, table, usd } from './format.ts';
import type { ArrivalFigures, ArrivalPatternName, BatchingComparison, Results } from './schema.ts';

const LARGER_FAN_OUTS = ' (the larger fan-outs as fast as the responders send)';
const DRAIN_OPTIONS = ', `replyBatchSize` and `replyDrainIntervalSeconds`';
const DRAINER_TEXT = prose` A drained partition's pollers are replaced by a drainer (\`QueueDrainer\`,
  \`local/drainer.ts\`) that invokes the reply function's drain handler (\`makeReplyDrainHandler\`) every
  interval, the first one interval after the setting is made, as a new schedule's: the drain's receives and
  deletes are made with fanin's own SQS client and counted as the reply function's calls (\`fanin:reply\`),
  priced as fanin's SQS requests and in its Lambda duration, not as an event source's.`;

const PATTERN_TEXT: Record<ArrivalPatternName, string> = {
  together: prose`a responder answers all sub-requests of an aggregate in one \`SendMessageBatch\` (the first rig's
      pattern): a reply batch holds whole aggregates`,
  independent: prose`each reply sent on its own (\`SendMessage\`), round-robin over the
    aggregates in flight: a reply batch
      holds about one reply per aggregate`,
  spread:
    'independent responders with seeded lognormal answer times; each reply sent on its own when its time comes',
};

/** The three arrival patterns side by side, and the batching-window trade-off. */
/** Failed conditional writes per aggregate by operation, e.g. `0.0125 UpdateItem`; `0` when none. */
function failedConditions(f: ArrivalFigures): string {
  const byOp = Object.entries(f.failed_conditions_per_aggregate ?? {});
  return byOp.length === 0 ? '0' : byOp.map(([op, n]) => `${fmt(n, 4)} ${op}`).join(', ');
}

const usdOrDash = (n: number | undefined) => (n === undefined ? '—' : usd(n));
/** Dollars that may be below zero: `−$0.50`. */
const signed = (n: number) => (n < 0 ? `−${usd(-n)}` : usd(n));

/** What the own-work rows mean, with each pattern's floor batching. */
function ownWorkText(r: Results, names: readonly ArrivalPatternName[]): string[] {
  const shown = names.filter((p) => r.arrival[p].reply_floor_batching !== undefined);
  if (shown.length === 0) return [];
  const batching = shown.map((p) => {
    const b = r.arrival[p].reply_floor_batching;
    return b
      ? prose`\`${p}\` ${fmt(b.replies_per_batch, 2)} replies per batch, ${fmt(b.messages_per_receive, 2)} per
        receive, ${fmt(b.write_units_per_reply, 3)} write units per reply`
      : '';
  });
  return [
    prose`The floor is what each reply costs at the least whatever the design (\`replyFloorPerMillion\` in
      \`bench/cost.ts\`; see "Cost per million aggregates"), taken at the batching the pattern measured:
      ${batching.join('; ')}. The aggregate's own work is the end-to-end cost less that floor: its header,
      \`due\` entry, seal and close, its fan-out's requests and result, its reads, its timer, and every
      Lambda millisecond (the floor counts none); by service, the floor's part of each is taken off, so a
      service where fanin batches more than the floor assumes (the responders' \`SendMessageBatch\` in
      \`together\`) can come out below zero. \`arrival.<pattern>.own_work_per_million_aggregates_usd\` in
      the JSON, beside \`reply_floor_per_million_aggregates_usd\`.`,
    '',
  ];
}

export function arrivalSection(r: Results): string[] {
  const names = (['together', 'independent', 'spread'] as const).filter((p) => r.arrival[p]);
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
  const batched = r.timers.batched;
  return [
    '## Arrival patterns',
    '',
    prose`Each pattern runs the same aggregates (fan-out 10, 1 KB replies, results collected) through the real
      handlers: every request is sent at once, the responders hold every answer until all sub-requests are
      in, then release them at ${fmt(s.offered_replies_per_second, 0)}
      replies/s${r.arrival.independent?.measured.some((f) => f.fan_out !== 10) ? LARGER_FAN_OUTS : ''}:`,
    '',
    ...names.map(
      (p) =>
        prose`- \`${p}\`${p === r.headline_pattern ? ' (the headline)' : ''}:
          ${PATTERN_TEXT[p]}${
            p === 'independent'
              ? prose` (${s.rotation} aggregates in
          turn)`
              : ''
          }${
            p === 'spread'
              ? prose` (median ${fmt(s.spread.median_ms, 0)} ms, σ ${s.spread.sigma}, at
          most ${fmt(s.spread.max_ms / 1000, 0)} s; aggregates taken up at the offered rate)`
              : ''
          }.`,
    ),
    '',
    prose`Per reply unless stated, all-in: the deadline timer armed, and its firing (measured apart)
      added${
        batched && r.timers.used === 'batched'
          ? prose`: the batched variant's, since every pattern sends
      its requests in \`SendMessageBatch\`es of ten (its timers measured
      ${fmt(batched.arming_per_aggregate.timer_sends, 2)} sends,
      ${fmt(batched.firing_per_aggregate.receives, 2)} receives,
      ${fmt(batched.firing_per_aggregate.deletes, 2)} deletes and
      ${fmt(batched.firing_per_aggregate.invocations, 2)} timer invocations per aggregate; the end-to-end
      cost with the paced variant's firing, requests one at a time, is the last row)`
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
  const s = r.arrival_setup;
  return [
    ...table(
      [`reply batching window ${s.default_batching_window_seconds} s`, ...names.map((p) => `\`${p}\``)],
      [
        ...fanOuts.map((fo) => row(`write units per reply @${fo}`, (f) => fmt(f.write_units, 3), fo)),
        row('of which index writes', (f) => fmt(f.index_write_units, 3)),
        row('of which failed conditions (billed, no effect)', (f) =>
          fmt(f.failed_condition_write_units ?? 0, 4),
        ),
        row('failed conditional writes per aggregate', (f) => failedConditions(f)),
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
        ...ownWorkRows(r, names),
        ...(names.some((p) => at(p, '10')?.cost_per_million_aggregates_usd_timers_paced !== undefined)
          ? [
              row('end to end, timer firing of requests one at a time', (f) =>
                f.cost_per_million_aggregates_usd_timers_paced === undefined
                  ? '—'
                  : usd(f.cost_per_million_aggregates_usd_timers_paced),
              ),
            ]
          : []),
      ],
    ),
  ];
}

/** The floor and the aggregate's own work, per pattern (none when the results have no own-work figure). */
function ownWorkRows(r: Results, names: readonly ArrivalPatternName[]): string[][] {
  if (!names.some((p) => r.arrival[p].own_work_per_million_aggregates_usd !== undefined)) return [];
  return [
    [
      'of which the floor of any design (its batching as measured)',
      ...names.map((p) => usdOrDash(r.arrival[p].reply_floor_per_million_aggregates_usd)),
    ],
    [
      "**the aggregate's own work per million aggregates**",
      ...names.map((p) => {
        const own = r.arrival[p].own_work_per_million_aggregates_usd;
        return own === undefined ? '—' : `**${usd(own)}**`;
      }),
    ],
    [
      'own work: DynamoDB / SQS / Lambda',
      ...names.map((p) => {
        const by = r.arrival[p].own_work_by_service_usd;
        return by ? `${signed(by.dynamodb)} / ${signed(by.sqs)} / ${signed(by.lambda)}` : '—';
      }),
    ],
  ];
}

/** "Batching window": every reply batching setting measured, side by side. */
function batchingSection(r: Results, compared: readonly ArrivalPatternName[]): string[] {
  const s = r.arrival_setup;
  // With a drain measured, how many aggregates a drain split (a column of dashes otherwise: left out).
  const splits = anyDrained(r, compared);
  return [
    '### Batching window',
    '',
    prose`\`replyBatchingWindowSeconds\` (Lambda's \`MaximumBatchingWindowInSeconds\`) holds a reply batch open
        until it holds \`replyBatchSize\` replies (\`BatchSize\`: ${s.default_batch_size} by default, above
        10 only with a window of at least 1 s) or the window runs out. The replies of one aggregate that
        share a batch are recorded as one pack, compressed together, and larger batches take fewer receives,
        deletes and invocations per reply; the price is latency, since an aggregate's last reply waits for
        its batch's window to run out.${batchingFindings(r, compared)}`,
    '',
    ...drainText(r, compared),
    prose`Same aggregates and offered rate, fan-out 10, each setting on every partition, the topology's first;
        "replies span" is an aggregate's first reply's send to its last's (p50 / p90), what a window must
        cover for them to share a batch${
          s.independent_reply_span_seconds === undefined
            ? ''
            : prose`
        (\`independent\` sends them about ${fmt(s.independent_reply_span_seconds, 1)} s apart first to last:
        ${s.rotation} aggregates in turn at ${fmt(s.offered_replies_per_second, 0)} replies/s)`
        }; "receives
        / reply" counts the receives from the reply partitions that returned messages (one per reply when
        each returns one message, a tenth when each returns ten)${
          anyDrained(r, compared)
            ? prose`; a drain's
        batch is one of its calls to the use case; "aggregates split" counts, with a drain, the phase's
        aggregates (${fmt(drainedPhaseAggregates(r, compared), 0)}) whose replies were taken by more than
        one drain${anyStraddled(r, compared) ? '; "aligned" and "straddled" as above' : ''}`
            : ''
        }:`,
    '',
    ...table(
      [
        'pattern',
        'consumer',
        'window',
        'batch size',
        'latency p50 / p99',
        'replies span',
        'replies per batch',
        'of one aggregate',
        ...(splits ? ['aggregates split'] : []),
        'receives / reply',
        'reply invocations / reply',
        'SQS calls / reply',
        'write units / reply',
        'end to end / M',
      ],
      compared.flatMap((p) => r.arrival[p].by_batching.map((b) => settingRow(p, b, splits))),
    ),
    '',
    prose`The rig changes the setting by describing the same topology again with
        \`replyBatchingWindowSeconds\`${anyDrained(r, compared) ? DRAIN_OPTIONS : ' and `replyBatchSize`'},
        replacing its reply pollers (\`Rig.setReplyBatching\`), as a redeploy would. Each partition's
        pollers (\`replyConcurrency\` of them) gather their batches side by side, as Lambda's do, so the
        replies of one aggregate can split between batches even within one window. On AWS, Lambda also
        scales its pollers with the backlog, so batch sizes there may differ at the same rate; the calls and
        units per batch do
        not.${anyDrained(r, compared) ? DRAINER_TEXT : ''}`,
    '',
  ];
}

/** One setting's row of "Batching window". */
function settingRow(p: ArrivalPatternName, b: BatchingComparison, splits: boolean): string[] {
  return [
    `\`${p}\``,
    drained(b)
      ? `drain every ${fmt(b.drain_interval_seconds, 0)} s${b.drain_phase === undefined ? '' : `, ${b.drain_phase}`}`
      : 'event source',
    drained(b) ? '—' : `${fmt(b.batching_window_seconds, 0)} s`,
    fmt(b.batch_size, 0),
    `${fmt(b.completion_latency_ms.p50, 0)} / ${fmt(b.completion_latency_ms.p99, 0)} ms`,
    `${fmt(b.reply_span_ms.p50, 0)} / ${fmt(b.reply_span_ms.p90, 0)} ms`,
    fmt(b.replies_per_batch, 2),
    fmt(b.replies_per_aggregate_per_batch, 2),
    ...(splits ? [drained(b) ? fmt(b.aggregates_split_across_drains) : '—'] : []),
    fmt(b.reply_receives_per_reply, 3),
    fmt(b.reply_invocations_per_reply, 3),
    fmt(b.sqs_calls_per_reply, 3),
    fmt(b.write_units_per_reply, 3),
    usd(b.cost_per_million_aggregates_usd),
  ];
}

/**
 * What the measured settings show, per pattern compared: the setting with the fewest write units
 * per reply (the shortest window of equals) against the topology's (the first of `by_batching`).
 */
function batchingFindings(r: Results, patterns: readonly ArrivalPatternName[]): string {
  const findings = patterns.flatMap((p) => {
    const [base, ...rest] = r.arrival[p].by_batching;
    // A straddled drain is the same setting as its aligned row, timed otherwise: not a setting to pick.
    const others = rest.filter((b) => !straddled(b));
    if (!base || others.length === 0) return [];
    const best = others.reduce((a, b) =>
      b.write_units_per_reply < a.write_units_per_reply ||
      (b.write_units_per_reply === a.write_units_per_reply && settingWaitSeconds(b) < settingWaitSeconds(a))
        ? b
        : a,
    );
    const was = (pick: (b: BatchingComparison) => string) => `${pick(best)} (${pick(base)})`;
    return [
      prose`\`${p}\` ${
        drained(best)
          ? prose`drained every ${fmt(best.drain_interval_seconds, 0)} s in batches of
        ${fmt(best.batch_size, 0)}`
          : prose`at ${fmt(best.batching_window_seconds, 0)} s and
        ${fmt(best.batch_size, 0)}`
      }: ${was((b) => fmt(b.replies_per_aggregate_per_batch, 2))} replies of
        one aggregate per batch, ${was((b) => fmt(b.write_units_per_reply, 3))} write units,
        ${was((b) => fmt(b.reply_invocations_per_reply, 3))} reply invocations and
        ${was((b) => fmt(b.sqs_calls_per_reply, 3))} SQS calls per reply,
        ${was((b) => usd(b.cost_per_million_aggregates_usd))} per million aggregates, latency p50
        ${was((b) => `${fmt(b.completion_latency_ms.p50, 0)} ms`)}`,
    ];
  });
  return findings.length === 0
    ? ''
    : ` Measured against the topology's setting (in brackets): ${findings.join('; ')}.`;
}

/**
 * Messages per receive from the reply partitions under a setting (replies over the receives that returned
 * any).
 */
const perReceive = (b: BatchingComparison): number => 1 / Math.max(b.reply_receives_per_reply, 1e-9);

/**
 * True for a setting whose reply partitions were drained on a schedule rather than consumed by an event
 * source.
 */
export const drained = (b: Pick<BatchingComparison, 'drain_interval_seconds'>): boolean =>
  (b.drain_interval_seconds ?? 0) > 0;

/** True for a drained row whose sending was timed to have a drain in its middle. */
export const straddled = (b: Pick<BatchingComparison, 'drain_interval_seconds' | 'drain_phase'>): boolean =>
  drained(b) && b.drain_phase === 'straddled';

/** A drained row measured just after a drain (every drained row of results without `drain_phase`). */
export const alignedDrain = (
  b: Pick<BatchingComparison, 'drain_interval_seconds' | 'drain_phase'>,
): boolean => drained(b) && b.drain_phase !== 'straddled';

/** The phase figures behind a drained row of `by_batching` (same interval and drain phase, fan-out 10). */
function drainedFigures(
  r: Results,
  p: ArrivalPatternName,
  b: BatchingComparison,
): ArrivalFigures | undefined {
  return r.arrival[p].other_batching_windows.find(
    (f) =>
      f.fan_out === 10 &&
      f.drain_interval_seconds === b.drain_interval_seconds &&
      (f.drain_phase ?? 'aligned') === (b.drain_phase ?? 'aligned'),
  );
}

/** Aggregates of a drained phase (every phase at fan-out 10 has as many). */
function drainedPhaseAggregates(r: Results, patterns: readonly ArrivalPatternName[]): number | undefined {
  return patterns.flatMap((p) =>
    r.arrival[p].other_batching_windows.filter((f) => f.drain_interval_seconds > 0),
  )[0]?.aggregates;
}

function anyStraddled(r: Results, patterns: readonly ArrivalPatternName[]): boolean {
  return patterns.some((p) => r.arrival[p].by_batching.some(straddled));
}

/** The longest a reply waits for its consumer under a setting: its window, or its drain's interval. */
const settingWaitSeconds = (b: BatchingComparison): number =>
  drained(b) ? b.drain_interval_seconds : b.batching_window_seconds;

/**
 * A setting in words: `a 10 s window and batches of 1,000`, `replies drained every 60 s in batches of 1,000`.
 */
export function settingText(b: BatchingComparison): string {
  return drained(b)
    ? `replies drained every ${fmt(b.drain_interval_seconds, 0)} s in batches of ${fmt(b.batch_size, 0)}`
    : `a ${fmt(b.batching_window_seconds, 0)} s window and batches of ${fmt(b.batch_size, 0)}`;
}

function anyDrained(r: Results, patterns: readonly ArrivalPatternName[]): boolean {
  return patterns.some((p) => r.arrival[p].by_batching.some(drained));
}

/**
 * The drained rows in words, from their figures: what a drain receives and packs against the
 * event sources, and what it costs in latency; or, when no setting was drained (the quick run),
 * where they are.
 */
function drainText(r: Results, patterns: readonly ArrivalPatternName[]): string[] {
  if (!anyDrained(r, patterns)) {
    return r.quick
      ? [
          prose`Reply partitions drained on a schedule (\`replyDrainIntervalSeconds\`) are compared in the full
            run only: the schedule's interval is at least a minute and the rig waits for it for real, so
            each drained phase lasts about a minute, more than the quick run's budget holds.`,
          '',
        ]
      : [];
  }
  const partitions = r.cost.fixed_monthly.reply_partitions;
  const findings = drainFindings(r, patterns);
  const interval =
    patterns.flatMap((p) => r.arrival[p].by_batching.filter(drained))[0]?.drain_interval_seconds ?? 0;
  const s = r.arrival_setup;
  const independent = r.arrival.independent?.other_batching_windows.find(
    (f) => f.fan_out === 10 && f.drain_interval_seconds > 0 && f.drain_phase !== 'straddled',
  );
  const splitText = alignedSplitsText(r, patterns);
  const straddledLines = straddledText(r, patterns);
  return [
    prose`**Drained every ${fmt(interval, 0)} s** (\`replyDrainIntervalSeconds\`): a partition has no event
      source; every interval one invocation of the reply function receives its backlog, ten messages a
      receive, records it in batches of \`replyBatchSize\` (1,000 by default for a drained partition)
      through the same use case, deletes it, and stops at the first receive that finds nothing (a long poll
      of a second) or once half its timeout is spent. An event source's long poll returns as soon as one
      message is there, so at a rate its pollers keep up with it receives about one message per call
      whatever the batch size; a drain receives up to ten from a backlog, and one invocation takes the whole
      backlog, so the replies of an aggregate that arrived within one interval share a batch and a pack.
      Measured: ${findings.join('; ')}.`,
    '',
    prose`The price is latency: a reply waits for the next drain, up to the interval (plus the drain's own time),
      so the p50 above is what this run's timing gave, not a property of the setting. Each
      ${straddledLines.length > 0 ? 'aligned ' : ''}drained phase begins just after a drain (the first just
      after the schedule started) and its replies go out within the interval's first part${
        independent
          ? prose`
      (\`independent\`'s ${fmt(independent.replies, 0)} replies at ${fmt(s.offered_replies_per_second, 0)}
      replies/s take about ${fmt(independent.replies / s.offered_replies_per_second, 0)} s)`
          : ''
      }, so most
      of them wait most of the interval; on a steady stream an aggregate's last reply waits anywhere from
      nothing to the whole interval.${splitText} Every drain ends with one receive that finds the queue
      empty, and a drain of an idle partition is only that: one receive and one invocation (of about a
      second, the long poll) per partition and interval whatever the load (${fmt(partitions, 0)} partitions
      here), left out of the per-reply figures as the event sources' idle long polls are.`,
    '',
    ...straddledLines,
  ];
}

/** Per pattern drained, what the drain measured against the event sources: one sentence each. */
function drainFindings(r: Results, patterns: readonly ArrivalPatternName[]): string[] {
  return patterns.flatMap((p) => {
    const rows = r.arrival[p].by_batching;
    const drain = rows.find(alignedDrain);
    const base = rows[0];
    if (!drain || !base) return [];
    const sources = rows.filter((b) => !drained(b));
    const cheapest = sources.reduce((a, b) =>
      b.cost_per_million_aggregates_usd < a.cost_per_million_aggregates_usd ? b : a,
    );
    return [
      prose`\`${p}\`${rows.some(straddled) ? ' (aligned)' : ''}: ${fmt(perReceive(drain), 1)} messages per
        receive from the reply partitions (event sources: ${fmt(perReceive(base), 1)} at the topology's
        setting, ${fmt(perReceive(cheapest), 1)} with ${settingText(cheapest)}, the cheapest event source
        measured), ${fmt(drain.replies_per_aggregate_per_batch, 2)} replies of one aggregate per batch
        (${fmt(base.replies_per_aggregate_per_batch, 2)} and
        ${fmt(cheapest.replies_per_aggregate_per_batch, 2)}), write units per reply
        ${fmt(drain.write_units_per_reply, 3)} (${fmt(base.write_units_per_reply, 3)} and
        ${fmt(cheapest.write_units_per_reply, 3)}), SQS calls per reply ${fmt(drain.sqs_calls_per_reply, 3)}
        (${fmt(base.sqs_calls_per_reply, 3)} and ${fmt(cheapest.sqs_calls_per_reply, 3)}),
        **${usd(drain.cost_per_million_aggregates_usd)}** per million aggregates end to end
        (${usd(base.cost_per_million_aggregates_usd)} and ${usd(cheapest.cost_per_million_aggregates_usd)});
        latency p50 ${fmt(drain.completion_latency_ms.p50 / 1000, 1)} s, p99
        ${fmt(drain.completion_latency_ms.p99 / 1000, 1)}
        s${drainsText(drainedFigures(r, p, drain), drain)}`,
    ];
  });
}

/** How many aggregates the aligned drains split: a sentence, or nothing without a drained row. */
function alignedSplitsText(r: Results, patterns: readonly ArrivalPatternName[]): string {
  const alignedSplits = patterns.flatMap((p) =>
    r.arrival[p].by_batching
      .filter(alignedDrain)
      .flatMap((b) =>
        b.aggregates_split_across_drains === undefined ? [] : [b.aggregates_split_across_drains],
      ),
  );
  const noneSplit = alignedSplits.length > 0 && alignedSplits.every((n) => n === 0);
  return alignedSplits.length === 0
    ? ''
    : noneSplit
      ? prose` For the same reason no aggregate of ${alignedSplits.length > 1 ? 'these phases' : 'this phase'}
          had its replies taken by two drains ("aggregates split"): the best case for packing.`
      : prose` Aggregates whose replies were taken by two drains:
          ${alignedSplits.map((n) => fmt(n, 0)).join(' and ')} ("aggregates split").`;
}

/**
 * `(2 drains that found replies took the phase's 800 in 2 batches)`, from a drained row and its phase's
 * figures.
 */
function drainsText(phase: ArrivalFigures | undefined, b: BatchingComparison): string {
  if (!phase) return '';
  const drains = Math.round(b.reply_invocations_per_reply * phase.replies);
  const batches = Math.round(phase.replies / Math.max(b.replies_per_batch, 1e-9));
  return prose` (${fmt(drains, 0)} drains that found replies took the phase's ${fmt(phase.replies, 0)} in
    ${fmt(batches, 0)} batches)`;
}

/**
 * The straddled rows against their aligned ones, from their figures: whether the drain in the
 * middle of the sending split the aggregates in flight, what it cost, and where a steady stream lies.
 */
function straddledText(r: Results, patterns: readonly ArrivalPatternName[]): string[] {
  return patterns.flatMap((p) => straddledParagraph(r, p));
}

/** One pattern's straddled drain against its aligned one, or nothing without both. */
function straddledParagraph(r: Results, p: ArrivalPatternName): string[] {
  const s = r.arrival_setup;
  const rows = r.arrival[p].by_batching;
  const cut = rows.find(straddled);
  const aligned = rows.find(alignedDrain);
  if (!cut || !aligned) return [];
  const phase = drainedFigures(r, p, cut);
  const timing = phase?.drain_timing;
  const split = cut.aggregates_split_across_drains ?? 0;
  const aggregates = phase?.aggregates;
  const was = (pick: (b: BatchingComparison) => string) => `${pick(cut)} (${pick(aligned)})`;
  const when =
    timing && timing.first_drain_after_release_ms !== null
      ? prose`: the first drain came ${fmt(timing.first_drain_after_release_ms / 1000, 1)} s into
        ${fmt(timing.sending_ms / 1000, 1)} s of sending`
      : '';
  // At a steady rate: the aggregates in flight where a drain stops, against those an interval completes.
  const fanOut = phase?.fan_out ?? 10;
  const perInterval = (s.offered_replies_per_second * cut.drain_interval_seconds) / fanOut;
  const inFlight = p === 'independent' ? s.rotation : undefined;
  const steady =
    inFlight !== undefined && perInterval > inFlight
      ? prose` (at \`independent\`'s ${fmt(s.independent_reply_span_seconds, 1)} s span, ${fmt(inFlight, 0)}
        aggregates in flight against the ${fmt(perInterval, 0)} an interval completes at
        ${fmt(s.offered_replies_per_second, 0)} replies/s: about one in ${fmt(perInterval / inFlight, 0)}
        per stop; not measured)`
      : ' (not measured)';
  const measured = prose`Measured${when}${
    timing
      ? prose` (${fmt(timing.partition_drains_during_sending, 0)}
    partition drains)`
      : ''
  }: ${fmt(split, 0)}${
    aggregates === undefined
      ? ''
      : prose` of
    ${fmt(aggregates, 0)}`
  } aggregates split across drains (aligned:
    ${fmt(aligned.aggregates_split_across_drains ?? 0, 0)}),
    ${was((b) => fmt(b.replies_per_aggregate_per_batch, 2))} replies of one aggregate per batch,
    ${was((b) => fmt(perReceive(b), 1))} messages per receive, write units per reply
    ${was((b) => fmt(b.write_units_per_reply, 3))}, SQS calls per reply
    ${was((b) => fmt(b.sqs_calls_per_reply, 3))}, **${usd(cut.cost_per_million_aggregates_usd)}**
    (${usd(aligned.cost_per_million_aggregates_usd)}) per million aggregates end to end, latency p50
    ${was((b) => `${fmt(b.completion_latency_ms.p50 / 1000, 1)} s`)}, p99
    ${was((b) => `${fmt(b.completion_latency_ms.p99 / 1000, 1)} s`)}${drainsText(phase, cut)}.`;
  const head = prose`**A drain in the middle of the sending** (\`${p}\`, "straddled"; the aligned row in
    brackets): the same phase with its replies held until half their sending time before a drain, so that
    the drain comes while about half of them are out and the aggregates in flight have replies on both
    sides of it.`;
  // A drain that followed the stream: far fewer messages per receive than the aligned drain's.
  const followed = perReceive(cut) < perReceive(aligned) / 2;
  const reading = straddledReading(split, followed, { cut, aligned, steady });
  return [`${head} ${measured} ${reading}`, ''];
}

/** What the straddled drain's timing did to the packs: a reading of the figures. */
function straddledReading(
  split: number,
  followed: boolean,
  rows: { cut: BatchingComparison; aligned: BatchingComparison; steady: string },
): string {
  const { cut, aligned, steady } = rows;
  return split === 0 && !followed
    ? prose`The drain did not cut through them: every aggregate's replies were taken by one drain. A steady
        stream lies between the two timings: there the aggregates in flight where a drain stops split
        between two packs${steady}.`
    : split === 0
      ? prose`The drain did not cut through them: it took the backlog ten messages a receive, then kept
          receiving the replies as they arrived, a few at most a receive (${fmt(perReceive(cut), 1)} on
          average over the phase), until the first receive that found nothing, after the last reply, so
          every aggregate's replies again shared one batch. What the timing cost is receives, not packs;
          and on AWS the drain's duration, which lasts as long as it follows the stream, while the cost
          model prices Lambda duration from the calls counted and does not see the waiting. Packs split
          only where a drain stops while replies are still arriving: at a full batch, or once half its
          timeout is spent, which this phase's sending does not reach. So aligned is the best case for
          packing and this row is not its worst: it is a drain that comes mid-stream and follows it to its
          end. On a steady stream a drain takes the backlog, follows the stream until a batch fills or
          half its timeout is spent, and the aggregates in flight at each such stop split between two
          packs${steady}.`
      : prose`The drain cut through the aggregates in flight: ${fmt(split, 0)} had their replies taken by two
          drains, so their packs split: the other end of the bracket for a phase of this length, against
          ${fmt(aligned.aggregates_split_across_drains ?? 0, 0)} aligned, the best case. A steady stream
          lies between: there the aggregates in flight where a drain stops split${steady}.`;
}
