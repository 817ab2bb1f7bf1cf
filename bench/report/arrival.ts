import type { ArrivalFigures, ArrivalPatternName, BatchingComparison, Results } from '../schema.ts';
import { fmt, table, usd } from './format.ts';

const PATTERN_TEXT: Record<ArrivalPatternName, string> = {
  together:
    "a responder answers all sub-requests of an aggregate in one `SendMessageBatch` (the first rig's pattern): a reply batch holds whole aggregates",
  independent:
    'each reply sent on its own (`SendMessage`), round-robin over the aggregates in flight: a reply batch holds about one reply per aggregate',
  spread:
    'independent responders with seeded lognormal answer times; each reply sent on its own when its time comes',
};

/** The three arrival patterns side by side, and the batching-window trade-off. */
/** Failed conditional writes per aggregate by operation, e.g. `0.0125 UpdateItem`; `0` when none. */
function failedConditions(f: ArrivalFigures): string {
  const byOp = Object.entries(f.failed_conditions_per_aggregate ?? {});
  return byOp.length === 0 ? '0' : byOp.map(([op, n]) => `${fmt(n, 4)} ${op}`).join(', ');
}

export function arrivalSection(r: Results): string[] {
  const names = (['together', 'independent', 'spread'] as const).filter((p) => r.arrival[p]);
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
  const batched = r.timers.batched;
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
    `Per reply unless stated, all-in: the deadline timer armed, and its firing (measured apart) added${batched && r.timers.used === 'batched' ? `: the batched variant's, since every pattern sends its requests in \`SendMessageBatch\`es of ten (its timers measured ${fmt(batched.arming_per_aggregate.timer_sends, 2)} sends, ${fmt(batched.firing_per_aggregate.receives, 2)} receives, ${fmt(batched.firing_per_aggregate.deletes, 2)} deletes and ${fmt(batched.firing_per_aggregate.invocations, 2)} timer invocations per aggregate; the end-to-end cost with the paced variant's firing, requests one at a time, is the last row)` : ''}.`,
    '',
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
    '',
  ];
  const compared = names.filter((p) => r.arrival[p].by_batching.length > 1);
  if (compared.length > 0) {
    const settingRow = (p: ArrivalPatternName, b: BatchingComparison) => [
      `\`${p}\``,
      `${fmt(b.batching_window_seconds, 0)} s`,
      fmt(b.batch_size, 0),
      `${fmt(b.completion_latency_ms.p50, 0)} / ${fmt(b.completion_latency_ms.p99, 0)} ms`,
      `${fmt(b.reply_span_ms.p50, 0)} / ${fmt(b.reply_span_ms.p90, 0)} ms`,
      fmt(b.replies_per_batch, 2),
      fmt(b.replies_per_aggregate_per_batch, 2),
      fmt(b.reply_invocations_per_reply, 3),
      fmt(b.sqs_calls_per_reply, 3),
      fmt(b.write_units_per_reply, 3),
      usd(b.cost_per_million_aggregates_usd),
    ];
    lines.push(
      '### Batching window',
      '',
      `\`replyBatchingWindowSeconds\` (Lambda's \`MaximumBatchingWindowInSeconds\`) holds a reply batch open until it holds \`replyBatchSize\` replies (\`BatchSize\`: ${s.default_batch_size} by default, above 10 only with a window of at least 1 s) or the window runs out. The replies of one aggregate that share a batch are recorded as one pack, compressed together, and larger batches take fewer receives, deletes and invocations per reply; the price is latency, since an aggregate's last reply waits for its batch's window to run out.${batchingFindings(r, compared)}`,
      '',
      `Same aggregates and offered rate, fan-out 10, each setting on every partition, the topology's first; "replies span" is an aggregate's first reply's send to its last's (p50 / p90), what a window must cover for them to share a batch${s.independent_reply_span_seconds === undefined ? '' : ` (\`independent\` sends them about ${fmt(s.independent_reply_span_seconds, 1)} s apart first to last: ${s.rotation} aggregates in turn at ${fmt(s.offered_replies_per_second, 0)} replies/s)`}:`,
      '',
      ...table(
        [
          'pattern',
          'window',
          'batch size',
          'latency p50 / p99',
          'replies span',
          'replies per batch',
          'of one aggregate',
          'reply invocations / reply',
          'SQS calls / reply',
          'write units / reply',
          'end to end / M',
        ],
        compared.flatMap((p) => r.arrival[p].by_batching.map((b) => settingRow(p, b))),
      ),
      '',
      "The rig changes the setting by describing the same topology again with `replyBatchingWindowSeconds` and `replyBatchSize` and replacing its reply pollers (`Rig.setReplyBatching`), as a redeploy would. Each partition's pollers (`replyConcurrency` of them) gather their batches side by side, as Lambda's do, so the replies of one aggregate can split between batches even within one window. On AWS, Lambda also scales its pollers with the backlog, so batch sizes there may differ at the same rate; the calls and units per batch do not.",
      '',
    );
  }
  return lines;
}

/**
 * What the measured settings show, per pattern compared: the setting with the fewest write units
 * per reply (the shortest window of equals) against the topology's (the first of `by_batching`).
 */
function batchingFindings(r: Results, patterns: readonly ArrivalPatternName[]): string {
  const findings = patterns.flatMap((p) => {
    const [base, ...others] = r.arrival[p].by_batching;
    if (!base || others.length === 0) return [];
    const best = others.reduce((a, b) =>
      b.write_units_per_reply < a.write_units_per_reply ||
      (b.write_units_per_reply === a.write_units_per_reply &&
        b.batching_window_seconds < a.batching_window_seconds)
        ? b
        : a,
    );
    const was = (pick: (b: BatchingComparison) => string) => `${pick(best)} (${pick(base)})`;
    return [
      `\`${p}\` at ${fmt(best.batching_window_seconds, 0)} s and ${fmt(best.batch_size, 0)}: ${was((b) => fmt(b.replies_per_aggregate_per_batch, 2))} replies of one aggregate per batch, ${was((b) => fmt(b.write_units_per_reply, 3))} write units, ${was((b) => fmt(b.reply_invocations_per_reply, 3))} reply invocations and ${was((b) => fmt(b.sqs_calls_per_reply, 3))} SQS calls per reply, ${was((b) => usd(b.cost_per_million_aggregates_usd))} per million aggregates, latency p50 ${was((b) => `${fmt(b.completion_latency_ms.p50, 0)} ms`)}`,
    ];
  });
  return findings.length === 0
    ? ''
    : ` Measured against the topology's setting (in brackets): ${findings.join('; ')}.`;
}
