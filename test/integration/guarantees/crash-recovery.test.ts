import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eachFailpoint, expectClosedCleanly, expectInvariants } from '../../support/failpoints.ts';
import { FaninUnderTest } from '../../support/fanin.ts';

/**
 * At-least-once delivery with crashes: a handler dies before or after any AWS call it makes
 * (SDK-level failpoints: every DynamoDB, SQS, S3 and EventBridge call), SQS redelivers, the
 * sweeper runs after the completion lease. Whatever the failpoint, exactly one result is
 * published — counted by the recorder below SQS's five-minute FIFO deduplication, strictly once
 * unless the crash fell between the publication and its record — it contains every reply, and
 * nothing is left without a TTL.
 *
 * Kills the mutants "always re-publish, ignoring `emitted`" (a crash after the record makes the
 * resumer publish twice) and "no lease check" (see adversity-fencing.test.ts for the pause).
 */
describe('crash recovery', () => {
  let fanin: FaninUnderTest;
  let responder: string;

  beforeAll(async () => {
    fanin = await FaninUnderTest.start([
      { name: 'sum', fanOut: { type: 'none' }, completion: { strategy: 'all' }, timeoutSeconds: 600 },
      {
        name: 'scatter',
        fanOut: { type: 'recipient-list' },
        completion: { strategy: 'all' },
        timeoutSeconds: 600,
      },
    ]);
    responder = await fanin.targetQueue('responder');
  });
  afterAll(() => fanin.stop());

  const everyFailpoint = (
    scenario: (id: string) => Promise<void>,
    check: (id: string, mode: 'strict' | 'content') => Promise<void>,
  ) => eachFailpoint(fanin, scenario, (id, run) => check(id, run.terminalMode));

  it('reply and completion path: a crash at any call followed by redelivery emits exactly one complete result', async () => {
    // Prepare / Act
    const failpoints = await everyFailpoint(
      async (id) => {
        await fanin.sendRequest({ definition: 'sum', aggregateId: id, expected: 3 });
        await fanin.drain();
        for (const replyId of ['0', '1', '2']) {
          await fanin.sendReply(
            { v: Number(replyId) },
            { 'fanin-aggregate-id': id, 'fanin-reply-id': replyId },
          );
        }
        await fanin.drain();
      },
      async (id, mode) => {
        // Assess
        const output = await expectInvariants(fanin, id, { mode });
        expect(output).toMatchObject({
          type: 'fanin.aggregate.completed',
          counts: { received: 3 },
          result: [{ replyId: '0' }, { replyId: '1' }, { replyId: '2' }],
        });
        expect(fanin.publications(id).filter((p) => p.channel === 'late')).toEqual([]);
        expect(await fanin.ctx.store.getHeader(id)).toMatchObject({ status: 'closed', outcome: 'completed' });
        await expectClosedCleanly(fanin, id);
      },
    );
    expect(failpoints).toBeGreaterThan(20);
  }, 300_000);

  it('fan-out path: a crash at any call followed by redelivery opens one aggregate and emits one result', async () => {
    // Prepare / Act
    await everyFailpoint(
      async (id) => {
        await fanin.sendRequest({
          definition: 'scatter',
          aggregateId: id,
          recipients: [responder, responder, responder],
        });
        await fanin.drain();
        // A crash mid-send resends every sub-request; the responder answers each copy it gets.
        for (const request of await fanin.takeRequests(responder)) {
          await fanin.reply(request, { from: request.MessageAttributes?.['fanin-reply-id']?.StringValue });
        }
        await fanin.drain();
      },
      async (id, mode) => {
        // Assess
        const output = await expectInvariants(fanin, id, { mode });
        expect(output).toMatchObject({
          type: 'fanin.aggregate.completed',
          counts: { expected: 3, received: 3 },
        });
        expect(await fanin.ctx.store.getHeader(id)).toMatchObject({ status: 'closed' });
      },
    );
  }, 300_000);

  it('two consumers processing replies of one aggregate at the same time produce one result with every reply', async () => {
    // Prepare
    const id = 'concurrent-1';
    const replies = 40;
    await fanin.sendRequest({ definition: 'sum', aggregateId: id, expected: replies });
    await fanin.drain();
    const inbound = Array.from({ length: replies }, (_, i) => ({
      messageId: `m-${i}`,
      body: JSON.stringify({ i }),
      attributes: { 'fanin-aggregate-id': id, 'fanin-reply-id': String(i) },
      receiveCount: 1,
    }));
    const { handleReplies } = await import('../../../shared/use-cases/replies.ts');

    // Act: two consumers, batches of ten, interleaved, every reply also delivered twice
    const batches: (typeof inbound)[] = [];
    for (let i = 0; i < replies; i += 10) batches.push(inbound.slice(i, i + 10));
    const consumer = async (own: typeof batches) => {
      for (const batch of own) {
        const failed = await handleReplies(fanin.ctx, batch);
        expect([...failed]).toEqual([]);
      }
    };
    await Promise.all([
      consumer([...batches, ...batches.slice(0, 2)]),
      consumer([...[...batches].reverse(), ...batches.slice(2)]),
    ]);

    // Assess
    const output = await expectInvariants(fanin, id, {
      replyIds: inbound.map((m) => m.attributes['fanin-reply-id']),
    });
    const result = output.result as { replyId: string }[];
    expect(result.map((r) => r.replyId)).toEqual(Array.from({ length: replies }, (_, i) => String(i)));
  });
});
