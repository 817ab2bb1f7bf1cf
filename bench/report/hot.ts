import { columns, fmt, prose, table } from './format.ts';
import type { Results } from './schema.ts';

type Hot = Results['hot_aggregate'];
type HotRun = Hot['measured'];
const DOC = '[docs/hot-aggregates.md](../../docs/hot-aggregates.md)';

/** The hot-aggregate section: both layouts as measured, then the AWS model. */
export function hotSection(r: Results): string[] {
  const { measured: m, sharded: s } = r.hot_aggregate;
  return [
    '## Hot aggregate',
    '',
    prose`One aggregate (fan-out \`none\`, strategy \`all\`, expected ${fmt(m.replies, 0)}) receiving
      ${fmt(m.replies, 0)} small replies from 4 concurrent batch senders to its reply partition, through the
      real reply handler, once per layout: \`${m.definition}\` (\`writeShards: ${m.write_shards}\`, the default)
      and \`${s.definition}\` (\`writeShards: ${s.write_shards}\`: the state store spreads the reply items over
      ${s.write_shards} partition keys). A reply is one conditional \`PutItem\` of its own item: no transaction,
      no header write per reply. See ${DOC}.`,
    '',
    ...table(
      ['figure', `writeShards ${m.write_shards}`, `writeShards ${s.write_shards}`, 'what it is'],
      hotRows(r.hot_aggregate).map(([label, cell, what]) => [label, cell(m), cell(s), what]),
    ),
    '',
    ...modelSection(r.hot_aggregate),
  ];
}

/** Units per key (`shard 0`, `counter 0`, `shard 1`…) in key order, each shard before its counter. */
const byKey = (units: Readonly<Record<string, number>>) => {
  const order = (key: string) => Number(key.split(' ')[1]) * 2 + (key.startsWith('shard') ? 0 : 1);
  return Object.entries(units)
    .sort(([a], [b]) => order(a) - order(b))
    .map(([, n]) => fmt(n, 0))
    .join(' · ');
};

/** DynamoDB calls per invocation that were made: `GetItem 2, PutItem 1.25`. */
const callsText = (m: HotRun) =>
  Object.entries(m.calls_per_invocation)
    .filter(([, n]) => n > 0)
    .map(([op, n]) => `${op} ${fmt(n, 2)}`)
    .join(', ');

/** The measured table's rows: a label, a cell per layout, what the figure is. */
function hotRows(h: Hot): (readonly [label: string, cell: (m: HotRun) => string, what: string])[] {
  const replyShares = [h.measured, h.sharded].map((m) => `${fmt(m.busiest_key_reply_share * 100, 1)} %`);
  return [
    [
      'write units per reply',
      (m) =>
        `${fmt(m.write_units_per_reply, 3)} all-in, ${fmt(m.recording_write_units_per_reply, 3)} recording`,
      prose`recording: the reply \`PutItem\`s; all-in adds the completion trigger, the seal and the close (and
        their index entries).`,
    ],
    [
      'other writes on the header key, per reply',
      (m) => fmt(m.header_key_other_write_units_per_reply, 3),
      prose`table units on \`A#<id>\` besides the reply puts: above 128 expected replies with no index ids, a
        counter update per batch triggers the completion read (\`addToCounter\`), plus the seal and the
        close once.`,
    ],
    [
      'read units per reply',
      (
        m,
      ) => prose`${fmt(m.read_units_per_reply, 3)} (header ${fmt(m.header_read_units_per_reply, 3)}, reply set
        ${fmt(m.set_read_units_per_reply, 3)})`,
      prose`consistent reads: the header before and after the puts (\`GetItem\`), the reply set once the counter
        says it can be complete (\`Query\`, one per shard).`,
    ],
    [
      'recording transactions',
      (m) => fmt(m.transactions, 0),
      '`TransactWriteItems` by the reply handler: none, so no transaction conflict.',
    ],
    [
      'replies per invocation',
      (m) => `${fmt(m.replies_per_invocation, 2)} (${fmt(m.invocations, 0)} invocations; ${callsText(m)})`,
      prose`Lambda-style batches of up to 10 records, batching window ${h.measured.batching_window_seconds}
        s; DynamoDB calls per invocation.`,
    ],
    [
      'write units by partition key',
      (m) => byKey(m.units_by_key),
      "table units on each key of the aggregate, shard 0 (the header's key `A#<id>`) first.",
    ],
    [
      'busiest key share of the write units',
      (m) => `**${fmt(m.busiest_key_share * 100, 1)} %** (${m.busiest_key})`,
      prose`what a per-key limit divides; of the reply puts alone the busiest key took ${replyShares.join(' and ')}
        (ids in blocks of 32 per shard).`,
    ],
    [
      'write units per reply on the busiest key',
      (m) => fmt(m.busiest_key_write_units_per_reply, 3),
      '1,000 per second per key divided by this is the write bound.',
    ],
    [
      'read units by partition key',
      (m) => byKey(m.read_units_by_key),
      prose`consistent and eventually consistent reads on each key, shard 0 first: the header before and after
        the puts, the other shards' counters, the reply set once.`,
    ],
    [
      'read units per reply on the key read most',
      (m) => fmt(m.busiest_key_read_units_per_reply, 3),
      '3,000 per second per key divided by this is the read bound.',
    ],
    [
      'DynamoDB round trips per invocation',
      (m) => fmt(m.round_trips_per_invocation, 2),
      "measured: calls made in parallel (a batch's puts, the other shards' counters) count once.",
    ],
    [
      'replies per second (emulator)',
      (m) => fmt(m.replies_per_second, 0),
      'first reply sent to result visible; the emulator enforces no per-key limit.',
    ],
    ['outcome', (m) => m.outcome, ''],
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
