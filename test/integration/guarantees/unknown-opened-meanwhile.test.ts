import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RawMessage } from '../../../shared/ports.ts';
import type { FaninContext } from '../../../shared/use-cases/context.ts';
import { handleReplies } from '../../../shared/use-cases/replies.ts';
import { FaninUnderTest } from '../../support/fanin.ts';

/**
 * A reply found unknown (no aggregate yet, unknown timeout 0) is reported unknown only while its
 * aggregate still does not exist. The invocation that looked may pause before it fixes the
 * reply's fate: meanwhile the aggregate opens, a copy of the same reply (a responder's retry) is
 * counted and the aggregate completes. The paused copy must then not report a member of the
 * result unknown as well (found by the simulation, seed 139: members-sent).
 */
describe('a reply found unknown while its aggregate opens', () => {
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

  /**
   * The context of an invocation that pauses after its look for the header (an eventually
   * consistent read, then a consistent one): the second read is made, then `meanwhile` runs, then
   * that read's answer, as it was, is returned.
   */
  const pausedAfterHeaderRead = (meanwhile: () => Promise<void>): FaninContext => {
    // The other invocations run as a task started here, outside the paused reply handler, and
    // released when it pauses; the handler polls for its end rather than awaiting it, so neither
    // its async stack nor its async context holds the handler, and the policy proof's recorder
    // takes their calls for their own functions', not the paused reply handler's.
    let released!: () => void;
    const release = new Promise<void>((resolve) => {
      released = resolve;
    });
    const state: { done: boolean; error?: unknown } = { done: false };
    void (async () => {
      await release;
      try {
        await meanwhile();
      } catch (error) {
        state.error = error;
      }
      state.done = true;
    })();
    const others = async () => {
      released();
      while (!state.done) await new Promise((resolve) => setTimeout(resolve, 20));
      if (state.error) throw state.error;
    };
    let reads = 0;
    const store = new Proxy(fanin.ctx.store, {
      get(target, property, receiver) {
        const value = Reflect.get(target, property, receiver);
        if (property !== 'getHeader' || typeof value !== 'function') return value;
        return async (...args: unknown[]) => {
          const answer = await (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
          reads += 1;
          if (reads === 2) await others();
          return answer;
        };
      },
    });
    return { ...fanin.ctx, store };
  };

  it('is counted once and never reported unknown when a copy of it completed the aggregate meanwhile', async () => {
    // Prepare: the first copy of reply 0, before its aggregate exists
    const id = `opened-${Date.now().toString(36)}`;
    const attributes = { 'fanin-definition': 'strict', 'fanin-aggregate-id': id, 'fanin-reply-id': '0' };
    const first: RawMessage = {
      messageId: 'first-copy',
      body: JSON.stringify({ v: 1 }),
      attributes,
      receiveCount: 1,
    };
    const paused = pausedAfterHeaderRead(async () => {
      // Meanwhile: the aggregate opens and the responder's second copy of reply 0 completes it
      await fanin.sendRequest({ definition: 'strict', aggregateId: id, expected: 1 });
      await fanin.drain();
      await fanin.sendReply({ v: 1 }, attributes);
      await fanin.drain();
    });

    // Act: the paused invocation goes on with what it read (no aggregate)
    const failed = await handleReplies(paused, [first]);

    // Assess (mutant killed: an unknown reply's fate fixed whether or not its aggregate exists):
    // one result with reply 0, and reply 0 on no unknown or late output
    expect([...failed]).toEqual([]);
    await fanin.drain();
    const { output } = fanin.expectExactlyOneTerminalOutput(id);
    expect(output).toMatchObject({ type: 'fanin.aggregate.completed', counts: { received: 1 } });
    expect((output.result as { replyId: string }[]).map((r) => r.replyId)).toEqual(['0']);
    expect(fanin.publications(id).filter((p) => p.channel === 'unknown' || p.channel === 'late')).toEqual([]);
    expect(await fanin.ctx.store.getHeader(id)).toMatchObject({ status: 'closed', lateCount: 0 });
  });

  it('is reported unknown, and never counted, when its aggregate opens only after its fate was fixed', async () => {
    // Prepare: the reply arrives and its aggregate does not exist
    const id = `later-${Date.now().toString(36)}`;
    const attributes = { 'fanin-definition': 'strict', 'fanin-aggregate-id': id, 'fanin-reply-id': '0' };
    await fanin.sendReply({ v: 1 }, attributes);
    await fanin.drain();

    // Act: the aggregate opens, and a copy of the reply arrives
    await fanin.sendRequest({ definition: 'strict', aggregateId: id, expected: 1 });
    await fanin.drain();
    await fanin.sendReply({ v: 1 }, attributes);
    await fanin.drain();

    // Assess: unknown once, not a member; the aggregate waits for it
    expect(fanin.publications(id).filter((p) => p.channel === 'unknown')).toHaveLength(1);
    fanin.expectNoTerminalOutput(id);
    expect(await fanin.ctx.store.getHeader(id)).toMatchObject({ status: 'open' });
  });
});
