import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AggregateStatus } from '../../../shared/engine/constants.ts';
import type { StateStore } from '../../../shared/ports.ts';
import { handleReplies } from '../../../shared/use-cases/replies.ts';
import { expireAggregate } from '../../../shared/use-cases/timers.ts';
import { sealingAfter } from '../../support/failpoints.ts';
import { FaninUnderTest } from '../../support/fanin.ts';

/**
 * The window the seal's argument covers (docs/data-plane.md): a reply recorded after the
 * completer read the aggregate but before it sealed it. Its own handler saw the aggregate open, so
 * only the completer's second read, after the seal, can tell it that it is late.
 */
describe('a reply between the completer’s read and its seal', () => {
  let fanin: FaninUnderTest;

  beforeAll(async () => {
    fanin = await FaninUnderTest.start(
      [
        {
          name: 'window',
          fanOut: { type: 'none' },
          // Only the deadline completes it: the racing reply's own handler never reads the set.
          completion: { strategy: 'timeout', completeWhenAllArrived: false },
          timeoutSeconds: 60,
        },
        {
          name: 'stuck',
          fanOut: { type: 'none' },
          completion: { strategy: 'all' },
        },
      ],
      { claimCheckThresholdBytes: 200_000 },
    );
  });
  afterAll(() => fanin.stop());

  it('is routed late by the completer, never lost and never in the result', async () => {
    // Prepare: one reply in, the deadline passed
    await fanin.sendRequest({ definition: 'window', aggregateId: 'race-1', expected: 2 });
    await fanin.drain();
    await fanin.sendReply({ r: 0 }, { 'fanin-aggregate-id': 'race-1', 'fanin-reply-id': 'a' });
    await fanin.drain();
    fanin.clock.advance(61_000);
    const healthy = fanin.ctx;

    // Act: the deadline completer reads the aggregate; just before its seal, a second reply is
    // recorded by another invocation, which sees the aggregate still open and acknowledges it
    let raced: Set<string> | undefined;
    const completer = sealingAfter(healthy, async () => {
      // The racing invocation's clock is behind (before the deadline), so it records b and
      // leaves the decision to the completer instead of timing the aggregate out itself.
      const behind = { ...healthy, clock: () => fanin.clock.now - 30_000 };
      raced = await handleReplies(behind, [
        {
          messageId: 'm-racer',
          body: JSON.stringify({ r: 1 }),
          attributes: { 'fanin-aggregate-id': 'race-1', 'fanin-reply-id': 'b' },
          receiveCount: 1,
          // Sent before the deadline (else it would be late for that alone, wire-contract.md
          // "Late replies and the deadline"), handled only now.
          sentAt: fanin.clock.now - 30_000,
        },
      ]);
    });
    await expireAggregate(completer, 'race-1', false);
    await fanin.drain();

    // Assess (mutant killed: the completer's second read routes nothing — reply b is then
    // neither in the result nor on the late output)
    expect(raced?.size).toBe(0);
    const { output } = fanin.expectExactlyOneTerminalOutput('race-1');
    expect(output).toMatchObject({ counts: { received: 1 } });
    expect((output.result as { replyId: string }[]).map((r) => r.replyId)).toEqual(['a']);
    const late = (await fanin.outputs('late')).filter((o) => o.aggregateId === 'race-1');
    expect(late.map((o) => o.replyId)).toEqual(['b']);
    expect(late[0]).toMatchObject({
      reason: expect.stringContaining('completing'),
      message: { messageId: 'm-racer' },
    });
  });

  it('a sealed result that cannot be rebuilt alarms and stays completing instead of publishing another', async () => {
    // Prepare: the owner seals, then dies before publishing; then its reply set is altered behind
    // fanin's back so the rebuild cannot give the sealed outcome (a reply item emptied)
    await fanin.sendRequest({ definition: 'stuck', aggregateId: 'stuck-1', expected: 1 });
    await fanin.drain();
    const healthy = fanin.ctx;
    fanin.ctx = {
      ...healthy,
      outputs: { publish: () => Promise.reject(new Error('the owner died before publishing')) },
    };
    await fanin.sendReply({ r: 0 }, { 'fanin-aggregate-id': 'stuck-1', 'fanin-reply-id': 'a' });
    await fanin.drain().catch(() => undefined);
    fanin.ctx = healthy;
    expect(await fanin.ctx.store.getHeader('stuck-1')).toMatchObject({ status: AggregateStatus.COMPLETING });
    const unbuildable = new Proxy(healthy.store, {
      get(target, property, receiver) {
        const value = Reflect.get(target, property, receiver);
        if (property !== 'readAggregate' || typeof value !== 'function') return value;
        return async (id: string) => {
          const read = await (value as StateStore['readAggregate']).call(target, id);
          // The stored body now points at an object that does not exist.
          return {
            ...read,
            replies: read.replies.map((r) => ({
              ...r,
              payload: '',
              payloadRef: { s3BucketName: fanin.provisioned.bucketName as string, s3Key: 'state/gone' },
            })),
          };
        };
      },
    });

    // Act: the lease runs out and the sweeper resumes with a store whose bodies are gone
    fanin.clock.advance(healthy.completionLeaseMs + 1);
    const resumer = { ...healthy, store: unbuildable };
    await expireAggregate(resumer, 'stuck-1', false).catch(() => undefined);

    // Assess (mutant killed: a resumer that publishes whatever it rebuilt — here `failed`, after
    // the seal said `completed`)
    fanin.expectNoTerminalOutput('stuck-1');
    expect(fanin.alarms('completion-stuck').length).toBeGreaterThan(0);
    expect(await fanin.ctx.store.getHeader('stuck-1')).toMatchObject({
      status: AggregateStatus.COMPLETING,
      outcome: 'completed',
    });
  });
});
