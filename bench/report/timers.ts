import type { OpenTimeFigures } from '../run/open-time.ts';
import { columns, fmt, prose, usd } from './format.ts';
import type { Results, TimerVariantFigures } from './schema.ts';

/** The open-time tables' counts, per aggregate, and fanin's own dollars per million. */
const COUNTS: readonly (readonly [string, (row: OpenTimeFigures) => string])[] = [
  ['timer fires', (row) => fmt(row.timer_fires, 2)],
  ['SQS calls', (row) => fmt(row.sqs_calls, 2)],
  ['invocations', (row) => fmt(row.invocations, 2)],
  ['read units', (row) => fmt(row.read_units, 2)],
  ['write units', (row) => fmt(row.write_units, 2)],
  ['fanin $/M', (row) => usd(row.usd_per_million_aggregates)],
];

/** {@link COUNTS} of rows named first: `[name, figures]`. */
const NAMED_COUNTS = COUNTS.map(
  ([h, cell]) => [h, ([, row]: [string, OpenTimeFigures]) => cell(row)] as const,
);

/** What one timer variant's firing took per aggregate. */
function firing(v: TimerVariantFigures): string {
  const f = v.firing_per_aggregate;
  return prose`receives ${fmt(f.receives, 2)}, deletes ${fmt(f.deletes, 2)}, timer invocations
    ${fmt(f.invocations, 2)}, timers per invocation ${fmt(f.records_per_invocation, 1)}`;
}

/** Timers that fired before their aggregates were complete (outside the window), when any did. */
function early(v: TimerVariantFigures): string {
  return v.fired_early > 0
    ? `; ${v.fired_early} fired before their aggregates' run was over and are not counted`
    : '';
}

/** The deadline timer's firing in the two variants measured (`timers.batched` and `timers.paced`). */
export function timerVariantsText(r: Results): string {
  const { batched, paced } = r.timers;
  if (!batched || !paced) return '';
  const together = r.arrival.together?.cost_per_million_aggregates_usd_timers_paced;
  const pacedTotal = r.cost.fanin_total_per_million_timers_paced;
  return [
    prose`The deadline timer's firing is measured apart, in two variants of ${fmt(batched.aggregates, 0)}
      aggregates each (\`timers\` in the JSON).`,
    prose`With requests sent as the arrival phases send them, all at once in \`SendMessageBatch\`es of ten, the
      fan-out armed the deadlines with ${fmt(batched.arming_per_aggregate.timer_sends, 2)} timer sends per
      aggregate, and their firing took, per aggregate, ${firing(batched)}${early(batched)}: the variant
      every arrival pattern's all-in figures include, since their requests arrive that way.`,
    prose`With requests paced one at a time (${fmt(paced.requests_per_second, 0)}/s), the fan-out armed them with
      ${fmt(paced.arming_per_aggregate.timer_sends, 2)} timer sends per aggregate, and their firing took
      ${firing(paced)}${early(paced)}.`,
    pacedTotal === undefined
      ? ''
      : prose`With the paced variant's firing instead, fanin would cost ${usd(pacedTotal)} per million aggregates
        end to end, against ${usd(r.cost_per_million_aggregates_usd)} (replies
        ${r.headline_pattern}${
          together === undefined
            ? ''
            : prose`; together: ${usd(together)} against
        ${usd(r.arrival.together.cost_per_million_aggregates_usd)}`
        }). That swaps the firing only, not the
        fan-out's own calls, which depend on how requests arrive too (per aggregate,
        ${fmt(paced.arming_per_aggregate.fan_out_invocations, 2)} fan-out invocations and
        ${fmt(paced.arming_per_aggregate.timer_sends, 2)} timer sends paced, against
        ${fmt(batched.arming_per_aggregate.fan_out_invocations, 2)} and
        ${fmt(batched.arming_per_aggregate.timer_sends, 2)} batched).`,
  ]
    .filter((s) => s !== '')
    .join(' ');
}

/** A deadline in words: `1 min`, `1 h`, `1 day`, `7 days`, `30 days`. */
function deadlineText(seconds: number): string {
  if (seconds < 3_600) return `${fmt(seconds / 60, 0)} min`;
  if (seconds < 86_400) return `${fmt(seconds / 3_600, 0)} h`;
  const days = seconds / 86_400;
  return `${fmt(days, 0)} day${days === 1 ? '' : 's'}`;
}

/** The longest deadline measured and its all-in figure against the 1-minute one, for the headline. */
export function longDeadlineText(r: Results): string {
  const rows = Object.values(r.timers.by_open_seconds ?? {}).sort((a, b) => a.open_seconds - b.open_seconds);
  const longest = rows.at(-1);
  const minute = rows[0];
  if (!longest || !minute || longest === minute) return '';
  return prose` An aggregate that stays open until a deadline of ${deadlineText(longest.open_seconds)} costs
    ${usd(longest.all_in_usd_per_million)} per million all-in,
    ${fmt((longest.all_in_ratio_to_one_minute - 1) * 100, 2)} % more than with a deadline of
    ${deadlineText(minute.open_seconds)} (${fmt(longest.timer_fires, 0)} timer
    fire${longest.timer_fires === 1 ? '' : 's'} each); see "Long-lived aggregates".`;
}

/** The open-time dimension: what an aggregate that stays open until its deadline costs, by deadline. */
export function openTimeSection(r: Results): string[] {
  const rows = Object.values(r.timers.by_open_seconds ?? {}).sort((a, b) => a.open_seconds - b.open_seconds);
  if (rows.length === 0) return [];
  return [
    '### Long-lived aggregates',
    '',
    prose`What an aggregate that stays open until its deadline costs, by the deadline's length
      (\`timers.by_open_seconds\`), on the real handlers with a virtual clock: ten aggregates opened together,
      timed out by their deadline (armed at the open within SQS's 15-minute delay, else by the sweep). "fanin"
      is the timer path's own cost; "all-in" the headline's end-to-end cost plus what the deadline adds over a
      minute's.`,
    '',
    ...columns(rows, [
      ['deadline', (row) => deadlineText(row.open_seconds)],
      ...COUNTS,
      ['all-in $/M', (row) => usd(row.all_in_usd_per_million)],
      ['vs 1 min', (row) => `+${fmt((row.all_in_ratio_to_one_minute - 1) * 100, 2)} %`],
      ['Step Functions Standard', (row) => usd(row.anchors.step_functions_standard)],
      ['Lambda durable functions', (row) => usd(row.anchors.lambda_durable_functions)],
      [
        'Step Functions Express',
        (row) =>
          row.anchors.step_functions_express === null
            ? '— (5 min at most)'
            : usd(row.anchors.step_functions_express),
      ],
    ]),
    '',
    r.timers.open_time_assumptions ?? '',
    '',
    ...timerKindsSection(r),
    ...respondersSection(r),
  ];
}

/** Looking after the responders (`timers.responders`): a retry and a cancellation, per recipient. */
function respondersSection(r: Results): string[] {
  const costs = r.timers.responders;
  if (!costs) return [];
  const rows: [string, OpenTimeFigures][] = [
    ['recipient deadlines only', costs.base],
    ['+ one round of retries', costs.retry],
    ['+ cancellation notices', costs.cancellation],
  ];
  const per = costs.per_recipient;
  return [
    prose`Looking after the responders (\`timers.responders\`), per aggregate of
      ${costs.recipients_per_aggregate} silent recipients:`,
    '',
    ...columns(rows, [['case', ([name]) => name], ...NAMED_COUNTS]),
    '',
    prose`Per recipient: a retry adds ${usd(per.retry.usd_per_million)} per million
      (${fmt(per.retry.sqs_calls, 2)} SQS calls, ${fmt(per.retry.read_units, 2)} read and
      ${fmt(per.retry.write_units, 2)} write units), a cancellation ${usd(per.cancellation.usd_per_million)}
      per million (${fmt(per.cancellation.sqs_calls, 2)} SQS calls). ${r.timers.responders_assumptions ?? ''}`,
    '',
  ];
}

/** The other long timers (`timers.by_kind`): a daily snapshot over 7 days, an allowed life of 7 days. */
function timerKindsSection(r: Results): string[] {
  const kinds = Object.entries(r.timers.by_kind ?? {});
  if (kinds.length === 0) return [];
  return [
    prose`The other timers whose interval can exceed SQS's 15-minute delay, measured the same way
      (\`timers.by_kind\`); for snapshots "fanin $/M" includes the snapshots themselves.`,
    '',
    ...columns(kinds, [
      ['timer', ([kind]) => kind.replaceAll('_', ' ')],
      ['open', ([, row]) => deadlineText(row.open_seconds)],
      ...NAMED_COUNTS,
    ]),
    '',
  ];
}
