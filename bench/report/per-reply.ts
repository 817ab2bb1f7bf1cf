import { fmt, listed, prose, table } from './format.ts';
import type { Results } from './schema.ts';

/** SQS calls by who, operation and queue: `esm ReceiveMessage · timer 0.01, …`. */
const calls = (byOperation: Readonly<Record<string, number>>): string =>
  listed(byOperation).replaceAll('|', ' · ') || 'nothing';

const EMPTY_RECEIVES = prose`empty long-poll receives during the run are left out of every per-reply figure:
  they measure how long the pollers idled, not the work.`;

/** DynamoDB units and calls per reply, by who and operation. */
function dynamoTable(h: Results['headline']['per_reply']): string[] {
  const ops = Object.keys({
    ...h.write_units_by_operation,
    ...h.read_units_by_operation,
    ...h.dynamodb_calls_by_operation,
  }).sort();
  return table(
    ['who · operation', 'write units / reply', 'read units / reply', 'calls / reply'],
    ops.map((k) => [
      k,
      fmt(h.write_units_by_operation[k], 3),
      fmt(h.read_units_by_operation[k], 3),
      fmt(h.dynamodb_calls_by_operation[k], 3),
    ]),
  );
}

/** The headline run per reply: DynamoDB units and calls by handler and operation, SQS calls, invocations. */
export function perReplySection(r: Results): string[] {
  const h = r.headline.per_reply;
  return [
    `## Per reply, headline run (fan-out 10, 1 KB replies, ${r.headline_pattern})`,
    '',
    prose`Write units per reply: **${fmt(h.write_units, 3)}** (of which ${fmt(h.index_write_units, 3)} on
      secondary indexes); read units per reply: **${fmt(h.read_units, 3)}**.
      ${
        (h.write_units_by_operation['fanin:reply TransactWriteItems'] ?? 0) > 0
          ? prose`DynamoDB Local reported
      ${fmt(h.emulator_reported_transaction_write_units, 3)} units per reply for the transactions, which it
      undercounts (see "How units are counted"); the figures here apply DynamoDB's rules to the items
      written.`
          : 'The figures apply DynamoDB\'s rules to the items written (see "How units are counted").'
      }`,
    '',
    ...dynamoTable(h),
    '',
    prose`SQS calls per reply, by who makes them (\`esm\` is Lambda's event source mapping; \`clients\` are the
      producer, the responders and the result consumer; the last word is the queue):`,
    '',
    ...table(
      ['who · operation · queue', 'calls / reply'],
      Object.entries(h.sqs_calls_by_operation).map(([k, v]) => [k.replaceAll('|', ' · '), fmt(v, 4)]),
    ),
    '',
    `The deadline timer's firing adds, per reply: ${calls(h.timer_firing_sqs_calls_by_operation)} (${
      r.timers.used === 'batched'
        ? 'the batched variant: requests sent in batches of ten, as in this run; '
        : ''
    }in the all-in figures, not in this table).${
      h.timer_firing_sqs_calls_by_operation_paced
        ? prose` With requests paced one at a time, it measured
          ${calls(h.timer_firing_sqs_calls_by_operation_paced)} (see "Cost per million aggregates").`
        : ''
    }`,
    '',
    prose`Handler invocations per reply: ${listed(h.handler_invocations)} (records per invocation:
      ${listed(h.records_per_invocation, 1)}). ${fmt(h.empty_receives_excluded, 0)} ${EMPTY_RECEIVES}`,
    '',
    ...whereTheUnitsGo(r),
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
    `Where the write units of the headline run go (${fmt(all, 3)} per reply${
      bytes === undefined
        ? ''
        : prose`;
      each ${fmt(r.headline.reply_bytes, 0)}-byte JSON body is stored compressed in ${fmt(bytes, 0)} bytes
      on average, so a reply item fits one write unit`
    }):`,
    '',
    ...parts.map(([k, v]) => `- ${k}: ${fmt(v, 3)} per reply, ${fmt((100 * v) / all, 0)} %;`),
    `- of all of it, secondary-index writes: ${fmt(h.index_write_units, 3)} per reply.`,
    '',
  ];
}
