import type { Results, TimerVariantFigures } from '../schema.ts';
import { fmt, usd } from './format.ts';

/** What one timer variant's firing took per aggregate: `receives 0.1, deletes 0.1, timer invocations 0.1 (…)`. */
function firing(v: TimerVariantFigures): string {
  const f = v.firing_per_aggregate;
  return `receives ${fmt(f.receives, 2)}, deletes ${fmt(f.deletes, 2)}, timer invocations ${fmt(f.invocations, 2)}, timers per invocation ${fmt(f.records_per_invocation, 1)}`;
}

/** Timers that fired before their aggregates were complete (outside the window), when any did. */
function early(v: TimerVariantFigures): string {
  return v.fired_early > 0
    ? `; ${v.fired_early} fired before their aggregates' run was over and are not counted`
    : '';
}

/**
 * The deadline timer's firing in the two variants measured (`timers.batched` and `timers.paced`):
 * what each took per aggregate, which one the all-in figures include, and what fanin would cost end
 * to end with the other. Empty for results older than the variants.
 */
export function timerVariantsText(r: Results): string {
  const { batched, paced } = r.timers;
  if (!batched || !paced) return '';
  const together = r.arrival.together?.cost_per_million_aggregates_usd_timers_paced;
  const pacedTotal = r.cost.fanin_total_per_million_timers_paced;
  return [
    `The deadline timer's firing is measured apart, in two variants of ${fmt(batched.aggregates, 0)} aggregates each (\`timers\` in the JSON).`,
    `With requests sent as the arrival phases send them, all at once in \`SendMessageBatch\`es of ten, the fan-out armed the deadlines with ${fmt(batched.arming_per_aggregate.timer_sends, 2)} timer sends per aggregate, and their firing took, per aggregate, ${firing(batched)}${early(batched)}: the variant every arrival pattern's all-in figures include, since their requests arrive that way.`,
    `With requests paced one at a time (${fmt(paced.requests_per_second, 0)}/s), the fan-out armed them with ${fmt(paced.arming_per_aggregate.timer_sends, 2)} timer sends per aggregate, and their firing took ${firing(paced)}${early(paced)}.`,
    pacedTotal === undefined
      ? ''
      : `With the paced variant's firing instead, fanin would cost ${usd(pacedTotal)} per million aggregates end to end, against ${usd(r.cost_per_million_aggregates_usd)} (replies ${r.headline_pattern}${together === undefined ? '' : `; together: ${usd(together)} against ${usd(r.arrival.together.cost_per_million_aggregates_usd)}`}). That swaps the firing only, not the fan-out's own calls, which depend on how requests arrive too (per aggregate, ${fmt(paced.arming_per_aggregate.fan_out_invocations, 2)} fan-out invocations and ${fmt(paced.arming_per_aggregate.timer_sends, 2)} timer sends paced, against ${fmt(batched.arming_per_aggregate.fan_out_invocations, 2)} and ${fmt(batched.arming_per_aggregate.timer_sends, 2)} batched).`,
  ]
    .filter((s) => s !== '')
    .join(' ');
}
