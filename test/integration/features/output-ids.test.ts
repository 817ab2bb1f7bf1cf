import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FaninUnderTest } from '../../support/fanin.ts';

/**
 * Output ids are what consumers and SQS FIFO deduplicate on: two different outputs must never
 * share one, whatever `/` the message-chosen aggregate and reply ids hold.
 */
describe('output ids of message-chosen ids', () => {
  let fanin: FaninUnderTest;

  beforeAll(async () => {
    fanin = await FaninUnderTest.start([
      { name: 'plain', fanOut: { type: 'none' }, completion: { strategy: 'all' }, timeoutSeconds: 600 },
    ]);
  });
  afterAll(() => fanin.stop());

  const reply = (aggregateId: string, replyId: string, body: unknown) =>
    fanin.sendReply(body, {
      'fanin-definition': 'plain',
      'fanin-aggregate-id': aggregateId,
      'fanin-reply-id': replyId,
    });

  it('a late reply q/late/r of aggregate p and a late reply r of aggregate p/late/q are both on the late output', async () => {
    // Prepare: both aggregates complete on their one reply
    for (const id of ['p', 'p/late/q']) {
      await fanin.sendRequest({ definition: 'plain', aggregateId: id, requestId: `rq-${id}`, expected: 1 });
    }
    await fanin.drain();
    for (const id of ['p', 'p/late/q']) await reply(id, '0', { v: id });
    await fanin.drain();

    // Act: joined as they are, both late outputs would be p/late/q/late/r, and the FIFO late
    // queue would drop the second as a duplicate
    await reply('p', 'q/late/r', { v: 'late to p' });
    await reply('p/late/q', 'r', { v: 'late to p/late/q' });
    await fanin.drain();

    // Assess
    const late = await fanin.outputs('late');
    expect(late.map((o) => [o.aggregateId, o.replyId]).sort()).toEqual([
      ['p', 'q/late/r'],
      ['p/late/q', 'r'],
    ]);
    expect(new Set(late.map((o) => o.id)).size).toBe(2);
  });
});
