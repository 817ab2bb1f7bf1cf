import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HeldClaim, StateStore } from '../../../shared/ports.ts';
import type { FaninContext } from '../../../shared/use-cases/context.ts';
import { handleRequest } from '../../../shared/use-cases/fan-out.ts';
import { expireHeld } from '../../../shared/use-cases/timers.ts';
import { FaninUnderTest } from '../../support/fanin.ts';

/**
 * Issue 11, item 6, in its narrowest window: a held reply's unknown timeout has found no aggregate,
 * and before it claims the reply `unknown`, the fan-out opens the aggregate and consolidates it.
 * The claim is what keeps the reply from being counted and reported unknown both.
 */
describe('a held reply whose aggregate appears between the timeout’s look and its claim', () => {
  let fanin: FaninUnderTest;

  beforeAll(async () => {
    fanin = await FaninUnderTest.start([
      {
        name: 'late-open',
        fanOut: { type: 'none' },
        completion: { strategy: 'all' },
        unknownTimeoutSeconds: 5,
      },
    ]);
  });
  afterAll(() => fanin.stop());

  /**
   * The context whose held-reply claims run `fanOut` first, once, just before the timeout claims
   * a reply `unknown`: the request lands in the narrowest window there is.
   */
  function openingBeforeUnknownClaim(
    ctx: FaninContext,
    fanOut: () => Promise<void>,
  ): { ctx: FaninContext; opened: () => boolean } {
    let opened = false;
    const store = new Proxy(ctx.store, {
      get(target, property, receiver) {
        const value = Reflect.get(target, property, receiver);
        if (property !== 'claimHeld' || typeof value !== 'function') return value;
        return async (aggregateId: string, replyId: string, claim: HeldClaim) => {
          if (claim === 'unknown' && !opened) {
            opened = true;
            await fanOut();
          }
          return (value as StateStore['claimHeld']).call(target, aggregateId, replyId, claim);
        };
      },
    });
    return { ctx: { ...ctx, store }, opened: () => opened };
  }

  /** The request that opens aggregate `id`, as it comes off the ingress queue. */
  const requestFor = (id: string) => ({
    messageId: `req-${id}`,
    body: JSON.stringify({ definition: 'late-open', aggregateId: id, expected: 1 }),
    attributes: {},
    receiveCount: 1,
  });

  it('is counted in the result and never published unknown', async () => {
    // Prepare: the reply arrives first and is held; its unknown timeout passes
    await fanin.sendReply(
      { quote: 1 },
      { 'fanin-aggregate-id': 'lo-1', 'fanin-reply-id': 'r', 'fanin-definition': 'late-open' },
    );
    await fanin.drain();
    expect(await fanin.ctx.store.getHeld('lo-1', 'r')).toBeDefined();
    fanin.clock.advance(6_000);
    const healthy = fanin.ctx;
    // The request lands now: the aggregate opens and consolidates the held reply.
    const timer = openingBeforeUnknownClaim(healthy, () => handleRequest(healthy, requestFor('lo-1')));

    // Act
    await expireHeld(timer.ctx, 'lo-1', 'r', false);
    await fanin.drain();

    // Assess (mutant killed: the timeout publishes without claiming — the reply is then both in
    // the result and on the unknown output)
    expect(timer.opened()).toBe(true);
    const { output } = fanin.expectExactlyOneTerminalOutput('lo-1');
    expect(output).toMatchObject({ counts: { received: 1 } });
    expect((await fanin.outputs('unknown')).filter((o) => o.aggregateId === 'lo-1')).toEqual([]);
    expect(await fanin.ctx.store.getHeld('lo-1', 'r')).toBeUndefined();
  });

  it('once counted by a consolidation that died before removing it, is never claimed unknown by its timeout', async () => {
    // Prepare: held, its timeout passed
    await fanin.sendReply(
      { quote: 2 },
      { 'fanin-aggregate-id': 'lo-2', 'fanin-reply-id': 'r', 'fanin-definition': 'late-open' },
    );
    await fanin.drain();
    fanin.clock.advance(6_000);
    const healthy = fanin.ctx;
    // The consolidation claims the reply `counted` and records it, then dies before deleting it.
    const dying = {
      ...healthy,
      store: new Proxy(healthy.store, {
        get(target, property, receiver) {
          const value = Reflect.get(target, property, receiver);
          if (property !== 'deleteHeld') return value;
          return () => Promise.reject(new Error('the fan-out died before removing the held reply'));
        },
      }),
    };
    const timer = openingBeforeUnknownClaim(healthy, () =>
      handleRequest(dying, requestFor('lo-2')).catch(() => undefined),
    );

    // Act
    await expireHeld(timer.ctx, 'lo-2', 'r', false);
    await fanin.drain();

    // Assess (mutant killed: a claim that overwrites the other fate — the timeout's `unknown`
    // then replaces `counted`, and the reply is in the result and on the unknown output)
    expect(timer.opened()).toBe(true);
    const { output } = fanin.expectExactlyOneTerminalOutput('lo-2', 'content');
    expect(output).toMatchObject({ counts: { received: 1 } });
    expect((await fanin.outputs('unknown')).filter((o) => o.aggregateId === 'lo-2')).toEqual([]);
  });

  it('once claimed unknown by a timeout that died before removing it, is never counted when its aggregate opens', async () => {
    // Prepare: held, its timeout passed; the timeout claims it unknown and publishes it, then dies
    await fanin.sendReply(
      { quote: 3 },
      { 'fanin-aggregate-id': 'lo-3', 'fanin-reply-id': 'r', 'fanin-definition': 'late-open' },
    );
    await fanin.drain();
    fanin.clock.advance(6_000);
    const healthy = fanin.ctx;
    const dying = {
      ...healthy,
      store: new Proxy(healthy.store, {
        get(target, property, receiver) {
          const value = Reflect.get(target, property, receiver);
          if (property !== 'deleteHeld') return value;
          return () => Promise.reject(new Error('the timeout died before removing the held reply'));
        },
      }),
    };
    await expireHeld(dying, 'lo-3', 'r', false).catch(() => undefined);
    expect(await fanin.ctx.store.getHeld('lo-3', 'r')).toMatchObject({ claimed: 'unknown' });

    // Act: the aggregate opens and consolidates what is held under it
    await handleRequest(healthy, requestFor('lo-3'));
    await fanin.drain();

    // Assess (mutant killed: a consolidation that counts held replies without claiming them — the
    // reply is then on the unknown output and in the result)
    expect((await fanin.outputs('unknown')).filter((o) => o.aggregateId === 'lo-3')).toHaveLength(1);
    fanin.expectNoTerminalOutput('lo-3');
    expect((await fanin.ctx.store.readAggregate('lo-3')).replies).toEqual([]);
  });
});
