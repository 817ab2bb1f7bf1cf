import { fmt, prose, secs, table } from './format.ts';
import type { Results } from './schema.ts';

/** The store-capacity figure: both windows, their spread, and whether the ratio means anything. */
export function storeCapacitySection(r: Results): string[] {
  const k = r.store_capacity;
  const verdict = k.meaningful
    ? prose`The two windows agree within ${fmt(k.spread_limit * 100, 0)} %, so the fraction is reported:
      ${fmt(r.fraction_of_store_capacity, 3)} (${fmt(k.fraction_range[0], 3)}–${fmt(k.fraction_range[1], 3)}
      against the faster and the slower window).`
    : prose`The two windows differ by more than ${fmt(k.spread_limit * 100, 0)} %, so no fraction is reported in
      the headline: against one window or the other it would be ${fmt(k.fraction_range[0], 3)} or
      ${fmt(k.fraction_range[1], 3)}, and that spread is the emulator's, not fanin's.`;
  return [
    '## Store capacity',
    '',
    prose`The raw write rate of the same DynamoDB Local: plain \`PutItem\`s of reply-sized items (1 KB body) by
      ${k.concurrency} writers (the reply consumers' concurrency), after a warm-up that is not counted: one
      window just before the saturated run (${secs(k.before.duration_ms)}; the run was sized from a warm-up
      run to last about as long, and took ${secs(r.saturated.release_to_last_result_ms)}) and one just after,
      as long as the run (${secs(k.after.duration_ms)}).`,
    '',
    ...table(
      ['window', 'puts/s', 'per whole second'],
      [
        ['before', fmt(k.before.puts_per_second, 1), k.before.per_second.join(' · ')],
        ['after', fmt(k.after.puts_per_second, 1), k.after.per_second.join(' · ')],
      ],
    ),
    '',
    prose`Spread between the windows ${fmt(k.spread * 100, 1)} % (slowest to fastest second
      ${k.per_second_range.join('–')} puts/s). ${verdict} The emulator shares two cores with the benchmark's
      Node process (fauxqs, the handlers, the load generator): read the fraction as how much of that
      machine's store fanin's protocol leaves unused, not as an AWS figure.`,
    '',
  ];
}
