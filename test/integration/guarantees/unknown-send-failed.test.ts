import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SortKey } from '../../../shared/adapters/state-keys.ts';
import type { RawMessage } from '../../../shared/ports.ts';
import { handleReplies } from '../../../shared/use-cases/replies.ts';
import { FaninUnderTest } from '../../support/fanin.ts';

/**
 * A reply reported unknown has its fate fixed (a late mark under its key, written in one
 * transaction with its aggregate's absence) before its unknown output is sent. When that send
 * fails, SQS delivers the reply again, and by then its aggregate may have opened (or even closed):
 * the copy meets the mark, and must send the unknown output it still owes, under the same output
 * id, rather than be taken as a duplicate (in no output, the result listing it missing) or as a
 * late reply. Found by the simulation, seed 98 (nothing-lost). A copy that meets a mark whose
 * output was sent sends nothing more. Publications are observed as sent (the recorder, below SQS
 * deduplication).
 */
describe('a reply whose unknown output failed', () => {
  let fanin: FaninUnderTest;

  beforeAll(async () => {
    fanin = await FaninUnderTest.start([
      {
        name: 'strict',
        fanOut: { type: 'none' },
        completion: { strategy: 'all' },
        timeoutSeconds: 60,
        unknownTimeoutSeconds: 0,
        latePolicy: 'route',
      },
    ]);
  });
  afterAll(() => fanin.stop());

  const replyMessage = (aggregateId: string, replyId: string, receiveCount = 1): RawMessage => ({
    messageId: `${aggregateId}-reply-${replyId}`,
    body: JSON.stringify({ v: replyId }),
    attributes: {
      'fanin-definition': 'strict',
      'fanin-aggregate-id': aggregateId,
      'fanin-reply-id': replyId,
    },
    receiveCount,
  });

  /** Reply 0 arrives before its aggregate exists; its unknown output's send fails (crashed before). */
  const unknownSendFails = async (aggregateId: string): Promise<RawMessage> => {
    const first = replyMessage(aggregateId, '0');
    fanin.probe.crashAt({ name: 'SQS.SendMessage', queueRole: 'unknown' }, 'before');
    const failed = await handleReplies(fanin.ctx, [first]);
    expect(fanin.probe.disarm(), 'the unknown output was crashed before it was sent').toBeDefined();
    expect([...failed], 'the reply is left to SQS to deliver again').toEqual([first.messageId]);
    expect(sent(aggregateId, 'unknown')).toEqual([]);
    return { ...first, receiveCount: 2 };
  };

  const opens = async (aggregateId: string): Promise<void> => {
    await fanin.sendRequest({ definition: 'strict', aggregateId, expected: 2 });
    await fanin.drain();
    expect(await fanin.ctx.store.getHeader(aggregateId)).toMatchObject({ status: 'open' });
  };

  /** The deadline passes and the sweeper times the aggregate out. */
  const timesOut = async (aggregateId: string): Promise<Record<string, unknown>> => {
    fanin.clock.advance(61_000);
    await fanin.sweep();
    const { output } = fanin.expectExactlyOneTerminalOutput(aggregateId);
    expect(output).toMatchObject({ type: 'fanin.aggregate.timed-out' });
    return output;
  };

  /** Reply ids as published on one output for this aggregate, every send counted. */
  const sent = (aggregateId: string, channel: 'unknown' | 'late'): string[] =>
    fanin
      .publications(aggregateId)
      .filter((p) => p.channel === channel)
      .map((p) => String(p.body.replyId));

  const missingOf = (output: Record<string, unknown>): string[] =>
    ((output.missing as { replyId: string }[] | undefined) ?? []).map((m) => m.replyId);
  const membersOf = (output: Record<string, unknown>): string[] =>
    ((output.result as { replyId: string }[] | undefined) ?? []).map((m) => m.replyId);

  it('is sent to the unknown output, once, when it is delivered again after its aggregate opened', async () => {
    // Prepare: reply 0 is reported unknown but its output fails; then the aggregate opens
    const id = `owed-open-${Date.now().toString(36)}`;
    const again = await unknownSendFails(id);
    await opens(id);

    // Act: reply 0 is delivered again, then reply 1 comes, and the deadline passes
    expect([...(await handleReplies(fanin.ctx, [again]))]).toEqual([]);
    expect([...(await handleReplies(fanin.ctx, [replyMessage(id, '1')]))]).toEqual([]);
    const output = await timesOut(id);

    // Assess (mutant killed: lost-unknown-mark-is-duplicate): reply 0 is on the unknown output
    // exactly once, never late, never a member; the result waits for it as missing
    expect(sent(id, 'unknown')).toEqual(['0']);
    expect(sent(id, 'late')).toEqual([]);
    expect(membersOf(output)).toEqual(['1']);
    expect(missingOf(output)).toEqual(['0']);
    expect(fanin.publications(id).find((p) => p.channel === 'unknown')?.body).toMatchObject({
      id: `${id}/unknown/0`,
      type: 'fanin.reply.unknown',
      definition: 'strict',
      reason: 'no such aggregate',
      message: { messageId: again.messageId, body: again.body },
    });
  });

  it('is sent to the unknown output, not the late one, when it is delivered again after its aggregate closed', async () => {
    // Prepare: reply 0 is reported unknown but its output fails; the aggregate opens and times out
    const id = `owed-closed-${Date.now().toString(36)}`;
    const again = await unknownSendFails(id);
    await opens(id);
    const output = await timesOut(id);
    expect(missingOf(output)).toEqual(['0', '1']);

    // Act: reply 0 is delivered again
    expect([...(await handleReplies(fanin.ctx, [again]))]).toEqual([]);

    // Assess (mutant killed: lost-unknown-mark-is-late): on the unknown output once, not late
    expect(sent(id, 'unknown')).toEqual(['0']);
    expect(sent(id, 'late')).toEqual([]);
    expect(await fanin.ctx.store.getHeader(id)).toMatchObject({ status: 'closed', lateCount: 0 });
  });

  it('whose unknown output was sent is neither sent again nor late when it is delivered again after its aggregate closed', async () => {
    // Prepare: reply 0 is reported unknown (its output sent); the aggregate opens and times out
    const id = `sent-closed-${Date.now().toString(36)}`;
    const first = replyMessage(id, '0');
    expect([...(await handleReplies(fanin.ctx, [first]))]).toEqual([]);
    expect(sent(id, 'unknown')).toEqual(['0']);
    await opens(id);
    await timesOut(id);

    // Act: reply 0 is delivered again (its delete was lost)
    expect([...(await handleReplies(fanin.ctx, [{ ...first, receiveCount: 2 }]))]).toEqual([]);

    // Assess (mutant killed: sent-unknown-mark-is-late): on the unknown output once, never late
    expect(sent(id, 'unknown')).toEqual(['0']);
    expect(sent(id, 'late')).toEqual([]);
    expect(await fanin.ctx.store.getHeader(id)).toMatchObject({ status: 'closed', lateCount: 0 });
  });

  it('is sent to the unknown output, once, when it is delivered again in one batch with another reply of its aggregate', async () => {
    // Prepare: reply 0 is reported unknown but its output fails; then the aggregate opens
    const id = `owed-pack-${Date.now().toString(36)}`;
    const again = await unknownSendFails(id);
    await opens(id);

    // Act: reply 0 comes again in one batch with reply 1 (one pack), then the deadline passes
    const before = fanin.probe.calls.length;
    expect([...(await handleReplies(fanin.ctx, [again, replyMessage(id, '1')]))]).toEqual([]);
    const packPuts = fanin.probe.calls
      .slice(before)
      .filter(
        (c) =>
          c.name === 'DynamoDB.PutItem' &&
          String((c.input.Item as { sk?: unknown }).sk).startsWith(SortKey.PACK),
      );
    expect(packPuts, 'the two replies were recorded in one pack').toHaveLength(1);
    const output = await timesOut(id);

    // Assess (mutant killed: lost-unknown-in-pack): reply 0 is on the unknown output exactly
    // once, never late, never a member
    expect(sent(id, 'unknown')).toEqual(['0']);
    expect(sent(id, 'late')).toEqual([]);
    expect(membersOf(output)).toEqual(['1']);
    expect(missingOf(output)).toEqual(['0']);
  });
});
