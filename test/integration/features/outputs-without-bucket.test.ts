import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FaninUnderTest } from '../../support/fanin.ts';

/**
 * Without a payload bucket, an output must fit in one SQS message. A late or unknown reply is
 * carried whole by its output; a reply body that SQS took can still make that output too large
 * (JSON escaping doubles a body of quotes). Such an output goes out with the body cut and the
 * reason, instead of failing every retry and dead-lettering its reply. Observed on the
 * publications as sent (below FIFO deduplication) and on the dead-letter queues.
 */
describe('late and unknown outputs too large for SQS without a payload bucket', () => {
  let fanin: FaninUnderTest;
  // About 240 KB as sent, about 480 KB once escaped inside an output.
  const quotes = { s: '"'.repeat(120_000) };
  const sentBytes = Buffer.byteLength(JSON.stringify(quotes));

  beforeAll(async () => {
    fanin = await FaninUnderTest.start([
      { name: 'routed', fanOut: { type: 'none' }, completion: { strategy: 'all' }, latePolicy: 'route' },
    ]);
  });
  afterAll(() => fanin.stop());

  /** The publications on `channel` about `aggregateId`. */
  const routedOn = (channel: 'late' | 'unknown', aggregateId: string) =>
    fanin.published(channel).filter((p) => p.body.aggregateId === aggregateId);
  const expectCut = (body: Record<string, unknown>) => {
    const message = body.message as Record<string, unknown>;
    expect(message).toMatchObject({ truncated: true, bytes: sentBytes });
    expect(String(message.truncatedReason)).toContain(`the body is ${sentBytes} bytes`);
    // The beginning of the body as sent, as much of it as the output has room for
    const head = String(message.body);
    expect(JSON.stringify(quotes).startsWith(head)).toBe(true);
    expect(head.length).toBeGreaterThan(100_000);
    expect(head.length).toBeLessThan(sentBytes);
  };

  it('routes a late reply with its body cut and the reason, and dead-letters nothing', async () => {
    // Prepare: an aggregate completed by its one reply
    await fanin.sendRequest({ definition: 'routed', aggregateId: 'late-big', expected: 1 });
    await fanin.drain();
    await fanin.sendReply({ ok: 1 }, { 'fanin-aggregate-id': 'late-big', 'fanin-reply-id': '0' });
    await fanin.drain();
    fanin.expectExactlyOneTerminalOutput('late-big');

    // Act: a late reply whose body SQS takes but whose output it would not
    await fanin.sendReply(quotes, { 'fanin-aggregate-id': 'late-big', 'fanin-reply-id': '1' });
    await fanin.drain();

    // Assess (mutant killed: an output too large without a bucket always refused — the late reply
    // fails every retry and ends in the reply DLQ, its late output never sent)
    const late = routedOn('late', 'late-big');
    expect(late).toHaveLength(1);
    expect(late[0]?.body).toMatchObject({ type: 'fanin.reply.late', replyId: '1' });
    expectCut(late[0]?.body ?? {});
    expect(await fanin.deadLetters()).toEqual({});
  });

  it('routes an unknown reply with its body cut and the reason, and dead-letters nothing', async () => {
    // Act: a reply for no aggregate, with the same large body
    await fanin.sendReply(quotes, { 'fanin-aggregate-id': 'nobody-big', 'fanin-reply-id': '0' });
    await fanin.drain();

    // Assess (the same mutant)
    const unknown = routedOn('unknown', 'nobody-big');
    expect(unknown).toHaveLength(1);
    expect(unknown[0]?.body).toMatchObject({ type: 'fanin.reply.unknown', replyId: '0' });
    expectCut(unknown[0]?.body ?? {});
    expect(await fanin.deadLetters()).toEqual({});
  });
});
