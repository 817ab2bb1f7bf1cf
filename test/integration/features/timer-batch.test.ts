import type { SQSEvent, SQSRecord } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeFanOutHandler } from '../../../functions/handlers.ts';
import type { TimerMessage } from '../../../shared/ports.ts';
import type { AwsCall } from '../../support/aws-probe.ts';
import { FaninUnderTest } from '../../support/fanin.ts';
import { ingressRecord } from '../../support/sqs-records.ts';

/** The timers the system handed to SQS in the given calls, entry by entry. */
function timersSent(calls: readonly AwsCall[]): TimerMessage[] {
  return calls.flatMap((call) => {
    const input = call.input as { MessageBody?: string; Entries?: { MessageBody: string }[] };
    const bodies = input.Entries ? input.Entries.map((e) => e.MessageBody) : [input.MessageBody ?? '{}'];
    return bodies.map((body) => JSON.parse(body) as TimerMessage);
  });
}

/**
 * The timers of one batch of records go to SQS together (shared/adapters/timer-batch.ts): a
 * fan-out batch of ten requests arms ten deadlines in one request instead of ten. Observed in the
 * AWS calls the system made (the probe on its SQS client), not through any deduplication.
 */
describe('timers armed together', () => {
  let fanin: FaninUnderTest;
  const timerCalls = (since: number) =>
    fanin.probe.calls.filter(
      (c) => c.system && c.queueRole === 'timer' && c.seq > since && c.outcome === 'ok',
    );
  const lastSeq = () => fanin.probe.calls.at(-1)?.seq ?? 0;

  beforeAll(async () => {
    fanin = await FaninUnderTest.start([
      { name: 'timed', fanOut: { type: 'none' }, completion: { strategy: 'all' }, timeoutSeconds: 60 },
      { name: 'untimed', fanOut: { type: 'none' }, completion: { strategy: 'all' } },
    ]);
  });
  afterAll(() => fanin.stop());

  it('a fan-out batch of ten requests arms its ten deadlines in one SendMessageBatch', async () => {
    // Prepare
    const since = lastSeq();
    const ids = Array.from({ length: 10 }, (_, i) => `together-${i}`);
    const event = {
      Records: ids.map((id) =>
        ingressRecord(`m-${id}`, { definition: 'timed', aggregateId: id, expected: 2 }),
      ),
    };

    // Act
    const response = await makeFanOutHandler(() => fanin.ctx)(event as SQSEvent);

    // Assess: one call for ten timers (mutant "each record arms its own timer": ten SendMessage).
    expect(response.batchItemFailures).toEqual([]);
    const calls = timerCalls(since);
    expect(calls.map((c) => c.name)).toEqual(['SQS.SendMessageBatch']);
    const sent = timersSent(calls);
    expect(sent.map((t) => t.aggregateId).sort()).toEqual([...ids].sort());
    expect(sent.every((t) => t.kind === 'deadline' && t.dueAt === fanin.clock.now + 60_000)).toBe(true);
    // Each delayed by its own deadline (SQS delays the entries of a batch one by one).
    expect(calls[0]?.input.Entries).toEqual(
      expect.arrayContaining([expect.objectContaining({ DelaySeconds: 60 })]),
    );
  });

  it('a record whose timer could not be armed is failed, and its redelivery arms it', async () => {
    // Prepare: the timer queue refuses every send; one request arms a timer, one arms none.
    const stopFailing = fanin.probe.failEvery({ queueRole: 'timer' });
    const event = {
      Records: [
        ingressRecord('m-refused', { definition: 'timed', aggregateId: 'refused', expected: 2 }),
        ingressRecord('m-untimed', { definition: 'untimed', aggregateId: 'untimed', expected: 2 }),
      ],
    } as SQSEvent;

    // Act
    const first = await makeFanOutHandler(() => fanin.ctx)(event);
    stopFailing();
    const since = lastSeq();
    const redelivered = await makeFanOutHandler(() => fanin.ctx)({
      Records: [event.Records[0] as SQSRecord],
    });

    // Assess: only the record that armed a timer failed (mutant "flush failures ignored": no
    // failure, the timer lost until the sweeper; mutant "fail the whole batch": both failed).
    expect(first.batchItemFailures).toEqual([{ itemIdentifier: 'm-refused' }]);
    expect(redelivered.batchItemFailures).toEqual([]);
    expect(timersSent(timerCalls(since)).map((t) => t.aggregateId)).toEqual(['refused']);
    expect(
      fanin.logs.some((l) => l.message === 'timers not armed: their records fail and are redelivered'),
    ).toBe(true);
  });
});
