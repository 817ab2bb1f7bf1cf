import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReplyToRecord } from '../../../shared/ports.ts';
import { handleReplies } from '../../../shared/use-cases/replies.ts';
import { sealingAfter } from '../../support/failpoints.ts';
import { FaninUnderTest, type OutputBody } from '../../support/fanin.ts';

/**
 * The completion rules through the real handlers against the emulators, where a fault is
 * injected: a reply racing a predicate's seal, and a completion resumed after its owner failed to
 * publish. The rules themselves (a predicate, any-of combinations and what completed the
 * aggregate, failed replies within and beyond the tolerance, a request's own parameters) are
 * pinned by the test kit in test/unit/packages/testing/features/completion-rules.test.ts.
 */
describe('completion rules', () => {
  let fanin: FaninUnderTest;

  beforeAll(async () => {
    fanin = await FaninUnderTest.start([
      {
        name: 'quorum',
        fanOut: { type: 'none' },
        // Complete once as many replies say yes as the request asks for (it reads the request).
        completion: {
          strategy: 'predicate',
          expression: '$count(replies[vote = "yes"]) >= request.body.quorum',
        },
        timeoutSeconds: 60,
      },
      {
        name: 'survey',
        fanOut: { type: 'none' },
        completion: { strategy: 'all' },
        aggregation: { algorithm: 'condense', field: '$.score', functions: ['count', 'avg'] },
        toleratedFailureCount: 1,
        timeoutSeconds: 60,
      },
    ]);
  });
  afterAll(() => fanin.stop());

  const reply = (aggregateId: string, replyId: string, body: unknown, extra: Record<string, string> = {}) =>
    fanin.sendReply(body, { 'fanin-aggregate-id': aggregateId, 'fanin-reply-id': replyId, ...extra });
  const failure = (aggregateId: string, replyId: string, error: string) =>
    reply(aggregateId, replyId, { detail: error, score: 0 }, { 'fanin-failure': error });
  const of = (outputs: OutputBody[], aggregateId: string) =>
    outputs.filter((o) => o.aggregateId === aggregateId);

  it('a reply recorded between the predicate completer’s read and its seal is routed late, never in the result', async () => {
    // Prepare
    await fanin.sendRequest({ definition: 'quorum', aggregateId: 'q-race', expected: 5, quorum: 2 });
    await fanin.drain();
    await reply('q-race', 'a', { vote: 'yes' });
    await fanin.drain();
    const healthy = fanin.ctx;
    const racer: ReplyToRecord = {
      replyId: 'z',
      payload: JSON.stringify({ vote: 'yes' }),
      receivedAt: fanin.clock.now,
      expiresAt: Math.ceil(fanin.clock.now / 1000) + 3600,
      messageId: 'm-racer',
    };

    // Act: reply b satisfies the predicate; just before its handler seals, the racer's put lands
    // (its own handler paused after the put, before its read)
    const completer = sealingAfter(healthy, async () => {
      await healthy.store.putReply('q-race', racer);
    });
    const failed = await handleReplies(completer, [
      {
        messageId: 'm-b',
        body: JSON.stringify({ vote: 'yes' }),
        attributes: { 'fanin-aggregate-id': 'q-race', 'fanin-reply-id': 'b' },
        receiveCount: 1,
      },
    ]);
    // The racer's handler wakes: its put is a duplicate, its read finds the aggregate sealed
    await reply('q-race', 'z', { vote: 'yes' });
    await fanin.drain();

    // Assess (mutant killed: building the result from a second read puts z in it)
    expect(failed.size).toBe(0);
    const { output } = fanin.expectExactlyOneTerminalOutput('q-race');
    expect(output).toMatchObject({ completedBy: 'predicate', counts: { received: 2 } });
    expect((output.result as { replyId: string }[]).map((r) => r.replyId)).toEqual(['a', 'b']);
    expect([...new Set(of(await fanin.outputs('late'), 'q-race').map((o) => o.replyId))]).toEqual(['z']);
  });

  it('a completion resumed after its owner failed to publish carries the same completedBy and failures', async () => {
    // Kills two mutants: the seal not keeping completedBy (the resumer publishes null), and the
    // store not keeping a reply's failure (the resumer folds the failure into the result).
    // Prepare
    await fanin.sendRequest({ definition: 'survey', aggregateId: 's-resumed', expected: 2 });
    await fanin.drain();
    await reply('s-resumed', '0', { score: 4 });
    await fanin.drain();
    const restore = fanin.probe.failEvery({ name: 'SQS.SendMessage', queueRole: 'completed' });
    await failure('s-resumed', '1', 'respondent unreachable');
    await fanin.consumePartition(0);
    restore();
    expect(await fanin.ctx.store.getHeader('s-resumed')).toMatchObject({
      status: 'completing',
      completedBy: 'all-arrived',
    });

    // Act: the owner's lease runs out; the sweeper resumes it from the sealed header
    fanin.clock.advance(fanin.ctx.completionLeaseMs + 1);
    await fanin.sweep();

    // Assess
    expect(await fanin.ctx.store.getHeader('s-resumed')).toMatchObject({ status: 'closed' });
    const { output } = fanin.expectExactlyOneTerminalOutput('s-resumed');
    expect(output).toMatchObject({
      completedBy: 'all-arrived',
      counts: { received: 2, failed: 1 },
      result: { count: 1, avg: 4 },
      failures: [{ replyId: '1', error: 'respondent unreachable' }],
    });
    await fanin.drain();
  });
});
