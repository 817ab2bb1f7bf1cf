import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FaninUnderTest } from '../../support/fanin.ts';

/**
 * A reply to an aggregate that does not exist, with an unknown timeout of 0, goes to the unknown
 * output at once. A copy of it that arrives once the aggregate has opened (SQS redelivers a
 * message whose delete was lost, or delivers it twice) must not be counted as well: a reply is
 * counted or reported unknown, never both.
 */
describe('a reply reported unknown', () => {
  let fanin: FaninUnderTest;

  beforeAll(async () => {
    fanin = await FaninUnderTest.start([
      {
        name: 'strict',
        fanOut: { type: 'none' },
        completion: { strategy: 'all' },
        timeoutSeconds: 60,
        unknownTimeoutSeconds: 0,
      },
    ]);
  });
  afterAll(() => fanin.stop());

  it('is never counted in its aggregate when a copy of it arrives after the aggregate opened', async () => {
    // Prepare: the reply comes first, and is reported unknown at once
    const attributes = { 'fanin-definition': 'strict', 'fanin-aggregate-id': 'u-1', 'fanin-reply-id': '0' };
    await fanin.sendReply({ first: true }, attributes);
    await fanin.drain();
    expect((await fanin.outputs('unknown')).map((o) => [o.aggregateId, o.replyId])).toEqual([['u-1', '0']]);

    // Act: the aggregate opens, the same reply comes again, then the other expected reply
    await fanin.sendRequest({ definition: 'strict', aggregateId: 'u-1', expected: 2 });
    await fanin.drain();
    await fanin.sendReply({ first: true }, attributes);
    await fanin.sendReply({ second: true }, { ...attributes, 'fanin-reply-id': '1' });
    await fanin.drain();

    // Assess (mutant killed: an unknown reply's fate not fixed before it is published): reply 0
    // is on the unknown output and not in the aggregate, which waits for it as missing
    const header = await fanin.ctx.store.getHeader('u-1');
    expect(header?.status).toBe('open');
    const { replies } = await fanin.ctx.store.readAggregate('u-1');
    expect(replies.filter((r) => !r.late).map((r) => r.replyId)).toEqual(['1']);
    expect(await fanin.outputs('completed')).toEqual([]);
  });
});
