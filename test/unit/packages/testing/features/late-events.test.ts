import { describe, expect, it } from 'vitest';
import { simulate } from '../../../../../packages/testing/src/index.ts';

/**
 * An EventBridge event holds at most 256 KB (the kit's EventBridge model refuses a larger
 * PutEvents entry, as EventBridge does). An output too large for it goes on the bus without its
 * result and with a pointer to the stored copy; a late reply's output carries the reply's body,
 * so that body is cut there too (the queue's copy, through the claim check, keeps it whole).
 */
describe('a late reply’s event too large for the bus (kit)', () => {
  it('goes on the bus with the reply’s body cut to fit and a pointer to the whole output', async () => {
    // Prepare: an aggregate completed by its one reply
    const run = simulate(
      {
        name: 'evented',
        fanOut: { type: 'none' },
        completion: { strategy: 'all' },
        outputs: { eventBridge: true },
        latePolicy: 'route',
      },
      { claimCheckThresholdBytes: 262_144 },
    );
    await run.request({ aggregateId: 'late-event', expected: 1 });
    await run.reply({ replyId: '0' }, { ok: 1 });

    // Act: a late reply of 300 KB; an hour for any retry of it to run its course
    const body = { data: 'x'.repeat(300_000) };
    await run.reply({ replyId: '1' }, body);
    await run.advance('1h');

    // Assess (mutant killed: an event detail that keeps the carried body whole — about 300 KB,
    // which EventBridge refuses, so the late reply fails every retry into the DLQ)
    const events = run
      .publications('events')
      .filter((p) => p.body.aggregateId === 'late-event' && p.body.type === 'fanin.reply.late');
    expect(events).toHaveLength(1);
    const [event] = events;
    expect(Buffer.byteLength(JSON.stringify(event?.body))).toBeLessThanOrEqual(250_000);
    expect(event?.body.message).toMatchObject({
      truncated: true,
      bytes: Buffer.byteLength(JSON.stringify(body)),
    });
    expect(event?.body.payloadPointer).toMatchObject({ s3Key: expect.stringMatching(/^outputs\//) });
    // The queue's copy is whole
    const late = run.publications('late').filter((p) => p.body.aggregateId === 'late-event');
    expect(late).toHaveLength(1);
    expect((late[0]?.body.message as { body?: string } | undefined)?.body).toBe(JSON.stringify(body));
    expect(run.deadLetters()).toEqual([]);
  });
});
