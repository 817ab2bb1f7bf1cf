import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HeldClaim, StateStore } from '../../shared/ports.ts';
import { handleRequest } from '../../shared/use-cases/fan-out.ts';
import { expireHeld } from '../../shared/use-cases/timers.ts';
import { FaninUnderTest } from '../support/fanin.ts';

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
    let opened = false;
    const store = new Proxy(healthy.store, {
      get(target, property, receiver) {
        const value = Reflect.get(target, property, receiver);
        if (property !== 'claimHeld' || typeof value !== 'function') return value;
        return async (aggregateId: string, replyId: string, claim: HeldClaim) => {
          if (claim === 'unknown' && !opened) {
            opened = true;
            // The request lands now: the aggregate opens and consolidates the held reply.
            await handleRequest(healthy, {
              messageId: 'req-lo-1',
              body: JSON.stringify({ definition: 'late-open', aggregateId: 'lo-1', expected: 1 }),
              attributes: {},
              receiveCount: 1,
            });
          }
          return (value as StateStore['claimHeld']).call(target, aggregateId, replyId, claim);
        };
      },
    });

    // Act
    await expireHeld({ ...healthy, store }, 'lo-1', 'r', false);
    await fanin.drain();

    // Assess (mutant killed: the timeout publishes without claiming — the reply is then both in
    // the result and on the unknown output)
    expect(opened).toBe(true);
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
    let opened = false;
    const store = new Proxy(healthy.store, {
      get(target, property, receiver) {
        const value = Reflect.get(target, property, receiver);
        if (property !== 'claimHeld' || typeof value !== 'function') return value;
        return async (aggregateId: string, replyId: string, claim: HeldClaim) => {
          if (claim === 'unknown' && !opened) {
            opened = true;
            await handleRequest(dying, {
              messageId: 'req-lo-2',
              body: JSON.stringify({ definition: 'late-open', aggregateId: 'lo-2', expected: 1 }),
              attributes: {},
              receiveCount: 1,
            }).catch(() => undefined);
          }
          return (value as StateStore['claimHeld']).call(target, aggregateId, replyId, claim);
        };
      },
    });

    // Act
    await expireHeld({ ...healthy, store }, 'lo-2', 'r', false);
    await fanin.drain();

    // Assess (mutant killed: a claim that overwrites the other fate — the timeout's `unknown`
    // then replaces `counted`, and the reply is in the result and on the unknown output)
    expect(opened).toBe(true);
    const { output } = fanin.expectExactlyOneTerminalOutput('lo-2', 'content');
    expect(output).toMatchObject({ counts: { received: 1 } });
    expect((await fanin.outputs('unknown')).filter((o) => o.aggregateId === 'lo-2')).toEqual([]);
  });
});
