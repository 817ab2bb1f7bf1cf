import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FaninUnderTest } from '../../support/fanin.ts';

type SubRequest = Parameters<FaninUnderTest['reply']>[0];

/**
 * A decision by count seals exactly its count of replies: `first` its first reply, `count: N`
 * (or the request's own `parameters.count`) its first N, in recorded order — the recording
 * invocation's time, then the reply id (index ids numerically) — and every other reply recorded
 * before the seal goes to the late output once. The replies are sent together and taken by the
 * real reply handler in one batch (one pack, one read that sees them all); the outputs are read
 * from the recorder, below SQS's FIFO deduplication, so a second late output under the same id
 * would show.
 */
describe('a count decision seals exactly its count of replies', () => {
  let fanin: FaninUnderTest;
  let responder: string;

  beforeAll(async () => {
    fanin = await FaninUnderTest.start([
      {
        name: 'fastest',
        fanOut: { type: 'recipient-list' },
        completion: { strategy: 'first' },
        timeoutSeconds: 600,
      },
      {
        name: 'two-of',
        fanOut: { type: 'recipient-list' },
        completion: { strategy: 'count', count: 2 },
        requestParameters: { count: { min: 1, max: 3 } },
        timeoutSeconds: 600,
      },
    ]);
    responder = await fanin.targetQueue('count-responder');
  });
  afterAll(() => fanin.stop());

  /** Opens an aggregate of three recipients and returns its sub-requests by reply id. */
  const open = async (definition: string, aggregateId: string, parameters?: { count: number }) => {
    await fanin.sendRequest({
      definition,
      aggregateId,
      recipients: [responder, responder, responder],
      ...(parameters ? { parameters } : {}),
    });
    await fanin.drain();
    const requests = await fanin.takeRequests(responder);
    const byReplyId = new Map(
      requests.map((r) => [r.MessageAttributes?.['fanin-reply-id']?.StringValue ?? '', r] as const),
    );
    expect([...byReplyId.keys()].sort()).toEqual(['0', '1', '2']);
    return byReplyId;
  };
  /** Answers these sub-requests, then has one reply invocation take them all in one batch. */
  const answerInOneBatch = async (requests: Map<string, SubRequest>, replyIds: string[]) => {
    const partitions = new Set<number>();
    for (const replyId of replyIds) {
      const request = requests.get(replyId) as SubRequest;
      const replyTo = request.MessageAttributes?.['fanin-reply-to']?.StringValue ?? '';
      partitions.add(fanin.provisioned.replyQueueUrls.indexOf(replyTo));
      await fanin.reply(request, { from: replyId });
    }
    // One aggregate's replies go to one partition: one receive there takes them all.
    expect(partitions.size).toBe(1);
    expect(await fanin.consumePartition([...partitions][0] as number)).toBe(replyIds.length);
  };
  const lateOf = (aggregateId: string) =>
    fanin
      .publications(aggregateId)
      .filter((p) => p.channel === 'late')
      .map((p) => String(p.body.replyId))
      .sort();
  const memberIds = (output: Record<string, unknown>) =>
    (output.result as { replyId: string }[]).map((r) => r.replyId).sort();

  it('first: three replies in one batch complete it with the first, and the other two are each late once', async () => {
    // Prepare
    const requests = await open('fastest', 'first-batch');

    // Act: the three answers, sent last id first, taken in one invocation
    await answerInOneBatch(requests, ['2', '1', '0']);
    await fanin.drain();

    // Assess (mutant killed: "a count decision seals every recorded reply" — received 3, none late)
    const { output } = fanin.expectExactlyOneTerminalOutput('first-batch');
    expect(output).toMatchObject({ completedBy: 'first', counts: { expected: 3, received: 1 } });
    expect(memberIds(output)).toEqual(['0']);
    expect(lateOf('first-batch')).toEqual(['1', '2']);
    expect(await fanin.ctx.store.getHeader('first-batch')).toMatchObject({
      status: 'closed',
      members: ['0'],
    });
  });

  it('count: three replies in one batch complete a count of 2 with two of them, and the third is late once', async () => {
    // Prepare
    const requests = await open('two-of', 'count-batch');

    // Act
    await answerInOneBatch(requests, ['2', '0', '1']);
    await fanin.drain();

    // Assess
    const { output } = fanin.expectExactlyOneTerminalOutput('count-batch');
    expect(output).toMatchObject({ completedBy: 'count', counts: { expected: 3, received: 2 } });
    expect(memberIds(output)).toEqual(['0', '1']);
    expect(lateOf('count-batch')).toEqual(['2']);
  });

  it("count: a request's own count of 1 seals one reply of three sent together", async () => {
    // Prepare
    const requests = await open('two-of', 'count-own', { count: 1 });

    // Act
    await answerInOneBatch(requests, ['1', '2', '0']);
    await fanin.drain();

    // Assess
    const { output } = fanin.expectExactlyOneTerminalOutput('count-own');
    expect(output).toMatchObject({ completedBy: 'count', counts: { received: 1 } });
    expect(memberIds(output)).toEqual(['0']);
    expect(lateOf('count-own')).toEqual(['1', '2']);
  });

  it('count: a reply recorded earlier is a member before a lower reply id recorded later', async () => {
    // Prepare: reply 2 recorded alone first; the count of 2 is not reached
    const requests = await open('two-of', 'count-order');
    await answerInOneBatch(requests, ['2']);
    expect(fanin.publications('count-order')).toEqual([]);
    fanin.clock.advance(1_000);

    // Act: 0 and 1 a second later, together: the read sees three
    await answerInOneBatch(requests, ['1', '0']);
    await fanin.drain();

    // Assess (mutant killed: "the cap's order is reply id order or read order, not recorded order"
    // — 0 and 1 would be the members)
    const { output } = fanin.expectExactlyOneTerminalOutput('count-order');
    expect(memberIds(output)).toEqual(['0', '2']);
    expect(lateOf('count-order')).toEqual(['1']);
  });
});
