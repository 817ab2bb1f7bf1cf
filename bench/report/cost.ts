import { alignedDrain, drained, settingText, straddled } from './arrival.ts';
import { fmt, prose, table, usd } from './format.ts';
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
    prose`The naive baseline stores reply bodies as fanin does (\`encodePayload\` of
      \`shared/adapters/payload-codec.ts\`: Brotli when smaller,
      ${fmt(r.headline.stored_payload_bytes ?? Number.NaN, 0)} of ${fmt(r.headline.reply_bytes, 0)} bytes on
      average), and its cost does not depend on how replies arrive (one update per reply whatever the
      batch). It is a floor, not a design that could ship: **it does not survive a crash during
      completion**. Only the invocation whose update made the count reach the fan-out completes; stopped
      before it closes the item, nobody completes (the result is lost and the aggregate stays open); a retry
      that re-ran completion on finding the item full would emit a second result when the first invocation
      was only slow (a duplicate). It has no claim, no member set, no lease, no deadline timer, no
      late-reply routing and no tombstone, all of which fanin pays for.`,
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
      (a Map state, one \`.waitForTaskToken\` SQS task per branch, a Pass state to aggregate, an SQS task
      for the result) at $0.025 per 1,000, plus one SendMessage per branch and one for the result;
      responders answer with SendTaskSuccess (not billed) instead of a reply message. That machine has no
      timeout handling, so it is a lower bound. The transitions alone cost
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
  return table(
    ['', 'DynamoDB', 'SQS', 'Lambda', 'Step Functions', 'total'],
    [
      [
        'fanin (handlers, event source polling)',
        usd(c.fanin.per_million_aggregates.dynamodb),
        usd(c.fanin.per_million_aggregates.sqs),
        usd(c.fanin.per_million_aggregates.lambda),
        '—',
        usd(c.fanin.per_million_aggregates.total),
      ],
      [
        "fanin's clients (producer, responders, consumer)",
        '—',
        usd(c.fanin_clients.per_million_aggregates.sqs),
        '—',
        '—',
        usd(c.fanin_clients.per_million_aggregates.total),
      ],
      ['**fanin, end to end**', '', '', '', '', `**${usd(c.fanin_total_per_million)}**`],
      [
        'Step Functions Standard, orchestration',
        '—',
        usd(sfn.orchestration_per_million.sqs),
        '—',
        usd(sfn.orchestration_per_million.step_functions),
        usd(sfn.orchestration_per_million.total),
      ],
      [
        "Step Functions' clients",
        '—',
        usd(sfn.clients_per_million.sqs),
        '—',
        '—',
        usd(sfn.clients_per_million.total),
      ],
      ['**Step Functions Standard, end to end**', '', '', '', '', `**${usd(sfn.total_per_million)}**`],
      [
        'naive baseline, DynamoDB alone',
        usd(c.naive_baseline_dynamodb.per_million_aggregates),
        '',
        '',
        '',
        '',
      ],
    ],
  );
}

/** When Step Functions Express is the cheaper pick, with the figure; and the floor of any design. */
function expressSection(r: Results): string[] {
  const e = r.cost.step_functions_express;
  const breakEven = e.cheaper_than_fanin_below_seconds;
  const floor = r.cost.reply_floor_per_million;
  return [
    prose`**The floor of any design.** Whatever the state protocol, each of an aggregate's ten replies is one SQS
      message its responder sends, that a Lambda event source receives and deletes in a batch, and that
      DynamoDB makes durable before it is acknowledged. Those alone, and nothing else (no read, no Lambda
      duration, no request, fan-out, completion or result), cost ${usd(floor.one_reply_per_batch)} per
      million aggregates when each batch holds one reply and each reply is its own 1 KB write unit — as when
      replies arrive independently at a rate the consumers keep up with, with no batching window — and
      ${usd(floor.ten_replies_per_batch)} when batches hold
      ten.${
        floor.packed_one_message_per_receive !== undefined &&
        floor.packed_full_receives !== undefined &&
        floor.packed_write_units_per_reply !== undefined
          ? prose`
      When a window gathers an aggregate's ten replies into one batch and one pack
      (${fmt(floor.packed_write_units_per_reply, 2)} write units per reply as fanin stores ten kilobyte
      replies together), the floor is ${usd(floor.packed_one_message_per_receive)} while each receive
      returns one message — a long poll returns as soon as one is there, so at low arrival rates there is a
      receive per reply whatever the batch size — and ${usd(floor.packed_full_receives)} when every receive
      returns ten (a load high enough to fill them).`
          : ''
      } (\`bench/cost.ts\`, \`replyFloorPerMillion\`.)
      fanin's figures above are such a floor plus the aggregate's own work (its header, \`due\` entry, seal
      and close, its fan-out and result, its reads).${drainFloorText(r)}`,
    '',
    prose`**When Step Functions Express is cheaper.** Express bills $1.00 per million executions plus its
      duration (rounded up to 100 ms) at 64 MB, not state transitions, but runs at most five minutes and has
      no callback tokens: responders must answer synchronously (a Lambda or HTTP task in the Map). Then one
      aggregate is one execution as long as its slowest responder, plus the result's FIFO send:
      ${e.per_million_by_answer_seconds
        .map(
          (x) => prose`${usd(x.per_million_usd)} per million at
      ${fmt(x.seconds, 1)} s`,
        )
        .join(', ')}. ${
        breakEven > 0
          ? prose`Against fanin's
      ${usd(r.cost_per_million_aggregates_usd)} (replies ${r.headline_pattern}), **Express is the cheaper
      pick whenever responders are synchronous and the slowest answers within ${fmt(breakEven, 1)}
      s**`
          : 'Express is cheaper than fanin at any answer time up to its five-minute limit'
      }; fanin is the
      pick when responders are asynchronous (queues, other teams' services, humans), take longer than five
      minutes, or when the aggregation needs fanin's completion strategies, late-reply routing or
      partitions.`,
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
      reply partitions, priced from \`bench/prices.json\` by \`fixedMonthly\` in \`bench/cost.ts\`):`,
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

/**
 * Whether a drain reached full receives where an event source did not, at the same offered rate
 * (the headline pattern's rows of "Batching window"): a sentence when the figures show it, else nothing.
 */
function drainFloorText(r: Results): string {
  const floor = r.cost.reply_floor_per_million.packed_full_receives;
  const rows = r.arrival[r.headline_pattern].by_batching;
  const base = rows[0];
  const drain = rows.find(alignedDrain);
  if (floor === undefined || !base || !drain || drained(base)) return '';
  const perReceive = (receivesPerReply: number) => 1 / Math.max(receivesPerReply, 1e-9);
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
  return prose` Measured with replies ${r.headline_pattern} at
    ${fmt(r.arrival_setup.offered_replies_per_second, 0)} replies/s, where the topology's event source
    received ${fmt(perReceive(base.reply_receives_per_reply), 1)} per receive from the reply partitions,
    ${settingText(drain)} received ${fmt(perReceive(drain.reply_receives_per_reply), 1)} per receive with
    ${fmt(drain.replies_per_aggregate_per_batch, 2)} replies of one aggregate per batch: a drain is how the
    full-receive floor becomes reachable at any load, not only at a load that fills the receives, at the
    price of latency (p50 ${fmt(drain.completion_latency_ms.p50 / 1000, 1)} s here; see "Batching
    window")${
      followed
        ? prose`, as long as the drain finds a backlog and not a stream: one that came in the
    middle of the same sending received ${fmt(perReceive(followed.reply_receives_per_reply), 1)} per
    receive, following the replies as they arrived`
        : ''
    }. fanin drained measured
    ${usd(drain.cost_per_million_aggregates_usd)} per million aggregates end to end: that floor plus the
    aggregate's own work and the drain's Lambda duration.`;
}
