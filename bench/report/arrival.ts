import type { ArrivalFigures, ArrivalPatternName, Results } from '../schema.ts';
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
  const others = names.flatMap((p) => r.arrival[p].other_batching_windows.map((f) => ({ p, f })));
  if (others.length > 0) {
    const windowRow = (p: ArrivalPatternName, f: ArrivalFigures) => [
      `\`${p}\``,
      `${f.batching_window_seconds} s`,
      `${fmt(f.completion_latency_ms.p50, 0)} / ${fmt(f.completion_latency_ms.p99, 0)} ms`,
      fmt(f.replies_per_batch, 2),
      fmt(f.replies_per_aggregate_per_batch, 2),
      fmt(f.reply_invocations, 3),
      fmt(f.sqs_calls, 3),
      fmt(f.write_units, 3),
      usd(f.cost_per_million_aggregates_usd),
    ];
    lines.push(
      '### Batching window',
      '',
      "The reply consumers' batching window (Lambda's `MaximumBatchingWindowInSeconds`; topology option `replyBatchingWindowSeconds`, one value or one per partition) holds a batch open until it is full or the window runs out. With replies arriving apart, it runs out: the last reply of an aggregate waits for it. Without a window, batches are smaller, so there are more invocations, receives and deletes, and fewer replies of one aggregate share a write. Same aggregates and offered rate, fan-out 10:",
      '',
      ...table(
        [
          'pattern',
          'window',
          'latency p50 / p99',
          'replies per batch',
          'of one aggregate',
          'reply invocations / reply',
          'SQS calls / reply',
          'write units / reply',
          'end to end / M',
        ],
        names.flatMap((p) => {
          const base = at(p, '10');
          const mine = others.filter((o) => o.p === p).map((o) => windowRow(p, o.f));
          return mine.length > 0 && base ? [windowRow(p, base), ...mine] : [];
        }),
      ),
      '',
      'The rig changes the window by describing the same topology again with `replyBatchingWindowSeconds` and replacing its reply pollers (`Rig.setReplyBatchingWindow`), as a redeploy would. On AWS, Lambda also scales its pollers with the backlog, so batch sizes there may differ at the same rate; the calls and units per batch do not.',
      '',
    );
  }
  return lines;
}
