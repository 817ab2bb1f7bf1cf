import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handleTimer } from '../../../shared/use-cases/timers.ts';
import { InjectedCrash } from '../../support/failpoints.ts';
import { FaninUnderTest } from '../../support/fanin.ts';

/**
 * What a crash does to time (docs/wire-contract.md, "Late replies and the deadline"): a
 * reply SQS accepted before the deadline, whose handling crashed, comes back only when its
 * visibility timeout ends. If the deadline has sealed its aggregate by then, it is late — never a
 * member of the result fixed without it — and its late output says it was sent before the
 * deadline, with both times.
 */
/** The settle window of definition `settled`: longer than any reply partition's visibility timeout. */
const SETTLE_SECONDS = 3_600;

describe('a reply sent before the deadline whose handling crashed, handed back after the seal', () => {
  let fanin: FaninUnderTest;

  beforeAll(async () => {
    fanin = await FaninUnderTest.start(
      [
        { name: 'trio', fanOut: { type: 'none' }, completion: { strategy: 'all' }, timeoutSeconds: 20 },
        {
          name: 'settled',
          fanOut: { type: 'none' },
          completion: { strategy: 'all' },
          timeoutSeconds: 20,
          deadlineSettleSeconds: SETTLE_SECONDS,
        },
      ],
      { overrides: { trustedMovers: [] } },
    );
  });
  afterAll(() => fanin.stop());

  const reply = (id: string, replyId: string) =>
    fanin.sendReply({ v: Number(replyId) }, { 'fanin-aggregate-id': id, 'fanin-reply-id': replyId });

  /** Sends three replies to a new aggregate of `definition`; the third's handling crashes before it records anything. */
  async function crashedThird(definition: string) {
    const id = `${definition}-${Date.now().toString(36)}`;
    await fanin.sendRequest({ definition, aggregateId: id, expected: 3 });
    await fanin.drain();
    await reply(id, '0');
    await reply(id, '1');
    await fanin.drain();
    const deadline = (await fanin.ctx.store.getHeader(id))?.deadline ?? 0;
    fanin.clock.advance(15_000);
    const sentAt = fanin.clock.now;
    await reply(id, '2');
    let crashed = 0;
    const store = new Proxy(fanin.ctx.store, {
      get(target, property, receiver) {
        const value = Reflect.get(target, property, receiver);
        if (property !== 'putReplies' || typeof value !== 'function') return value;
        return async () => {
          crashed += 1;
          throw new InjectedCrash('before store.putReplies');
        };
      },
    });
    fanin.buildContext({ store });
    for (let i = 0; i < fanin.provisioned.replyQueueUrls.length; i += 1) await fanin.consumePartition(i);
    fanin.buildContext();
    expect(crashed).toBe(1);
    return { id, deadline, sentAt };
  }

  /** The late outputs of an aggregate, once per output id: [replyId, reason]. */
  const lateOf = (id: string) => [
    ...new Map(
      fanin
        .publications(id)
        .filter((p) => p.channel === 'late')
        .map((p) => [p.body.id, [p.body.replyId, p.body.reason]]),
    ).values(),
  ];

  it('is a member with deadlineSettleSeconds: the deadline decides only after the settle window', async () => {
    // Prepare: the third reply sent 5 s before the deadline, its handling crashed
    const { id, deadline } = await crashedThird('settled');
    const visibility = Math.max(...fanin.topology.replyPartitions.map((p) => p.visibilityTimeoutSeconds));
    expect(visibility).toBeLessThan(SETTLE_SECONDS);

    // Act: 1 s after the deadline the sweep finds nothing due (its due entry is at the deadline
    // plus the settle window); SQS then hands the reply back at the end of its visibility timeout
    fanin.clock.advance(deadline + 1_000 - fanin.clock.now);
    const due = await fanin.ctx.store.dueItems(fanin.clock.now, 1_000);
    await fanin.sweep();
    // a deadline timer firing at the deadline itself (armed before, or early) decides nothing
    await handleTimer(fanin.ctx, {
      messageId: `${id}-timer`,
      body: JSON.stringify({ kind: 'deadline', aggregateId: id, dueAt: deadline }),
      attributes: {},
      receiveCount: 1,
    });
    expect(due.filter((item) => item.aggregateId === id)).toEqual([]);
    expect(fanin.publications(id).filter((p) => p.channel !== 'late')).toEqual([]);
    await fanin.drain();

    // Assess (mutants killed: 'the deadline decides at the deadline whatever its settle window'
    // (its due entry; its timer), 'settle not carried in the parameters'): handled after the deadline but sent before it, reply 2 is a member
    // and the aggregate completes by its rule
    expect(fanin.clock.now).toBeGreaterThan(deadline);
    expect(fanin.expectExactlyOneTerminalOutput(id).output).toMatchObject({
      type: 'fanin.aggregate.completed',
      counts: { expected: 3, received: 3 },
    });
    expect(lateOf(id)).toEqual([]);
  });

  it('with deadlineSettleSeconds, a reply sent after the deadline is still late and the deadline decides at its end', async () => {
    // Prepare: two of three replies; the third is sent 5 s after the deadline, within the window
    const id = `settled-after-${Date.now().toString(36)}`;
    await fanin.sendRequest({ definition: 'settled', aggregateId: id, expected: 3 });
    await fanin.drain();
    await reply(id, '0');
    await reply(id, '1');
    await fanin.drain();
    const header = await fanin.ctx.store.getHeader(id);
    const deadline = header?.deadline ?? 0;
    expect(header?.closeBy).toBeGreaterThanOrEqual(deadline + SETTLE_SECONDS * 1000);
    fanin.clock.advance(deadline + 5_000 - fanin.clock.now);
    await reply(id, '2');
    await fanin.drain();
    expect(fanin.publications(id).filter((p) => p.channel !== 'late')).toEqual([]);

    // Act: the sweep just before the window ends, then at its end
    fanin.clock.advance(deadline + SETTLE_SECONDS * 1000 - 1 - fanin.clock.now);
    await fanin.sweep();
    expect(fanin.publications(id).filter((p) => p.channel !== 'late')).toEqual([]);
    fanin.clock.advance(1);
    await fanin.sweep();

    // Assess (mutant killed: 'a reply sent in the settle window is a member'): timed out on the
    // two replies sent before the deadline; reply 2 late, as without the window
    expect(fanin.expectExactlyOneTerminalOutput(id).output).toMatchObject({
      type: 'fanin.aggregate.timed-out',
      completedBy: 'deadline',
      counts: { received: 2 },
      missing: [{ replyId: '2' }],
    });
    expect(lateOf(id)).toEqual([['2', expect.stringContaining('deadline')]]);
  });

  it('is late, its reason giving its send time before the deadline, and the timed-out result stands', async () => {
    // Prepare: two of three replies recorded; the third is sent 15 s after the open (5 s before
    // the deadline) and its handling crashes before it records anything
    const { id, deadline, sentAt } = await crashedThird('trio');

    // Act: the deadline decides (the sweep, 1 s after it) while the reply is still invisible, then
    // SQS hands the reply back at the end of its visibility timeout
    fanin.clock.advance(deadline + 1_000 - fanin.clock.now);
    await fanin.sweep();
    const sealed = fanin.expectExactlyOneTerminalOutput(id).output;
    await fanin.drain();

    // Assess (mutant killed: 'settle: late reason without the send time'): the result was fixed
    // without reply 2 and stays so; reply 2 is on the late output once, saying it was sent before
    // the deadline
    expect(sealed).toMatchObject({ type: 'fanin.aggregate.timed-out', counts: { received: 2 } });
    expect(fanin.clock.now).toBeGreaterThan(deadline);
    expect(fanin.expectExactlyOneTerminalOutput(id).output).toMatchObject({
      type: 'fanin.aggregate.timed-out',
      missing: [{ replyId: '2' }],
    });
    const late = [
      ...new Map(
        fanin
          .publications(id)
          .filter((p) => p.channel === 'late')
          .map((p) => [p.body.id, [p.body.replyId, p.body.reason]]),
      ).values(),
    ];
    expect(late).toEqual([
      [
        '2',
        `aggregate is closed (timed-out): the reply was sent at ${new Date(sentAt).toISOString()}, before the deadline at ${new Date(deadline).toISOString()}, and came after its result was fixed`,
      ],
    ]);
  });
});
