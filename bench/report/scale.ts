import { columns, fmt, prose } from './format.ts';
import type { Results } from './schema.ts';

/** The scale curve: fanin against the naive baseline from fan-out 10 up, with the chart. */
export function scaleSection(r: Results, svgName: string): string[] {
  return [
    '## Scale curve',
    '',
    `![write units per reply vs fan-out](${svgName})`,
    '',
    prose`Write units per reply at each fan-out, small replies (a score and an id), fanin through its real
      handlers, the naive baseline (\`bench/workload/naive-baseline.ts\`: one item per aggregate holding every
      reply, one conditional \`UpdateItem\` per reply) on the same replies against the same DynamoDB Local.
      DynamoDB bills an update by the larger of the item before and after, so each naive reply pays for every
      reply before it: its cost per reply grows linearly with the fan-out (what fanin pays per reply should
      not), and the item would stop at 400 KB.`,
    '',
    ...columns(r.scale, [
      ['fan-out', (p) => fmt(p.fan_out, 0)],
      ['aggregates', (p) => String(p.aggregates)],
      ['fanin all-in', (p) => fmt(p.fanin.write_units_per_reply, 3)],
      ['fanin recording', (p) => fmt(p.fanin.recording_write_units_per_reply, 3)],
      ['fanin index', (p) => fmt(p.fanin.index_write_units_per_reply, 3)],
      ['fanin read', (p) => fmt(p.fanin.read_units_per_reply, 3)],
      [
        'baseline all-in',
        (p) => `${fmt(p.baseline.write_units_per_reply, 3)}${p.baseline.method === 'replayed' ? '' : ' *'}`,
      ],
      ['baseline recording', (p) => fmt(p.baseline.recording_write_units_per_reply, 3)],
      ['ratio', (p) => `${fmt(p.ratio, 2)}×`],
      ['fanin replies/s', (p) => fmt(p.fanin.replies_per_second, 1)],
      ['baseline replies/s', (p) => fmt(p.baseline.replies_per_second, 1)],
    ]),
    '',
    ...sampledNote(r),
    prose`Fitted over the curve, an aggregate costs **${fmt(r.write_units_fit.per_reply, 3)} write units per
      reply + ${fmt(r.write_units_fit.per_aggregate, 1)} per aggregate** (small replies): the per-reply part
      does not depend on the fan-out.`,
    '',
    prose`"All-in" is every write unit of the aggregate's life over its replies; "recording" only the reply
      handler's writes that record replies (a transaction per batch, or a conditional put per reply; for the
      baseline, its per-reply updates).`,
    '',
  ];
}

/** How a sampled baseline point is measured. */
const SAMPLING = prose`\`sampleNaive\` (\`bench/workload/naive-baseline.ts\`) writes the item as it stands before
  reply k and measures the real update of reply k; the replies in between are interpolated`;

/** The footnote of the sampled baseline points, with the check of the sampling against a replay. */
function sampledNote(r: Results): string[] {
  const sampled = r.scale.filter((p) => p.baseline.method !== 'replayed');
  const check = r.baseline_sampling_check;
  if (sampled.length === 0) {
    return check
      ? [
          prose`Every baseline point here was replayed reply by
            reply${r.command.includes('--replay-baseline') ? ' (`--replay-baseline`)' : ''}. The sampling a
            default run uses above fan-out 1,000 gives ${fmt(check.sampled_write_units_per_reply, 3)} write units
            per reply at fan-out ${fmt(check.fan_out, 0)} (${check.positions} positions) against
            ${fmt(check.replayed_write_units_per_reply, 3)} replayed: ${SAMPLING}.`,
          '',
        ]
      : [];
  }
  return [
    prose`\\* Replaying ${sampled.map((p) => fmt(p.fan_out, 0)).join(', ')} naive updates one by one takes
      DynamoDB Local tens of minutes (each rewrites an item of up to ~300 KB), so there the baseline is
      ${sampled[0]?.baseline.method}: ${SAMPLING}.${
        check
          ? prose` Checked at fan-out ${fmt(check.fan_out, 0)}, where both are run: replayed
          ${fmt(check.replayed_write_units_per_reply, 3)}, sampled at ${check.positions} positions
          ${fmt(check.sampled_write_units_per_reply, 3)} write units per reply. \`npm run bench --
          --replay-baseline\` replays every fan-out.`
          : ''
      }`,
    '',
  ];
}
