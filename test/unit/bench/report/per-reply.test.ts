/** The headline run per reply: DynamoDB by operation, SQS by caller, the timer's firing, the units' shares. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { perReplySection } from '../../../../bench/report/per-reply.ts';
import type { Results } from '../../../../bench/report/schema.ts';

const results = JSON.parse(
  readFileSync(new URL('../../../../bench/results/latest.json', import.meta.url), 'utf8'),
) as Results;
type PerReply = Results['headline']['per_reply'];
const withPerReply = (over: Partial<PerReply>, headline: Partial<Results['headline']> = {}): Results => ({
  ...results,
  headline: { ...results.headline, ...headline, per_reply: { ...results.headline.per_reply, ...over } },
});
const text = (r: Results) => perReplySection(r).join('\n');

describe('the per-reply section', () => {
  it('gives one DynamoDB row per operation any figure has, sorted, a dash where one has none', () => {
    const r = withPerReply({
      write_units_by_operation: { 'fanin:reply PutItem': 1 },
      read_units_by_operation: { 'fanin:reply Query': 1.50125 },
      dynamodb_calls_by_operation: { 'fanin:reply PutItem': 1, 'fanin:fan-out Query': 0.2025 },
    });
    const rows = perReplySection(r).filter((l) => l.startsWith('| fanin:') && l.split('|').length === 6);
    expect(rows).toEqual([
      '| fanin:fan-out Query | — | — | 0.203 |',
      '| fanin:reply PutItem | 1 | — | 1 |',
      '| fanin:reply Query | — | 1.501 | — |',
    ]);
  });

  it('names each SQS caller, operation and queue, with four decimals', () => {
    const r = withPerReply({ sqs_calls_by_operation: { 'esm ReceiveMessage|reply': 0.98254 } });
    expect(perReplySection(r)).toContain('| esm ReceiveMessage · reply | 0.9825 |');
  });

  it("notes DynamoDB Local's transaction units only when the run wrote transactions", () => {
    const units = { 'fanin:reply TransactWriteItems': 0.5 };
    const transactions = text(
      withPerReply({ write_units_by_operation: units, emulator_reported_transaction_write_units: 0.25 }),
    );
    expect(transactions).toContain('DynamoDB Local reported 0.25 units per reply for the transactions');
    const none = text(withPerReply({ write_units_by_operation: { 'fanin:reply PutItem': 1 } }));
    expect(none).not.toContain('DynamoDB Local reported');
    expect(none).toContain("The figures apply DynamoDB's rules to the items written");
  });

  it("adds the deadline timer's firing apart, with the paced variant's when it was measured", () => {
    const batched = withPerReply({
      timer_firing_sqs_calls_by_operation: { 'esm ReceiveMessage|timer': 0.01 },
      timer_firing_sqs_calls_by_operation_paced: { 'esm ReceiveMessage|timer': 0.0625 },
    });
    expect(text(batched)).toContain(
      "The deadline timer's firing adds, per reply: esm ReceiveMessage · timer 0.01 (the batched variant: " +
        'requests sent in batches of ten, as in this run; in the all-in figures, not in this table). With ' +
        'requests paced one at a time, it measured esm ReceiveMessage · timer 0.063',
    );
    const nothing = withPerReply({
      timer_firing_sqs_calls_by_operation: {},
      timer_firing_sqs_calls_by_operation_paced: undefined,
    });
    const line = perReplySection(nothing).find((l) => l.startsWith("The deadline timer's firing")) ?? '';
    expect(line).toContain('per reply: nothing (');
    expect(line).not.toContain('paced one at a time');
  });

  it('gives handler invocations and records per invocation, and the empty receives left out', () => {
    const r = withPerReply({
      handler_invocations: { 'fan-out': 0.01, reply: 0.98254 },
      records_per_invocation: { 'fan-out': 10, reply: 1.0178 },
      empty_receives_excluded: 2601,
    });
    expect(text(r)).toContain(
      'Handler invocations per reply: fan-out 0.01, reply 0.983 (records per invocation: fan-out 10, ' +
        'reply 1). 2,601 empty long-poll receives during the run are left out',
    );
  });

  it('gives where the write units go, largest share first, leaving out operations that wrote none', () => {
    const r = withPerReply({
      write_units: 1.6,
      index_write_units: 0.2,
      write_units_by_operation: { 'fanin:fan-out PutItem': 0.4, 'fanin:reply PutItem': 1.2, 'fanin:x': 0 },
    });
    const lines = perReplySection(r);
    const shares = lines.filter((l) => l.startsWith('- '));
    expect(shares).toEqual([
      '- fanin:reply PutItem: 1.2 per reply, 75 %;',
      '- fanin:fan-out PutItem: 0.4 per reply, 25 %;',
      '- of all of it, secondary-index writes: 0.2 per reply.',
    ]);
  });

  it('says how small a reply is stored only when the stored size was measured', () => {
    const stored = text(withPerReply({}, { reply_bytes: 1024, stored_payload_bytes: 594 }));
    expect(stored).toContain(
      'each 1,024-byte JSON body is stored compressed in 594 bytes on average, so a reply item fits one write unit',
    );
    const unmeasured = text(withPerReply({}, { stored_payload_bytes: undefined }));
    expect(unmeasured).not.toContain('stored compressed');
  });
});
