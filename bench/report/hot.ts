import { columns, fmt, prose, table } from './format.ts';
import type { Results } from './schema.ts';

/** The hot-aggregate section: both layouts as measured, then the AWS model. */
export function hotSection(r: Results): string[] {
  const h = r.hot_aggregate;
  return [
    '## Hot aggregate',
    '',
    prose`One aggregate (fan-out \`none\`, strategy \`all\`, expected ${fmt(h.measured.replies, 0)}) receiving
      ${fmt(h.measured.replies, 0)} small replies from 4 concurrent batch senders to its reply partition,
      through the real reply handler, once per layout: \`${h.measured.definition}\` (\`writeShards:
      ${h.measured.write_shards}\`, the default) and \`${h.sharded.definition}\` (\`writeShards:
      ${h.sharded.write_shards}\`: the state store spreads the reply items over ${h.sharded.write_shards}
      partition keys). A reply is one conditional \`PutItem\` of its own item: no transaction, no header
      write per reply. See [docs/hot-aggregates.md](../../docs/hot-aggregates.md).`,
    '',
    ...table(
      [
        'figure',
        `writeShards ${h.measured.write_shards}`,
        `writeShards ${h.sharded.write_shards}`,
        'what it is',
      ],
      [...hotRows(h, writeRows), ...hotRows(h, otherRows)],
    ),
    '',
    ...modelSection(h),
  ];
}

type Hot = Results['hot_aggregate'];
type HotRun = Hot['measured'];
/** One row of the measured table: a label, a cell per layout, what the figure is. */
type HotRow = readonly [label: string, cell: (m: HotRun) => string, what: string];

function hotRows(h: Hot, rows: (h: Hot) => readonly HotRow[]): string[][] {
  return rows(h).map(([label, cell, what]) => [label, ...[h.measured, h.sharded].map(cell), what]);
}

/** Units per key (`shard 0`, `counter 0`, `shard 1`…) in key order, each shard before its counter. */
const byKey = (units: Readonly<Record<string, number>>) => {
  const order = (key: string) => Number(key.split(' ')[1]) * 2 + (key.startsWith('shard') ? 0 : 1);
  return Object.entries(units)
    .sort(([a], [b]) => order(a) - order(b))
    .map(([, n]) => fmt(n, 0))
    .join(' · ');
};

const row = (label: string, cell: (m: HotRun) => string, what: string): HotRow => [label, cell, what];

/** Units per reply and on the header key. */
function writeRows(h: Hot): HotRow[] {
  return [
    row(
      'write units per reply',
      (m) =>
        `${fmt(m.write_units_per_reply, 3)} all-in, ${fmt(m.recording_write_units_per_reply, 3)} recording`,
      prose`recording: the reply \`PutItem\`s; all-in adds the completion trigger, the seal and the close (and
        their index entries).`,
    ),
    row(
      'other writes on the header key, per reply',
      (m) => fmt(m.header_key_other_write_units_per_reply, 3),
      prose`table units on \`A#<id>\` besides the reply puts: above 128 expected replies with no index ids, a
        counter update per batch triggers the completion read (\`addToCounter\`), plus the seal and the
        close once.`,
    ),
    row(
      'read units per reply',
      (m) =>
        prose`${fmt(m.read_units_per_reply, 3)} (header ${fmt(m.header_read_units_per_reply, 3)}, reply set
          ${fmt(m.set_read_units_per_reply, 3)})`,
      prose`consistent reads: the header before and after the puts (\`GetItem\`), the reply set once the counter
        says it can be complete (\`Query\`, one per shard).`,
    ),
    row(
      'recording transactions',
      (m) => fmt(m.transactions, 0),
      '`TransactWriteItems` by the reply handler: none, so no transaction conflict.',
    ),
    row(
      'replies per invocation',
      (m) =>
        `${fmt(m.replies_per_invocation, 2)} (${fmt(m.invocations, 0)} invocations; ${Object.entries(
          m.calls_per_invocation,
        )
          .filter(([, n]) => n > 0)
          .map(([op, n]) => `${op} ${fmt(n, 2)}`)
          .join(', ')})`,
      prose`Lambda-style batches of up to 10 records, batching window ${h.measured.batching_window_seconds}
        s; DynamoDB calls per invocation.`,
    ),
  ];
}

/** Invocations, keys, reads and rates. */
function otherRows(h: Hot): HotRow[] {
  const runs = [h.measured, h.sharded];
  return [
    row(
      'write units by partition key',
      (m) => byKey(m.units_by_key),
      "table units on each key of the aggregate, shard 0 (the header's key `A#<id>`) first.",
    ),
    row(
      'busiest key share of the write units',
      (m) => `**${fmt(m.busiest_key_share * 100, 1)} %** (${m.busiest_key})`,
      'what a per-key limit divides; of the reply puts alone the busiest key took ' +
        runs.map((m) => `${fmt(m.busiest_key_reply_share * 100, 1)} %`).join(' and ') +
        ' (ids in blocks of 32 per shard).',
    ),
    row(
      'write units per reply on the busiest key',
      (m) => fmt(m.busiest_key_write_units_per_reply, 3),
      '1,000 per second per key divided by this is the write bound.',
    ),
    row(
      'read units by partition key',
      (m) => byKey(m.read_units_by_key),
      prose`consistent and eventually consistent reads on each key, shard 0 first: the header before and after
        the puts, the other shards' counters, the reply set once.`,
    ),
    row(
      'read units per reply on the key read most',
      (m) => fmt(m.busiest_key_read_units_per_reply, 3),
      '3,000 per second per key divided by this is the read bound.',
    ),
    row(
      'DynamoDB round trips per invocation',
      (m) => fmt(m.round_trips_per_invocation, 2),
      "measured: calls made in parallel (a batch's puts, the other shards' counters) count once.",
    ),
    row(
      'replies per second (emulator)',
      (m) => fmt(m.replies_per_second, 0),
      'first reply sent to result visible; the emulator enforces no per-key limit.',
    ),
    row('outcome', (m) => m.outcome, ''),
  ];
}

/** The AWS model: per-key limits, the bounds and the simulation of several layouts. */
function modelSection(h: Hot): string[] {
  const l = h.aws_limits;
  return [
    prose`On AWS, by calculation and simulation from the measured figures:
      ${fmt(l.key_write_units_per_second, 0)} write units/s and ${fmt(l.key_read_units_per_second, 0)} read
      units/s per partition key (no split for heat assumed), ${l.call_ms} ms per DynamoDB round trip (as
      measured per invocation above), ${l.overhead_ms} ms per invocation besides; a throttled put retried in
      place up to ${l.throttle_retries} times after random × min(1 s, 20·2^attempt ms), then failed back to
      SQS for ${l.visibility_timeout_seconds} s. The write and read bounds divide the per-key limits by the
      units measured on the busiest key (writes) and on the key read most (reads). 100,000 replies simulated
      (token bucket per key, empty at the start, so the rate is the steady state):`,
    '',
    ...columns(h.model, [
      ['layout', (m) => m.design.name],
      ['write units / reply on the busiest key', (m) => fmt(m.bounds.busiest_key_write_units_per_reply, 3)],
      ['write bound', (m) => fmt(m.bounds.write_bound, 0)],
      ['read bound', (m) => fmt(m.bounds.read_bound, 0)],
      ['consumer bound', (m) => fmt(m.bounds.consumer_bound, 0)],
      ['bound (replies/s)', (m) => `**${fmt(m.bounds.bound, 0)}**`],
      ['binding limit', (m) => m.bounds.binding_constraint],
      ['simulated, sustained (DynamoDB)', (m) => fmt(m.simulation.sustained_replies_per_second, 0)],
      ['throttled puts', (m) => fmt(m.simulation.throttles, 0)],
      ['failed back to SQS', (m) => fmt(m.simulation.redeliveries, 0)],
    ]),
    '',
    prose`The consumer bound is the reply partition's invocations (\`replyConcurrency\` × batch per invocation
      time): at the default concurrency (5) it binds a sharded aggregate before its keys do;
      \`replyConcurrency\` lifts it, \`writeShards\` the keys' (the simulation models the keys only):
      [docs/hot-aggregates.md](../../docs/hot-aggregates.md#the-limits-it-meets-on-aws). The last row is the
      reply puts alone: what the completion trigger's counter update per batch takes from the busiest key.`,
    '',
  ];
}
