import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { eachFailpoint, expectInvariants } from '../../support/failpoints.ts';
import { FaninUnderTest } from '../../support/fanin.ts';

/**
 * The outcome and the member set of an aggregate are fixed once, before anything is published;
 * every later attempt publishes the same. A `custom` (JSONata) aggregation's time budget is wall
 * clock, so a stall during the first build can fail it while a retry would succeed: that must
 * never give `fanin.aggregate.failed` on the error output and `fanin.aggregate.completed` on the
 * completed output under the same id.
 *
 * The stall is simulated by making `Date.now` (which JSONata's time budget reads) jump by a
 * second per call while the first attempt runs; the test's clock (the use cases' clock) is not
 * touched.
 */
describe('outcome fixed once', () => {
  let fanin: FaninUnderTest;
  let n = 0;

  beforeAll(async () => {
    fanin = await FaninUnderTest.start([
      {
        name: 'custom',
        fanOut: { type: 'none' },
        completion: { strategy: 'all' },
        aggregation: {
          algorithm: 'custom',
          expression: '{ "total": $sum(replies.v), "n": $count(replies) }',
        },
        timeoutSeconds: 3600,
      },
    ]);
  });
  afterAll(() => fanin.stop());
  afterEach(() => {
    vi.restoreAllMocks();
  });

  /** From now on every `Date.now()` is a second later than the last: any time budget runs out. */
  function stall(): () => void {
    const real = Date.now.bind(Date);
    let skew = 0;
    const spy = vi.spyOn(Date, 'now').mockImplementation(() => {
      skew += 1000;
      return real() + skew;
    });
    return () => spy.mockRestore();
  }

  async function open(id: string, expected: number): Promise<void> {
    await fanin.sendRequest({ definition: 'custom', aggregateId: id, expected });
    await fanin.drain();
  }
  const reply = (id: string, r: number) =>
    fanin.sendReply({ v: r + 1 }, { 'fanin-aggregate-id': id, 'fanin-reply-id': String(r) });

  it('a build that stalls, then a crash right after publishing: every re-publication has the same type and content', async () => {
    // Kills the mutant "decide the outcome while building the result, not at the seal".
    // Prepare
    const id = `stall-${++n}`;
    await open(id, 2);
    await reply(id, 0);
    await fanin.drain();

    // Act: the completing attempt stalls in its build and dies right after its publication landed
    const unstall = stall();
    fanin.probe.crashAt(
      { where: (c) => c.name === 'SQS.SendMessage' && ['completed', 'error'].includes(c.queueRole ?? '') },
      'after',
    );
    try {
      await reply(id, 1);
      await fanin.consumePartition(0);
    } finally {
      unstall();
      fanin.probe.disarm();
    }
    fanin.clock.advance(fanin.ctx.completionLeaseMs + 1);
    await fanin.sweep().catch(() => 0);
    await fanin.drain();

    // Assess: every publication of the result has the same type and content (content mode: the
    // crash fell between the publication and its record, so a re-publication is allowed)
    const { output } = fanin.expectExactlyOneTerminalOutput(id, 'content');
    expect(['fanin.aggregate.completed', 'fanin.aggregate.failed']).toContain(output.type);
    const types = fanin
      .publications(id)
      .filter((p) => p.body.id === `${id}/result`)
      .map((p) => p.body.type);
    expect(new Set(types)).toEqual(new Set([output.type]));
  });

  it('a stalled first build and a crash at any AWS call: every publication of the result has the same type and content', async () => {
    // Kills the mutant "always re-publish, ignoring emitted" and "rebuild the outcome on resume".
    await eachFailpoint(
      fanin,
      async (id) => {
        await open(id, 2);
        await reply(id, 0);
        await reply(id, 1);
        const unstall = stall();
        try {
          await fanin.drain();
        } finally {
          unstall();
        }
      },
      async (id, run) => {
        const output = await expectInvariants(fanin, id, {
          mode: run.terminalMode,
          expectError: true,
          replyIds: ['0', '1'],
        });
        expect(['fanin.aggregate.completed', 'fanin.aggregate.failed']).toContain(output.type);
        expect(await fanin.ctx.store.getHeader(id)).toMatchObject({ status: 'closed' });
      },
    );
  }, 300_000);

  it('without a stall the custom result is built once and published once', async () => {
    // Prepare
    const id = `plain-${++n}`;
    await open(id, 3);

    // Act
    for (const r of [0, 1, 2]) await reply(id, r);
    await fanin.drain();

    // Assess
    const output = await expectInvariants(fanin, id, { mode: 'strict', replyIds: ['0', '1', '2'] });
    expect(output).toMatchObject({ type: 'fanin.aggregate.completed', result: { total: 6, n: 3 } });
  });
});
