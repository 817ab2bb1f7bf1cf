import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FaninClient } from '../../../shared/client/fanin-client.ts';
import { aws } from '../../support/clients.ts';
import { FaninUnderTest } from '../../support/fanin.ts';

/**
 * The loan broker's banks on the client library over SQS: a bank that cannot quote answers with
 * `FaninClient.fail`. The broker's definition (the best rate, a quote at or under the threshold
 * completing at once, otherwise the timeout with what arrived) is pinned by the test kit in
 * test/unit/packages/testing/features/loan-broker.test.ts.
 */
describe('loan broker (recipient list, best rate, override)', () => {
  let fanin: FaninUnderTest;
  let banks: string[];

  beforeAll(async () => {
    fanin = await FaninUnderTest.start([
      {
        name: 'loan-tolerant',
        fanOut: { type: 'recipient-list' },
        completion: { strategy: 'all' },
        aggregation: { algorithm: 'best', criteria: [{ path: '$.rate', order: 'min' }] },
        timeoutSeconds: 30,
        toleratedFailureCount: 1,
      },
    ]);
    banks = await Promise.all(['a', 'b', 'c'].map((b) => fanin.targetQueue(`bank-${b}`)));
  });
  afterAll(() => fanin.stop());

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
