import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FAILURE_ATTRIBUTE } from '../../../shared/engine/completion/failures.ts';
import { AggregateStatus } from '../../../shared/engine/constants.ts';
import type { RawMessage } from '../../../shared/ports.ts';
import { handleReplies } from '../../../shared/use-cases/replies.ts';
import { FaninUnderTest } from '../../support/fanin.ts';

/**
 * A large fan-out (above the completion trigger's threshold) learns that every reply is in from
 * block marks or a per-batch counter, not from reading its whole reply set. A batch that holds a
 * failed reply is read whole (a failure beyond the tolerance ends the aggregate at once), and it
 * must still leave its mark: otherwise the block it completed is never marked and the aggregate,
 * with every reply in, waits for its deadline. These tests read the header and the publications
 * as sent (below FIFO deduplication); no timer ever fires in them.
 */
describe('a large fan-out whose batches hold failed replies', () => {
  let fanin: FaninUnderTest;
  const target = `trig-${Math.random().toString(36).slice(2, 8)}`;
  const EXPECTED = 130;

  beforeAll(async () => {
    fanin = await FaninUnderTest.start([
      {
        name: 'wide',
        fanOut: { type: 'splitter', itemsPath: '$.items', target },
        completion: { strategy: 'all' },
        toleratedFailureCount: 1,
        timeoutSeconds: 3600,
      },
      // Not indexed: "all arrived" is seen through the per-batch counter.
      {
        name: 'counted',
        fanOut: { type: 'none' },
        completion: { strategy: 'all' },
        toleratedFailureCount: 1,
        timeoutSeconds: 3600,
      },
    ]);
    await fanin.targetQueue(target, true);
  });
  afterAll(() => fanin.stop());

  let sequence = 0;
  const nextMessageId = (aggregateId: string, replyId: string) => {
    sequence += 1;
    return `m-${aggregateId}-${replyId}-${sequence}`;
  };
  const reply = (aggregateId: string, replyId: string, failure?: string): RawMessage => ({
    messageId: nextMessageId(aggregateId, replyId),
    body: JSON.stringify(failure ? { detail: 'gave up' } : { r: replyId }),
    attributes: {
      'fanin-aggregate-id': aggregateId,
      'fanin-reply-id': replyId,
      ...(failure ? { [FAILURE_ATTRIBUTE]: failure } : {}),
    },
    receiveCount: 1,
  });
  const ids = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => String(from + i));
  const openWide = async (aggregateId: string) => {
    await fanin.sendRequest({ definition: 'wide', aggregateId, items: ids(0, EXPECTED) });
    await fanin.drain();
    expect((await fanin.ctx.store.getHeader(aggregateId))?.expected).toBe(EXPECTED);
  };
  const send = async (batch: RawMessage[]) => {
    expect((await handleReplies(fanin.ctx, batch)).size).toBe(0);
  };
  const inTens = async (aggregateId: string, replyIds: string[]) => {
    for (let i = 0; i < replyIds.length; i += 10)
      await send(replyIds.slice(i, i + 10).map((id) => reply(aggregateId, id)));
  };
  const expectCompletedWithOneFailure = (aggregateId: string) => {
    const { output } = fanin.expectExactlyOneTerminalOutput(aggregateId);
    expect(output).toMatchObject({
      completedBy: 'all-arrived',
      counts: { expected: EXPECTED, received: EXPECTED, failed: 1 },
    });
  };

  it('completes as soon as every reply is in when the failed reply alone completed its block', async () => {
    // Prepare: block 0 (ids 0 … 31) lacks only id 0
    await openWide('fail-alone');
    await inTens('fail-alone', ids(1, 32));

    // Act: the failed reply completes block 0 alone, then every other block comes in
    await send([reply('fail-alone', '0', 'timeout')]);
    await inTens('fail-alone', ids(32, EXPECTED));

    // Assess (mutant killed: "a batch with a failed reply skips the block marks" — every reply is
    // in, yet block 0 is never marked and the aggregate waits for its deadline)
    expectCompletedWithOneFailure('fail-alone');
  });

  it('completes when the failed reply came in a pack with the replies that completed its block', async () => {
    await openWide('fail-packed');
    await inTens('fail-packed', ids(0, 30));

    // Act: ids 30 and 31 in one pack, 31 failed; then the rest
    await send([reply('fail-packed', '30'), reply('fail-packed', '31', 'timeout')]);
    await inTens('fail-packed', ids(32, EXPECTED));

    expectCompletedWithOneFailure('fail-packed');
  });

  it('completes when a failed reply is delivered twice, the second time completing its block', async () => {
    await openWide('fail-twice');
    await send([reply('fail-twice', '5', 'timeout')]);
    await inTens(
      'fail-twice',
      ids(0, 32).filter((id) => id !== '5' && id !== '31'),
    );

    // Act: the failed reply's duplicate arrives with block 0's last reply, then every other block
    await send([reply('fail-twice', '5', 'timeout'), reply('fail-twice', '31')]);
    await inTens('fail-twice', ids(32, EXPECTED));

    expectCompletedWithOneFailure('fail-twice');
  });

  it('fails at once, before the deadline, when a batch brings a failure beyond the tolerance', async () => {
    await openWide('fail-beyond');
    await send([reply('fail-beyond', '40', 'timeout')]);

    // Act: a second failure; most replies are still missing
    await send([reply('fail-beyond', '41', 'refused'), reply('fail-beyond', '42')]);

    // Assess (mutant killed: "a failed reply takes the trigger like any reply" — no block is
    // complete, so nothing is read and the aggregate waits for its deadline)
    const { output } = fanin.expectExactlyOneTerminalOutput('fail-beyond');
    expect(output).toMatchObject({ outcome: 'failed', completedBy: 'failures' });
    expect((await fanin.ctx.store.getHeader('fail-beyond'))?.status).toBe(AggregateStatus.CLOSED);
  });

  it('a large aggregate counted per batch completes when a batch holding a failed reply brings its last replies', async () => {
    // Prepare: a fan-out of 130 without index ids (the counter decides when the set is read)
    await fanin.sendRequest({ definition: 'counted', aggregateId: 'fail-counted', expected: EXPECTED });
    await fanin.drain();
    const names = Array.from({ length: EXPECTED }, (_, i) => `q${i}`);
    await send([reply('fail-counted', 'q0', 'timeout')]);
    await inTens('fail-counted', names.slice(1, EXPECTED - 1));

    // Act: the last reply (no failure in its batch)
    await send([reply('fail-counted', names[EXPECTED - 1] as string)]);

    // Assess (mutant killed: "a batch with a failed reply adds nothing to the counter" — the
    // counter stays one under the expected count and the set is never read)
    expectCompletedWithOneFailure('fail-counted');
  });
});
