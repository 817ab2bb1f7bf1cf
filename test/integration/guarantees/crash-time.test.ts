import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RawMessage } from '../../../shared/ports.ts';
import type { FaninContext } from '../../../shared/use-cases/context.ts';
import { handleRequest } from '../../../shared/use-cases/fan-out.ts';
import { InjectedCrash } from '../../support/failpoints.ts';
import { FaninUnderTest } from '../../support/fanin.ts';

/**
 * A fan-out killed after it wrote its aggregate and before it sent the sub-requests: the
 * request comes back only after ingress's visibility timeout, later than the
 * deadline, and the aggregate ends at its deadline (here the sweeper's, the timer being armed
 * only after the sends). Its result says which recipients were never asked — certain, since the
 * fan-out records how far it may have sent before each send — instead of listing them missing as
 * if they had not answered; and a sub-request that may have been sent is never said unasked.
 */
describe('a fan-out killed between its aggregate and its sub-requests', () => {
  let fanin: FaninUnderTest;
  let banks: string[];

  beforeAll(async () => {
    fanin = await FaninUnderTest.start([
      {
        name: 'quotes',
        fanOut: { type: 'recipient-list' },
        completion: { strategy: 'all' },
        timeoutSeconds: 20,
      },
    ]);
    banks = [
      await fanin.targetQueue('bank-a'),
      await fanin.targetQueue('bank-b'),
      await fanin.targetQueue('bank-c'),
    ];
  });
  afterAll(() => fanin.stop());

  /** A context whose state store call `call` kills the invocation before it is made. */
  const killedAt = (call: string, port: 'store' | 'timers'): FaninContext => {
    const wrap = <T extends object>(target: T): T =>
      new Proxy(target, {
        get(t, property, receiver) {
          const value = Reflect.get(t, property, receiver);
          if (property !== call || typeof value !== 'function') return value;
          return () => Promise.reject(new InjectedCrash(`${port}.${call}`));
        },
      });
    return port === 'store'
      ? { ...fanin.ctx, store: wrap(fanin.ctx.store) }
      : { ...fanin.ctx, timers: wrap(fanin.ctx.timers) };
  };
  const request = (id: string): RawMessage => ({
    messageId: `request-${id}`,
    body: JSON.stringify({ definition: 'quotes', aggregateId: id, recipients: banks }),
    attributes: {},
    receiveCount: 1,
  });
  const sentTo = async () =>
    (await Promise.all(banks.map((b) => fanin.takeRequests(b)))).map((m) => m.length);

  it('ends at its deadline with every recipient listed as never asked, and the late retry asks none', async () => {
    // Prepare: killed after the aggregate's write, before recording any send
    const id = `killed-${Date.now().toString(36)}`;
    await expect(handleRequest(killedAt('markAsked', 'store'), request(id))).rejects.toThrow(InjectedCrash);
    expect(await sentTo()).toEqual([0, 0, 0]);

    // Act: the deadline passes (its timer was never armed): the sweeper ends it; then, after
    // ingress's visibility timeout, the request is redelivered
    fanin.clock.advance(21_000);
    await fanin.sweep();
    fanin.clock.advance(180_000);
    await handleRequest(fanin.ctx, { ...request(id), receiveCount: 2 });

    // Assess (mutant killed: the missing list not marked from the recorded progress): timed out,
    // each recipient missing and never asked; the retry sends nothing to an ended aggregate
    const { output } = fanin.expectExactlyOneTerminalOutput(id);
    expect(output).toMatchObject({
      type: 'fanin.aggregate.timed-out',
      counts: { expected: 3, received: 0 },
      missing: banks.map((label, i) => ({ replyId: String(i), label, asked: false })),
    });
    expect(await sentTo()).toEqual([0, 0, 0]);
  });

  it('never says a recipient was not asked once its sub-request may have been sent', async () => {
    // Prepare: killed after the sends, before the completion is evaluated (the deadline timer is
    // armed before the sends)
    const id = `sent-${Date.now().toString(36)}`;
    await expect(handleRequest(killedAt('readAggregate', 'store'), request(id))).rejects.toThrow(
      InjectedCrash,
    );
    const asked = await Promise.all(banks.map((b) => fanin.takeRequests(b)));
    expect(asked.map((m) => m.length)).toEqual([1, 1, 1]);
    const first = asked[0]?.[0];
    if (!first) throw new Error('bank-a was not asked');
    await fanin.reply(first, { rate: 3.1 });
    await fanin.drain();

    // Act: the deadline passes with the timer lost
    fanin.clock.advance(21_000);
    await fanin.sweep();

    // Assess: the two who did not answer are missing, and were asked
    const { output } = fanin.expectExactlyOneTerminalOutput(id);
    expect(output).toMatchObject({ type: 'fanin.aggregate.timed-out', counts: { received: 1 } });
    expect(output.missing).toEqual([
      { replyId: '1', label: banks[1] },
      { replyId: '2', label: banks[2] },
    ]);
  });
});
