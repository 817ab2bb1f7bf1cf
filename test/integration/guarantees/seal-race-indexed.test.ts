import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FaninContext } from '../../../shared/use-cases/context.ts';
import { handleReplies } from '../../../shared/use-cases/replies.ts';
import { expireAggregate } from '../../../shared/use-cases/timers.ts';
import { sealingAfter } from '../../support/failpoints.ts';
import { FaninUnderTest } from '../../support/fanin.ts';

/**
 * The completer's read after its seal (complete.ts, finishUnderLease) on a fan-out's aggregate:
 * it is what routes late a reply recorded between the
 * completer's read and its seal, so it is skipped only when the sealed member set holds every
 * reply id the aggregate can ever record (`membersAreAll`: a splitter's indexes 0 … expected − 1,
 * the only ids its replies are recorded with). These tests count the state store's reads of the
 * aggregate itself, below the outputs' deduplication, and read the outputs as sent.
 */
describe('the completer’s read after its seal, on a fan-out’s aggregate', () => {
  let fanin: FaninUnderTest;
  const target = `indexed-${Math.random().toString(36).slice(2, 8)}`;

  beforeAll(async () => {
    fanin = await FaninUnderTest.start([
      {
        name: 'split-deadline',
        fanOut: { type: 'splitter', itemsPath: '$.items', target },
        // Only the deadline completes it: the racing reply's own handler never reads the set.
        completion: { strategy: 'timeout', completeWhenAllArrived: false },
        timeoutSeconds: 60,
      },
      {
        name: 'split-all',
        fanOut: { type: 'splitter', itemsPath: '$.items', target },
        completion: { strategy: 'all' },
        timeoutSeconds: 60,
      },
    ]);
    await fanin.targetQueue(target, true);
  });
  afterAll(() => fanin.stop());

  const reply = (aggregateId: string, replyId: string, sentAt?: number) => ({
    messageId: `m-${aggregateId}-${replyId}`,
    body: JSON.stringify({ r: replyId }),
    attributes: { 'fanin-aggregate-id': aggregateId, 'fanin-reply-id': replyId },
    receiveCount: 1,
    ...(sentAt !== undefined ? { sentAt } : {}),
  });
  /** A context whose store counts the reads of whole aggregates (`readAggregate`) it is asked for. */
  const countingReads = (ctx: FaninContext): { ctx: FaninContext; reads: () => number } => {
    let reads = 0;
    const store = new Proxy(ctx.store, {
      get(object, property, receiver) {
        const value = Reflect.get(object, property, receiver);
        if (property !== 'readAggregate' || typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          reads += 1;
          return (value as (...a: unknown[]) => unknown).apply(object, args);
        };
      },
    });
    return { ctx: { ...ctx, store }, reads: () => reads };
  };

  it('still routes late a reply recorded between the read and the seal when the members are not every index', async () => {
    // Prepare: indexes 0 and 1 of 3 in, the deadline passed
    await fanin.sendRequest({ definition: 'split-deadline', aggregateId: 'ix-race', items: [0, 1, 2] });
    await fanin.drain();
    expect((await handleReplies(fanin.ctx, [reply('ix-race', '0'), reply('ix-race', '1')])).size).toBe(0);
    fanin.clock.advance(61_000);
    const healthy = fanin.ctx;

    // Act: the deadline completer reads {0, 1}; just before its seal, index 2 is recorded by an
    // invocation whose clock is behind the deadline (it records and acknowledges it)
    let raced: Set<string> | undefined;
    const completer = sealingAfter(healthy, async () => {
      const behind = { ...healthy, clock: () => fanin.clock.now - 30_000 };
      raced = await handleReplies(behind, [reply('ix-race', '2', fanin.clock.now - 30_000)]);
    });
    await expireAggregate(completer, 'ix-race', false);
    await fanin.drain();

    // Assess (mutant killed: membersAreAll without its check that every index is a member — the
    // read is skipped, and index 2 is neither in the result nor on the late output)
    expect(raced?.size).toBe(0);
    const { output } = fanin.expectExactlyOneTerminalOutput('ix-race');
    expect(output).toMatchObject({ counts: { expected: 3, received: 2 } });
    const late = (await fanin.outputs('late')).filter((o) => o.aggregateId === 'ix-race');
    expect(late.map((o) => o.replyId)).toEqual(['2']);
  });

  it('completes with every index a member from the one read that decided, without reading again', async () => {
    // Prepare
    await fanin.sendRequest({ definition: 'split-all', aggregateId: 'ix-all', items: [0, 1, 2] });
    await fanin.drain();
    expect((await handleReplies(fanin.ctx, [reply('ix-all', '0'), reply('ix-all', '1')])).size).toBe(0);
    const counted = countingReads(fanin.ctx);

    // Act: the last index completes it
    const failed = await handleReplies(counted.ctx, [reply('ix-all', '2')]);
    await fanin.drain();

    // Assess (mutant killed: membersAreAll always false — the owner reads the aggregate a second
    // time after its seal, one query of the header and every reply, per aggregate)
    expect(failed.size).toBe(0);
    expect(counted.reads()).toBe(1);
    const { output } = fanin.expectExactlyOneTerminalOutput('ix-all');
    expect(output).toMatchObject({ completedBy: 'all-arrived', counts: { expected: 3, received: 3 } });
    expect((output.result as { replyId: string }[]).map((r) => r.replyId).sort()).toEqual(['0', '1', '2']);
    expect((await fanin.outputs('late')).filter((o) => o.aggregateId === 'ix-all')).toEqual([]);
  });
});
