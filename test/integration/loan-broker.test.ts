import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FaninUnderTest } from '../support/fanin.ts';

/**
 * Seed 002's loan broker: a recipient list to five banks, the best (lowest) rate wins, with
 * "time-out with override": a quote at or under the threshold completes at once; otherwise the
 * aggregate completes at the timeout with whatever arrived. One bank never answers.
 */
describe('loan broker (recipient list, best rate, override)', () => {
  let fanin: FaninUnderTest;
  let banks: string[];

  beforeAll(async () => {
    fanin = await FaninUnderTest.start([
      {
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
      },
    ]);
    banks = await Promise.all(['a', 'b', 'c', 'd', 'e'].map((b) => fanin.targetQueue(`bank-${b}`)));
  });
  afterAll(() => fanin.stop());

  it('completes at the timeout with the best of the quotes that arrived when none beats the threshold', async () => {
    // Prepare
    await fanin.sendRequest({
      definition: 'loan',
      aggregateId: 'loan-1',
      recipients: banks,
      payload: { amount: 1000 },
    });
    await fanin.drain();
    const rates = [4.1, 3.9, 3.5, 3.5];
    for (const [i, bank] of banks.slice(0, 4).entries()) {
      const [request] = await fanin.takeRequests(bank);
      expect(request).toBeDefined();
      await fanin.reply(request!, { bank, rate: rates[i], term: 10 - i });
    }
    expect(await fanin.takeRequests(banks[4]!)).toHaveLength(1); // bank e never answers
    await fanin.drain();
    expect(await fanin.outputs('completed')).toHaveLength(0);

    // Act
    fanin.clock.advance(31_000);
    await fanin.sweep();

    // Assess
    const [result, ...rest] = await fanin.outputs('completed');
    expect(rest).toHaveLength(0);
    expect(result).toMatchObject({
      aggregateId: 'loan-1',
      type: 'fanin.aggregate.completed',
      counts: { expected: 5, received: 4 },
      result: { body: { bank: banks[3], rate: 3.5, term: 7 } },
      missing: [{ replyId: '4', label: banks[4] }],
    });
  });

  it('completes early when a quote is at or under the threshold', async () => {
    // Prepare
    await fanin.sendRequest({
      definition: 'loan',
      aggregateId: 'loan-2',
      recipients: banks,
      payload: { amount: 500 },
    });
    await fanin.drain();
    const [first] = await fanin.takeRequests(banks[0]!);
    const [second] = await fanin.takeRequests(banks[1]!);

    // Act
    await fanin.reply(first!, { rate: 3.2, term: 5 });
    await fanin.reply(second!, { rate: 3.0, term: 5 });
    await fanin.drain();

    // Assess
    const [result, ...rest] = await fanin.outputs('completed');
    expect(rest).toHaveLength(0);
    expect(result).toMatchObject({
      aggregateId: 'loan-2',
      counts: { received: 2 },
      result: { body: { rate: 3.0 } },
    });
    for (const bank of banks.slice(2)) await fanin.takeRequests(bank);
  });
});
