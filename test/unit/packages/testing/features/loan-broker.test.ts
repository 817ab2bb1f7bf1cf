import { describe, expect, it } from 'vitest';
import { DEFAULT_START, type DefinitionInput, simulate } from '../../../../../packages/testing/src/index.ts';
import { oneResult } from './one-result.ts';

/**
 * The loan broker by the kit: a recipient list to five banks given by the request, the best
 * (lowest) rate wins, with "time-out with override": a quote at or under the threshold completes
 * at once; otherwise the aggregate completes at the timeout with whatever arrived. One bank never
 * answers. A bank answering through the client library (`FaninClient.fail`) over SQS stays in
 * test/integration/features/loan-broker.test.ts.
 */

const loan: DefinitionInput = {
  name: 'loan',
  fanOut: { type: 'recipient-list' },
  completion: {
    strategy: 'override',
    score: { source: 'path', path: '$.rate' },
    threshold: 3.0,
    direction: 'below',
  },
  aggregation: {
    algorithm: 'best',
    criteria: [
      { path: '$.rate', order: 'min' },
      { path: '$.term', order: 'min' },
    ],
  },
  timeoutSeconds: 30,
};
const banks = ['a', 'b', 'c', 'd', 'e'].map((b) => `bank-${b}`);
// The banks' queues exist (theirs, not the deployment's): the request names them.

describe('loan broker (kit: recipient list, best rate, override)', () => {
  it('completes at the timeout with the best of the quotes that arrived when none beats the threshold', async () => {
    // Prepare
    const run = simulate(loan, { responderQueues: banks });
    await run.request({ aggregateId: 'loan-1', recipients: banks, payload: { amount: 1000 } });
    expect(run.subRequests().map((s) => [s.recipient, s.body])).toEqual(
      banks.map((b) => [b, { amount: 1000 }]),
    );
    const rates = [4.1, 3.9, 3.5, 3.5];
    for (const [i, bank] of banks.slice(0, 4).entries())
      await run.reply(bank, { bank, rate: rates[i], term: 10 - i });
    expect(run.outputs('completed')).toHaveLength(0); // bank e never answers

    // Act
    await run.advance('29999ms');
    const before = run.result();
    await run.advance('1ms');

    // Assess
    expect(before).toBeUndefined();
    const { output, channel } = oneResult(run, 'loan-1');
    expect(channel).toBe('completed');
    expect(output).toMatchObject({
      aggregateId: 'loan-1',
      type: 'fanin.aggregate.completed',
      completedBy: 'deadline',
      closedAt: DEFAULT_START + 30_000,
      counts: { expected: 5, received: 4 },
      result: { body: { bank: 'bank-d', rate: 3.5, term: 7 } },
      missing: [{ replyId: '4', label: 'bank-e' }],
    });
  });

  it('completes early when a quote is at or under the threshold', async () => {
    // Prepare
    const run = simulate(loan, { responderQueues: banks });
    await run.request({ aggregateId: 'loan-2', recipients: banks, payload: { amount: 500 } });

    // Act
    await run.reply('bank-a', { rate: 3.2, term: 5 });
    const before = run.result();
    await run.reply('bank-b', { rate: 3.0, term: 5 });

    // Assess
    expect(before).toBeUndefined();
    const { output } = oneResult(run, 'loan-2');
    expect(output).toMatchObject({
      aggregateId: 'loan-2',
      completedBy: 'threshold',
      counts: { received: 2 },
      result: { body: { rate: 3.0 } },
    });
    expect(run.outputs('completed')).toHaveLength(1);
  });
});
