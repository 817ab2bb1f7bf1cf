import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FaninClient } from '../../../shared/client/fanin-client.ts';
import { aws } from '../../support/clients.ts';
import { FaninUnderTest } from '../../support/fanin.ts';

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
      {
        name: 'loan-tolerant',
        fanOut: { type: 'recipient-list' },
        completion: { strategy: 'all' },
        aggregation: { algorithm: 'best', criteria: [{ path: '$.rate', order: 'min' }] },
        timeoutSeconds: 30,
        toleratedFailureCount: 1,
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

  it('a bank on the client library that cannot quote answers with fail(): listed beside the best quote', async () => {
    // Prepare
    const client = new FaninClient({ sqs: aws.sqs });
    await fanin.sendRequest({
      definition: 'loan-tolerant',
      aggregateId: 'loan-fail-1',
      recipients: banks.slice(0, 3),
    });
    await fanin.drain();
    const subs = (await Promise.all(banks.slice(0, 3).map((b) => client.receive(fanin.targetUrl(b))))).flat();
    expect(subs).toHaveLength(3);

    // Act: two quotes and one failure, through the client library
    await client.reply(subs[0]!, { rate: 3.8 });
    await client.reply(subs[1]!, { rate: 3.6 });
    await client.fail(subs[2]!, 'credit check unavailable', { code: 'CREDIT_CHECK_DOWN' });
    await fanin.drain();

    // Assess: every bank answered, one failed within tolerance: completed with the best quote
    const [result] = (await fanin.outputs('completed')).filter((r) => r.aggregateId === 'loan-fail-1');
    expect(result).toMatchObject({
      counts: { expected: 3, received: 3, failed: 1 },
      result: { replyId: subs[1]!.replyId, body: { rate: 3.6 } },
      failures: [
        { replyId: subs[2]!.replyId, error: 'credit check unavailable', body: { code: 'CREDIT_CHECK_DOWN' } },
      ],
    });
  });
});
