import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FaninUnderTest } from '../../support/fanin.ts';

/**
 * A reply recorded while its aggregate was open, but after the deadline (or after the read the
 * members came from), is found late by the completer after the seal. Its own SQS message was
 * acknowledged when it was recorded, so nothing but the completer sends its late output: when that
 * send fails, a resumed completer must send it, under the same output id;
 * once it was sent, a resumed completer sends it no more (the mark records it: `owes: late`, then
 * `late-sent`). Publications are observed as sent (the recorder, below SQS deduplication).
 *
 * Kills the mutants named 'late send failed: …' (their tests are named there).
 */
describe('a late reply routed by the completer', () => {
  let fanin: FaninUnderTest;
  beforeAll(async () => {
    fanin = await FaninUnderTest.start([
      {
        name: 'strict',
        fanOut: { type: 'none' },
        completion: { strategy: 'all' },
        timeoutSeconds: 60,
        latePolicy: 'route',
      },
    ]);
  });
  afterAll(() => fanin.stop());

  /** An open aggregate with reply 1 recorded after its deadline (its message long acknowledged). */
  const lateRecorded = async (prefix: string): Promise<string> => {
    const id = `${prefix}-${Date.now().toString(36)}`;
    await fanin.sendRequest({ definition: 'strict', aggregateId: id, expected: 2 });
    await fanin.drain();
    const header = await fanin.ctx.store.getHeader(id);
    const due = header?.deadline ?? 0;
    await fanin.ctx.store.putReplies(id, [
      { replyId: '1', payload: '{"v":1}', receivedAt: due + 1000, expiresAt: 2_000_000_000, messageId: 'm1' },
    ]);
    return id;
  };

  const resumeThrice = async (): Promise<void> => {
    for (let i = 0; i < 3; i += 1) {
      fanin.clock.advance(300_000);
      await fanin.sweep().catch(() => undefined);
    }
  };

  const lateIds = (id: string) =>
    fanin
      .publications(id)
      .filter((p) => p.channel === 'late')
      .map((p) => p.body.id);

  it('whose late output failed is on the late output once the completer is resumed', async () => {
    const id = await lateRecorded('late-failed');
    fanin.clock.advance(61_000);
    fanin.probe.crashAt({ name: 'SQS.SendMessage', queueRole: 'late' }, 'before');
    await fanin.sweep().catch(() => undefined);
    expect(fanin.probe.disarm(), 'the late output was crashed before it was sent').toBeDefined();
    expect(lateIds(id)).toEqual([]);
    await resumeThrice();
    fanin.expectExactlyOneTerminalOutput(id);
    expect(
      fanin
        .publications(id)
        .filter((p) => p.channel === 'late')
        .map((p) => p.body.replyId),
    ).toEqual(['1']);
    expect(lateIds(id)).toEqual([`${id}/late/1`]);
    expect((await fanin.ctx.store.getHeader(id))?.lateCount, 'counted late once').toBe(1);
  });

  it('whose late output was sent is not sent again by a resumed completer', async () => {
    const id = await lateRecorded('late-sent');
    fanin.clock.advance(61_000);
    // The late output goes out; the result's send then fails: the completer is resumed.
    fanin.probe.crashAt({ name: 'SQS.SendMessage', queueRole: 'timed-out' }, 'before');
    await fanin.sweep().catch(() => undefined);
    expect(fanin.probe.disarm(), 'the result was crashed before it was sent').toBeDefined();
    expect(lateIds(id)).toEqual([`${id}/late/1`]);
    await resumeThrice();
    fanin.expectExactlyOneTerminalOutput(id);
    expect(lateIds(id), 'sent once: its mark records it sent').toEqual([`${id}/late/1`]);
  });

  it('whose late output a resumed completer sent is not sent again by the next one', async () => {
    const id = await lateRecorded('late-owed');
    fanin.clock.advance(61_000);
    fanin.probe.crashAt({ name: 'SQS.SendMessage', queueRole: 'late' }, 'before');
    await fanin.sweep().catch(() => undefined);
    expect(fanin.probe.disarm(), 'the late output was crashed before it was sent').toBeDefined();
    // The resumed completer sends the owed late output, then its result's send fails.
    fanin.probe.crashAt({ name: 'SQS.SendMessage', queueRole: 'timed-out' }, 'before');
    fanin.clock.advance(300_000);
    await fanin.sweep().catch(() => undefined);
    expect(fanin.probe.disarm(), 'the result was crashed before it was sent').toBeDefined();
    expect(lateIds(id)).toEqual([`${id}/late/1`]);
    await resumeThrice();
    fanin.expectExactlyOneTerminalOutput(id);
    expect(lateIds(id), 'the resumed send was recorded on the mark').toEqual([`${id}/late/1`]);
  });

  it('whose late output was sent but not recorded sent is sent again under the same id', async () => {
    const id = await lateRecorded('late-resent');
    fanin.clock.advance(61_000);
    // The documented repeat: a crash between the send and its record.
    fanin.probe.crashAt({ name: 'SQS.SendMessage', queueRole: 'late' }, 'after');
    await fanin.sweep().catch(() => undefined);
    expect(fanin.probe.disarm(), 'crashed after the late output was sent').toBeDefined();
    await resumeThrice();
    fanin.expectExactlyOneTerminalOutput(id);
    expect(lateIds(id)).toEqual([`${id}/late/1`, `${id}/late/1`]);
  });
});
