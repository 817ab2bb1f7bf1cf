import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RawMessage } from '../../../shared/ports.ts';
import { handleReplies } from '../../../shared/use-cases/replies.ts';
import { InjectedCrash } from '../../support/failpoints.ts';
import { FaninUnderTest } from '../../support/fanin.ts';

/**
 * A deadline whose timer is lost is still enforced on the reply path: a reply
 * that arrived after the aggregate's deadline is never a member — it is routed late — and the
 * aggregate is timed out on the replies that arrived before it, by the reply path itself or, when
 * that handler dies first, by the sweeper. A reply arrives when SQS first accepted it (its
 * `SentTimestamp`, the same on every redelivery), never by an attribute its sender set. No timer
 * is ever fired here: the timer queue is never consumed.
 */
describe('a reply after a deadline whose timer was lost', () => {
  let fanin: FaninUnderTest;

  beforeAll(async () => {
    // The emulator gives every message one sender: none is taken for the distributor here.
    fanin = await FaninUnderTest.start(
      [
        { name: 'trio', fanOut: { type: 'none' }, completion: { strategy: 'all' }, timeoutSeconds: 20 },
        { name: 'window', fanOut: { type: 'none' }, completion: { strategy: 'timeout' }, timeoutSeconds: 20 },
      ],
      { overrides: { trustedMovers: [] } },
    );
  });
  afterAll(() => fanin.stop());

  const reply = (id: string, replyId: string) =>
    fanin.sendReply({ v: Number(replyId) }, { 'fanin-aggregate-id': id, 'fanin-reply-id': replyId });
  /** The late outputs of an aggregate, once per output id (a re-publication repeats its id). */
  const lateOf = (id: string) => [
    ...new Map(
      fanin
        .publications(id)
        .filter((p) => p.channel === 'late')
        .map((p) => [p.body.id, [p.body.replyId, p.body.reason]]),
    ).values(),
  ];

  it('does not complete the aggregate: it is routed late and the aggregate times out without it', async () => {
    // Prepare: two of three replies before the deadline; the deadline's timer never fires
    const id = `lost-all-${Date.now().toString(36)}`;
    await fanin.sendRequest({ definition: 'trio', aggregateId: id, expected: 3 });
    await fanin.drain();
    await reply(id, '0');
    await reply(id, '1');
    await fanin.drain();
    fanin.clock.advance(24_000);

    // Act: the third reply, 4 s after the deadline
    await reply(id, '2');
    await fanin.drain();

    // Assess (mutant killed: a reply's receipt not compared with the deadline): timed out with
    // replies 0 and 1, reply 2 missing and on the late output
    const output = fanin.expectExactlyOneTerminalOutput(id).output;
    expect(output).toMatchObject({
      type: 'fanin.aggregate.timed-out',
      completedBy: 'deadline',
      counts: { expected: 3, received: 2 },
      missing: [{ replyId: '2' }],
    });
    expect((output.result as { replyId: string }[]).map((r) => r.replyId)).toEqual(['0', '1']);
    expect(lateOf(id)).toEqual([['2', expect.stringContaining('deadline')]]);
    expect(await fanin.ctx.store.getHeader(id)).toMatchObject({ status: 'closed', lateCount: 1 });
  });

  it('is not counted in the timed-out result, which holds only the replies received before the deadline', async () => {
    // Prepare: one reply before the deadline; the timer never fires
    const id = `lost-window-${Date.now().toString(36)}`;
    await fanin.sendRequest({ definition: 'window', aggregateId: id });
    await fanin.drain();
    await reply(id, 'a');
    await fanin.drain();
    fanin.clock.advance(32_000);

    // Act: another reply, 12 s after the deadline
    await reply(id, 'b');
    await fanin.drain();

    // Assess: the window's result has reply a only; b is late
    const output = fanin.expectExactlyOneTerminalOutput(id).output;
    expect(output).toMatchObject({ completedBy: 'deadline', counts: { received: 1 } });
    expect((output.result as { replyId: string }[]).map((r) => r.replyId)).toEqual(['a']);
    expect(lateOf(id)).toEqual([['b', expect.stringContaining('deadline')]]);
  });

  it('is not counted when its handler dies after recording it and the sweeper ends the aggregate', async () => {
    // Prepare: two of three replies before the deadline; the timer never fires
    const id = `lost-crash-${Date.now().toString(36)}`;
    await fanin.sendRequest({ definition: 'trio', aggregateId: id, expected: 3 });
    await fanin.drain();
    await reply(id, '0');
    await reply(id, '1');
    await fanin.drain();
    fanin.clock.advance(24_000);
    // The third reply's handler is killed right after its put
    const store = new Proxy(fanin.ctx.store, {
      get(target, property, receiver) {
        const value = Reflect.get(target, property, receiver);
        if (property !== 'putReplies' || typeof value !== 'function') return value;
        return async (...args: unknown[]) => {
          await (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
          throw new InjectedCrash('after store.putReplies');
        };
      },
    });
    const third: RawMessage = {
      messageId: `${id}-2`,
      body: JSON.stringify({ v: 2 }),
      attributes: { 'fanin-aggregate-id': id, 'fanin-reply-id': '2' },
      receiveCount: 1,
    };
    expect([...(await handleReplies({ ...fanin.ctx, store }, [third]))]).toEqual([third.messageId]);

    // Act: the sweeper finds the aggregate due (its timer lost), with the three replies recorded
    await fanin.sweep();

    // Assess (mutant killed: the seal's members not limited to replies before the deadline): the
    // deadline decides on replies 0 and 1 only; reply 2 is late, never all-arrived
    const output = fanin.expectExactlyOneTerminalOutput(id).output;
    expect(output).toMatchObject({
      type: 'fanin.aggregate.timed-out',
      completedBy: 'deadline',
      counts: { received: 2 },
      missing: [{ replyId: '2' }],
    });
    expect(lateOf(id)).toEqual([['2', expect.stringContaining('deadline')]]);
  });

  it('is a member when it arrived before the deadline and its first handling died, even redelivered after it', async () => {
    // Prepare: two of three replies recorded; the third is sent before the deadline, and its
    // first handling dies before it records anything
    const id = `redelivered-${Date.now().toString(36)}`;
    await fanin.sendRequest({ definition: 'trio', aggregateId: id, expected: 3 });
    await fanin.drain();
    await reply(id, '0');
    await reply(id, '1');
    await fanin.drain();
    const deadline = (await fanin.ctx.store.getHeader(id))?.deadline ?? 0;
    fanin.clock.advance(15_000);
    await reply(id, '2');
    let crashed = 0;
    const store = new Proxy(fanin.ctx.store, {
      get(target, property, receiver) {
        const value = Reflect.get(target, property, receiver);
        if (property !== 'putReplies' || typeof value !== 'function') return value;
        return async (...args: unknown[]) => {
          if (crashed === 0) {
            crashed += 1;
            throw new InjectedCrash('before store.putReplies');
          }
          return (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
        };
      },
    });
    fanin.buildContext({ store });

    // Act: SQS hands it back after the visibility timeout, past the deadline (its timer lost)
    await fanin.drain();
    fanin.buildContext();
    await fanin.drain();

    // Assess (mutant killed: a reply's arrival taken as the clock of the invocation recording
    // it): the redelivery came after the deadline, yet all three arrived before it: completed
    expect(crashed).toBe(1);
    expect(fanin.clock.now).toBeGreaterThanOrEqual(deadline);
    const output = fanin.expectExactlyOneTerminalOutput(id).output;
    expect(output).toMatchObject({ type: 'fanin.aggregate.completed', counts: { received: 3 } });
    expect(lateOf(id)).toEqual([]);
  });

  it('is late whatever time its own attributes claim: a forged send time makes no member', async () => {
    // Prepare: two of three replies before the deadline; the timer never fires
    const id = `forged-${Date.now().toString(36)}`;
    await fanin.sendRequest({ definition: 'trio', aggregateId: id, expected: 3 });
    await fanin.drain();
    const openedAt = fanin.clock.now;
    await reply(id, '0');
    await reply(id, '1');
    await fanin.drain();
    fanin.clock.advance(24_000);

    // Act: the third reply, after the deadline, claiming in its attributes to have been sent at
    // the open (the names SQS and a move would use)
    const early = String(openedAt);
    await fanin.sendReply(
      { v: 2 },
      {
        'fanin-aggregate-id': id,
        'fanin-reply-id': '2',
        SentTimestamp: early,
        'fanin-sent-at': early,
        'fanin-first-sent-at': early,
      },
    );
    await fanin.drain();

    // Assess (mutant killed: a message attribute taken as its send time): late, not a member
    const output = fanin.expectExactlyOneTerminalOutput(id).output;
    expect(output).toMatchObject({ type: 'fanin.aggregate.timed-out', counts: { received: 2 } });
    expect(lateOf(id)).toEqual([['2', expect.stringContaining('deadline')]]);
  });

  it("takes a moved copy's first send time only from fanin's mover, never from a responder", async () => {
    // Prepare: two aggregates, each with two of three replies; the timers never fire
    const ids = ['mover', 'responder'].map((who) => `sender-${who}-${Date.now().toString(36)}`);
    for (const id of ids) {
      await fanin.sendRequest({ definition: 'trio', aggregateId: id, expected: 3 });
      await fanin.drain();
      await reply(id, '0');
      await reply(id, '1');
      await fanin.drain();
    }
    const early = fanin.clock.now;
    fanin.clock.advance(24_000);
    const ctx = { ...fanin.ctx, trustedMovers: ['AROAMOVER'] };
    /** The third reply as SQS hands it over 4 s after the deadline, claiming it was first sent before. */
    const third = (id: string, senderId: string): RawMessage => ({
      messageId: `${id}-2`,
      body: JSON.stringify({ v: 2 }),
      attributes: {
        'fanin-aggregate-id': id,
        'fanin-reply-id': '2',
        'fanin-origin-sent-at': String(early),
      },
      receiveCount: 1,
      sentAt: fanin.clock.now,
      senderId,
    });

    // Act: one copy sent by the distributor's role (a session of it), one by a responder
    const [byMover, byResponder] = ids as [string, string];
    await handleReplies(ctx, [third(byMover, 'AROAMOVER:distributor-session')]);
    await handleReplies(ctx, [third(byResponder, 'AROARESPONDER:r')]);

    // Assess (mutant killed: the carried time taken whoever sent the copy): the mover's copy
    // arrived before the deadline and completes its aggregate; the responder's is late
    expect(fanin.expectExactlyOneTerminalOutput(byMover).output).toMatchObject({
      type: 'fanin.aggregate.completed',
      counts: { received: 3 },
    });
    expect(fanin.expectExactlyOneTerminalOutput(byResponder).output).toMatchObject({
      type: 'fanin.aggregate.timed-out',
      counts: { received: 2 },
    });
    expect(lateOf(byResponder)).toEqual([['2', expect.stringContaining('deadline')]]);
  });
});
