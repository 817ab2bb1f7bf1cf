import { alignedDrain, drained, perReceive, settingText, straddled } from './arrival.ts';
import { fmt, prose, secs, table, usd } from './format.ts';
import type { Results } from './schema.ts';
import { openTimeSection, timerVariantsText } from './timers.ts';

/** Cost per million aggregates: fanin against Step Functions and the naive baseline, then the fixed costs. */
export function costSection(r: Results): string[] {
  const c = r.cost;
  const sfn = c.step_functions_standard;
  const usage = c.fanin.usage_per_aggregate;
  return [
    '## Cost per million aggregates',
    '',
    prose`Scenario: ${c.scenario}. Prices: \`bench/prices.json\` (${c.region}, taken ${c.prices_taken}, no free
      tier). Usage is counted in the headline run and divided by its aggregates; the deadline timer's firing
      is measured in a separate phase (${r.timers.fired} timers${
        r.timers.used
          ? prose` of its ${r.timers.used}
      variant, whose requests are sent as the headline's are`
          : ''
      }) and added.`,
    '',
    ...billTable(r),
    '',
    prose`The naive baseline stores reply bodies as fanin does (Brotli when smaller,
      ${fmt(r.headline.stored_payload_bytes ?? Number.NaN, 0)} of ${fmt(r.headline.reply_bytes, 0)} bytes on
      average), one update per reply whatever the batch. It is a floor, not a design that could ship: **it
      does not survive a crash during completion** (no claim, member set, lease, deadline timer, late-reply
      routing or tombstone, all of which fanin pays for).`,
    '',
    prose`fanin per aggregate: ${fmt(usage.write_units, 1)} write units, ${fmt(usage.read_units, 1)} read units,
      ${fmt(usage.sqs_standard, 2)} standard and ${fmt(usage.sqs_fifo, 2)} FIFO SQS requests,
      ${fmt(usage.invocations, 2)} Lambda invocations of
      ~${fmt(usage.lambda_ms / Math.max(usage.invocations, 1e-9), 0)} ms estimated (512 MB, arm64: the CDK
      construct's defaults; duration from the calls counted, at 8 ms per DynamoDB and 12 ms per SQS call —
      see \`prices.json\`). Of that, the deadline timer firing adds
      ${fmt(c.fanin.timer_firing_usage.sqs_standard, 2)} SQS requests,
      ${fmt(c.fanin.timer_firing_usage.invocations, 2)} invocations and
      ${fmt(c.fanin.timer_firing_usage.read_units, 2)} read units${
        c.fanin.timer_firing_usage_paced
          ? prose`
      (with requests paced one at a time: ${fmt(c.fanin.timer_firing_usage_paced.sqs_standard, 2)},
      ${fmt(c.fanin.timer_firing_usage_paced.invocations, 2)} and
      ${fmt(c.fanin.timer_firing_usage_paced.read_units, 2)})`
          : ''
      }.`,
    '',
    ...(timerVariantsText(r) ? [timerVariantsText(r), ''] : []),
    ...openTimeSection(r),
    prose`Step Functions Standard is counted at ${sfn.transitions_per_aggregate} state transitions per aggregate
      at $0.025 per 1,000 (a Map of \`.waitForTaskToken\` SQS tasks, no timeout handling: a lower bound), plus
      one SendMessage per branch and one for the result. The transitions alone cost
      ${usd(sfn.orchestration_per_million.step_functions)} per million aggregates.`,
    '',
    ...expressSection(r),
    ...fixedSection(r),
  ];
}

/** fanin's bill and Step Functions' by service, end to end, and the naive baseline's. */
function billTable(r: Results): string[] {
  const c = r.cost;
  const sfn = c.step_functions_standard;
  type Bill = typeof sfn.clients_per_million;
  // A service the side does not use is a dash.
  const bill = (label: string, b: Bill, ...services: (keyof Bill)[]) => [
    label,
    ...SERVICES.map((k) => (services.includes(k) ? usd(b[k]) : '—')),
    usd(b.total),
  ];
  const total = (label: string, n: number) => [label, '', '', '', '', `**${usd(n)}**`];
  const naive = usd(c.naive_baseline_dynamodb.per_million_aggregates);
  const own = c.fanin.per_million_aggregates;
  return table(
    ['', 'DynamoDB', 'SQS', 'Lambda', 'Step Functions', 'total'],
    [
      bill('fanin (handlers, event source polling)', own, 'dynamodb', 'sqs', 'lambda'),
      bill("fanin's clients (producer, responders, consumer)", c.fanin_clients.per_million_aggregates, 'sqs'),
      total('**fanin, end to end**', c.fanin_total_per_million),
      bill('Step Functions Standard, orchestration', sfn.orchestration_per_million, 'sqs', 'step_functions'),
      bill("Step Functions' clients", sfn.clients_per_million, 'sqs'),
      total('**Step Functions Standard, end to end**', sfn.total_per_million),
      ['naive baseline, DynamoDB alone', naive, '', '', '', ''],
    ],
  );
}

const SERVICES = ['dynamodb', 'sqs', 'lambda', 'step_functions'] as const;

/** When Step Functions Express is the cheaper pick, with the figure; and the floor of any design. */
function expressSection(r: Results): string[] {
  const e = r.cost.step_functions_express;
  const breakEven = e.cheaper_than_fanin_below_seconds;
  const floor = r.cost.reply_floor_per_million;
  return [
    prose`**The floor of any design.** Each reply is one SQS message sent, received and deleted in a batch, and
      made durable in DynamoDB; those alone cost ${usd(floor.one_reply_per_batch)} per million aggregates with
      one reply per batch and its own 1 KB write unit, ${usd(floor.ten_replies_per_batch)} with batches of
      ten${
        floor.packed_one_message_per_receive !== undefined &&
        floor.packed_full_receives !== undefined &&
        floor.packed_write_units_per_reply !== undefined
          ? prose`; an aggregate's ten replies in one batch and one pack
            (${fmt(floor.packed_write_units_per_reply, 2)} write units per reply):
            ${usd(floor.packed_one_message_per_receive)} with one message per receive,
            ${usd(floor.packed_full_receives)} with ten`
          : ''
      } (\`replyFloorPerMillion\`, \`bench/cost/floor.ts\`). fanin's figures above are such a floor plus the
      aggregate's own work.${drainFloorText(r)}`,
    '',
    prose`**When Step Functions Express is cheaper.** Express bills $1.00 per million executions plus its
      duration at 64 MB, runs at most five minutes and needs synchronous responders; one aggregate is one
      execution as long as its slowest responder:
      ${e.per_million_by_answer_seconds
        .map((x) => `${usd(x.per_million_usd)} per million at ${fmt(x.seconds, 1)} s`)
        .join(', ')}. ${
        breakEven > 0
          ? prose`Against fanin's ${usd(r.cost_per_million_aggregates_usd)} (replies ${r.headline_pattern}),
            **Express is the cheaper pick whenever responders are synchronous and the slowest answers within
            ${fmt(breakEven, 1)} s**`
          : 'Express is cheaper than fanin at any answer time up to its five-minute limit'
      }; fanin is the pick for asynchronous or slower responders, or for its completion strategies,
      late-reply routing and partitions.`,
    '',
  ];
}

/** Fixed monthly costs, priced as README's "What it costs at rest" and checked against it. */
function fixedSection(r: Results): string[] {
  const f = r.cost.fixed_monthly;
  const agree =
    f.readme_total_usd === null
      ? "README's total was not found to compare."
      : Math.abs(f.readme_total_usd - f.total_usd) <= 0.05
        ? prose`README ("What it costs at rest") states ≈ ${usd(f.readme_total_usd)}: the same items at the same
          prices, so the two agree.`
        : prose`**README ("What it costs at rest") states ≈ ${usd(f.readme_total_usd)}, which no longer agrees
          with ${usd(f.total_usd)} here: one of them needs updating.**`;
  return [
    prose`Fixed costs a month, whatever the number of aggregates (an idle deployment with ${f.reply_partitions}
      reply partitions, priced from \`bench/prices.json\` by \`fixedMonthly\` in \`bench/cost/fixed.ts\`):`,
    '',
    ...table(
      ['item', 'how much', 'per month'],
      [...f.items.map((i) => [i.item, i.how, usd(i.usd)]), ['**total**', '', `**${usd(f.total_usd)}**`]],
    ),
    '',
    prose`${agree} The per-aggregate figures above leave these out (the empty receives of idle polling are
      excluded from every per-reply count); at a million aggregates a month they add ${usd(f.total_usd)} to
      the bill.`,
    '',
  ];
}

/** Whether a drain reached full receives where an event source did not, at the same offered rate. */
function drainFloorText(r: Results): string {
  const floor = r.cost.reply_floor_per_million.packed_full_receives;
  const rows = r.arrival[r.headline_pattern].by_batching;
  const base = rows[0];
  const drain = rows.find(alignedDrain);
  if (floor === undefined || !base || !drain || drained(base)) return '';
  // Full receives: about ten messages each for the drain, about one for the event source.
  if (perReceive(drain.reply_receives_per_reply) < 8 || perReceive(base.reply_receives_per_reply) > 2)
    return '';
  // The same setting with a drain in the middle of the sending, if it received far fewer per receive.
  const followed = rows.find(
    (b) =>
      straddled(b) &&
      b.drain_interval_seconds === drain.drain_interval_seconds &&
      perReceive(b.reply_receives_per_reply) < perReceive(drain.reply_receives_per_reply) / 2,
  );
  return prose` Measured with replies ${r.headline_pattern}: the topology's event source received
    ${fmt(perReceive(base.reply_receives_per_reply), 1)} per receive, ${settingText(drain)}
    ${fmt(perReceive(drain.reply_receives_per_reply), 1)} with ${fmt(drain.replies_per_aggregate_per_batch, 2)}
    replies of one aggregate per batch: a drain reaches the full-receive floor at any load, at the price of
    latency (p50 ${secs(drain.completion_latency_ms.p50)})${
      followed
        ? prose`, while it finds a backlog rather than a stream (one in the middle of the sending received
          ${fmt(perReceive(followed.reply_receives_per_reply), 1)} per receive)`
        : ''
    }; ${usd(drain.cost_per_million_aggregates_usd)} per million aggregates end to end.`;
}
