import { cheapest, drained, perReceive, settingText, straddled } from './arrival.ts';
import { byFanOut, fmt, msPair, prose, secs, table, usd, when } from './format.ts';
import type { Results } from './schema.ts';
import { longDeadlineText } from './timers.ts';

/** The title, the run's provenance, how to read the figures, and how to reproduce them. */
export function introSection(r: Results): string[] {
  return [
    `# fanin benchmark — ${r.quick ? 'quick' : 'full'} run`,
    '',
    prose`${r.date} · \`${r.command}\` · commit \`${r.commit.slice(0, 12)}\` · ${r.duration_seconds} s ·
      ${r.machine.cpus} CPUs, ${r.machine.memory_gib} GiB, Node ${r.machine.node} · emulators:
      ${r.machine.emulators.join(', ') || 'none (endpoint from the environment)'} · load average
      ${r.machine.load_average_start.join(' / ')} at the start, ${r.machine.load_average_end.join(' / ')} at
      the end`,
    '',
    '> Throughput and latency here are those of **local emulators** (fauxqs in the benchmark process, DynamoDB Local',
    prose`> in a JVM) on a small shared machine: read them as ratios (fanin against the raw store, fanin against
      the baseline),`,
    '> not as what AWS would do. Counts — API calls, write and read units, invocations — do not depend on the',
    '> machine: they are what AWS would bill for the same work.',
    '',
    '## Reproduce',
    '',
    '```sh',
    'npm ci',
    'npm run bench             # full run (≤ 12 min): bench/results/latest.{json,md}, scale.svg',
    'npm run bench -- --quick  # smoke run (≤ 3 min): bench/results/quick.{json,md}, quick-scale.svg',
    'npm run bench -- --replay-baseline  # also replay the naive baseline at fan-out 10,000 (+5–15 min)',
    '```',
    '',
    'Java 17+ is needed for DynamoDB Local; with `AWS_ENDPOINT_URL` set (LocalStack) nothing is started.',
    '',
  ];
}

/** The contract figures, each with the sentence that says what it is. */
export function headlineSection(r: Results): string[] {
  return [
    '## Headline figures',
    '',
    prose`Replies arrive **${r.headline_pattern}ly** (see "Arrival patterns" for all three side by side): each
      reply sent on its own, round-robin over ${r.arrival_setup.rotation} aggregates at a time,
      ${fmt(r.arrival_setup.offered_replies_per_second, 0)} replies/s offered; reply batching window
      ${r.arrival_setup.default_batching_window_seconds} s and batch size
      ${r.arrival_setup.default_batch_size} (the topology's).`,
    '',
    ...table(['figure', 'value', 'what it is'], [...costRows(r), ...figureRows(r)]),
    '',
  ];
}

/** The cost row and the latency row of the headline table. */
function costRows(r: Results): string[][] {
  const c = r.cost;
  return [
    [
      'cost per million aggregates',
      usd(r.cost_per_million_aggregates_usd),
      prose`fan-out 10, 1 KB replies, at us-east-1 list prices of ${c.prices_taken}: fanin's own bill plus
        its clients' SQS calls, the deadline timer's firing included${when(
          c.fanin_total_per_million_timers_paced,
          (paced) => prose` as it fires when requests are sent in batches of ten, as here (with the firing of
        requests paced one at a time instead: ${usd(paced)})`,
        )}; details below.${cheapestText(r)} Step Functions
        Standard with callback tokens: ${usd(c.step_functions_standard.total_per_million)}
        (${fmt(c.step_functions_standard.total_per_million / r.cost_per_million_aggregates_usd, 1)}×). Replies
        together: ${usd(r.arrival.together.cost_per_million_aggregates_usd)}.${longDeadlineText(r)}`,
    ],
    [
      'write units per reply',
      byFanOut(r.arrival[r.headline_pattern].write_units_per_reply),
      prose`every DynamoDB write unit fanin spent on an aggregate (opening, recording, completing, closing,
        the timer firing) over its replies, 1 KB replies. Replies together:
        ${byFanOut(r.arrival.together.write_units_per_reply)}; spread:
        ${byFanOut(r.arrival.spread.write_units_per_reply)}.`,
    ],
  ];
}

/** The headline table's other figures: SQS calls, rates, the store's capacity, the scale curve. */
function figureRows(r: Results): string[][] {
  return [
    [
      'completion latency p50 / p99',
      msPair(r.completion_latency_ms.p50, r.completion_latency_ms.p99),
      prose`from the moment the last reply of an aggregate is handed to SQS to the moment its result is
        received from the output queue, over ${r.completion_latency_ms.samples} aggregates.
        ${
          r.arrival_setup.default_batching_window_seconds > 0
            ? prose`It is mostly the reply batching window
        (${r.arrival_setup.default_batching_window_seconds} s) running
        out`
            : 'No reply batching window by default'
        }: see "Batching window" for the trade-off.`,
    ],
    [
      'SQS calls per reply',
      fmt(r.sqs_calls_per_reply, 3),
      prose`all-in: calls of fanin's handlers and of Lambda's event source mappings for them (receives that
        returned messages, deletes), the deadline timer's send, receive and delete included. Clients' calls
        are apart (below).`,
    ],
    [
      'replies per second',
      fmt(r.replies_per_second, 1),
      prose`saturated, replies independent: ${fmt(r.saturated.replies, 0)} replies of 1 KB released as fast
        as the responders send, from the first reply released to the last result read.`,
    ],
    [
      'fraction of store capacity',
      r.fraction_of_store_capacity === null
        ? `not reported (capacity moved ${fmt(r.store_capacity.spread * 100, 0)} % between the windows)`
        : fmt(r.fraction_of_store_capacity, 3),
      prose`those replies per second over the raw PutItem rate of the same warm DynamoDB Local, measured just
        before and just after the run (${fmt(r.store_capacity.before.puts_per_second, 0)} and
        ${fmt(r.store_capacity.after.puts_per_second, 0)} puts/s); see "Store capacity".`,
    ],
    [
      'scale curve, write units per reply',
      byFanOut(r.write_units_per_reply),
      prose`small replies arriving together, fan-out 10 to
        ${fmt(Math.max(...r.scale.map((p) => p.fan_out)), 0)}, beside the naive baseline
        (${Object.entries(r.baseline_ratio)
          .map(([f, v]) => `${fmt(v, 2)}× @${f}`)
          .join(', ')}; below 1× the naive design is cheaper).`,
    ],
  ];
}

/** The cheapest reply consumer setting measured with the headline's pattern. */
function cheapestText(r: Results): string {
  const [base, ...rest] = r.arrival[r.headline_pattern].by_batching;
  // A straddled drain is its aligned row's setting, timed otherwise: given beside it, not as a setting.
  const others = rest.filter((b) => !straddled(b));
  const least = cheapest(others);
  if (!base || !least || least.cost_per_million_aggregates_usd >= base.cost_per_million_aggregates_usd)
    return '';
  const cut = drained(least)
    ? rest.find((b) => straddled(b) && b.drain_interval_seconds === least.drain_interval_seconds)
    : undefined;
  const alsoCut = when(
    cut,
    (cut) => prose`, ${usd(cut.cost_per_million_aggregates_usd)} when a drain comes in the
    middle of the sending (${fmt(cut.aggregates_split_across_drains ?? 0, 0)} aggregates split across drains,
    ${fmt(perReceive(cut.reply_receives_per_reply), 1)} messages per receive against
    ${fmt(perReceive(least.reply_receives_per_reply), 1)}, latency p50 ${secs(cut.completion_latency_ms.p50)}; see
    "Batching window")`,
  );
  return prose` The cheapest setting measured with replies ${r.headline_pattern}: ${settingText(least)},
    ${usd(least.cost_per_million_aggregates_usd)} (latency p50 ${secs(least.completion_latency_ms.p50)}${
      cut ? ', its replies sent just after a drain' : '; see "Batching window"'
    })${alsoCut}.`;
}
