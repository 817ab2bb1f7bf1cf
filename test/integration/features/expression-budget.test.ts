import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FaninUnderTest } from '../../support/fanin.ts';

/**
 * A reply whose completion predicate runs a backtracking regular expression over one of its
 * strings: the evaluation ends at its budget, inside the regex, and the aggregate ends `failed`
 * with the reason on the error output, as any expression over budget does. The reply's message
 * is acknowledged: nothing cycles to the DLQ.
 */
describe('an expression over budget inside a regular expression', () => {
  let fanin: FaninUnderTest;

  beforeAll(async () => {
    fanin = await FaninUnderTest.start([
      {
        name: 'screened',
        fanOut: { type: 'none' },
        completion: {
          strategy: 'predicate',
          expression: '$count(replies[$contains(name, /^(a|a)*$/i)]) > 0',
        },
        timeoutSeconds: 3600,
      },
    ]);
  });
  afterAll(() => fanin.stop());

  it('a reply whose predicate backtracks over its 27-character name fails its aggregate as over budget, on the error output, with nothing in the DLQ', async () => {
    // Kills the mutant "regex literals on the built-in RegExp" (no RegexEngine option: the same
    // outcome, but only after the regex returns, about ten seconds later on this machine).
    // Prepare
    const id = `screened-${Date.now().toString(36)}`;
    await fanin.sendRequest({ definition: 'screened', aggregateId: id, expected: 3 });
    await fanin.drain();

    // Act
    const started = performance.now();
    await fanin.sendReply(
      { name: `${'a'.repeat(26)}!` },
      { 'fanin-aggregate-id': id, 'fanin-reply-id': '0', 'fanin-definition': 'screened' },
    );
    await fanin.drain();
    const ms = performance.now() - started;

    // Assess
    const { output } = fanin.expectExactlyOneTerminalOutput(id, 'strict');
    expect(output).toMatchObject({
      type: 'fanin.aggregate.failed',
      outcome: 'failed',
      completedBy: 'predicate',
      counts: { received: 1 },
    });
    expect(String(output.reason)).toMatch(/^completion predicate: .*exceeded its time budget$/);
    expect(await fanin.deadLetters()).toEqual({});
    // The reply's handling, emulator calls included, is bounded by the budget, not by the regex.
    console.info(`reply to failed result: ${ms.toFixed(0)} ms`);
    expect(ms).toBeLessThan(5_000);
  }, 120_000);
});
