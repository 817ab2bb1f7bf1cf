import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FaninUnderTest } from '../../support/fanin.ts';

/**
 * An EventBridge event holds at most 256 KB. An output too large for it goes on the bus without
 * its result and with a pointer to the stored copy; a late reply's output carries the reply's
 * body, so that body is cut there too (the queue's copy, through the claim check, keeps it
 * whole). Observed on the entries as sent to PutEvents.
 */
describe('a late reply’s event too large for the bus', () => {
  let fanin: FaninUnderTest;

  beforeAll(async () => {
    fanin = await FaninUnderTest.start(
      [
        {
          name: 'evented',
          fanOut: { type: 'none' },
          completion: { strategy: 'all' },
          outputs: { eventBridge: true },
          latePolicy: 'route',
        },
      ],
      { claimCheckThresholdBytes: 262_144 },
    );
    fanin.eventBusName = 'fanin-test-bus';
    fanin.probe.stubEventBridge();
    fanin.buildContext();
  });
  afterAll(() => fanin.stop());

  it('goes on the bus with the reply’s body cut to fit and a pointer to the whole output', async () => {
    // Prepare: an aggregate completed by its one reply
    await fanin.sendRequest({ definition: 'evented', aggregateId: 'late-event', expected: 1 });
    await fanin.drain();
    await fanin.sendReply({ ok: 1 }, { 'fanin-aggregate-id': 'late-event', 'fanin-reply-id': '0' });
    await fanin.drain();

    // Act: a late reply of 300 KB
    const body = { data: 'x'.repeat(300_000) };
    await fanin.sendReply(body, { 'fanin-aggregate-id': 'late-event', 'fanin-reply-id': '1' });
    await fanin.drain();

    // Assess (mutant killed: an event detail that keeps the carried body whole — about 300 KB,
    // which EventBridge refuses, so the late reply fails every retry into the DLQ)
    const events = fanin
      .published('eventbridge')
      .filter((p) => p.body.aggregateId === 'late-event' && p.body.type === 'fanin.reply.late');
    expect(events).toHaveLength(1);
    const [event] = events;
    expect(Buffer.byteLength(event?.text ?? '')).toBeLessThanOrEqual(250_000);
    expect(event?.body.message).toMatchObject({
      truncated: true,
      bytes: Buffer.byteLength(JSON.stringify(body)),
    });
    expect(event?.body.payloadPointer).toMatchObject({ s3Key: expect.stringMatching(/^outputs\//) });
    // The queue's copy is whole
    const late = fanin.published('late').filter((p) => p.body.aggregateId === 'late-event');
    expect(late).toHaveLength(1);
    expect((late[0]?.body.message as { body?: string } | undefined)?.body).toBe(JSON.stringify(body));
    expect(await fanin.deadLetters()).toEqual({});
  });
});
