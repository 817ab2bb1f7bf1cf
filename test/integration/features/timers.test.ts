import { GetQueueAttributesCommand, ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handleTimer } from '../../../shared/use-cases/timers.ts';
import { aws } from '../../support/clients.ts';
import { FaninUnderTest, takeAll } from '../../support/fanin.ts';

/**
 * Timeouts: SQS delay messages for precision (beyond 15 minutes armed by the sweep as they enter
 * that horizon), the sweeper as the safety net. Whichever acts first wins; the other is a no-op.
 */
describe('timers', () => {
  let fanin: FaninUnderTest;

  beforeAll(async () => {
    fanin = await FaninUnderTest.start([
      { name: 'short', fanOut: { type: 'none' }, completion: { strategy: 'timeout' }, timeoutSeconds: 1 },
      { name: 'long', fanOut: { type: 'none' }, completion: { strategy: 'all' }, timeoutSeconds: 3600 },
    ]);
  });
  afterAll(() => fanin.stop());

  async function receiveTimer(): Promise<{ messageId: string; body: string }> {
    // The delay is real (one second): wait for SQS to release the message, at most 10 s.
    for (let attempt = 0; attempt < 10; attempt += 1) {
      const { Messages = [] } = await aws.sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: fanin.provisioned.queueUrls.timer,
          WaitTimeSeconds: 1,
          MaxNumberOfMessages: 1,
        }),
      );
      const [message] = Messages;
      if (message) return { messageId: message.MessageId ?? '', body: message.Body ?? '' };
    }
    throw new Error('no timer message was released');
  }

  async function delayedTimers(): Promise<number> {
    const { Attributes } = await aws.sqs.send(
      new GetQueueAttributesCommand({
        QueueUrl: fanin.provisioned.queueUrls.timer,
        AttributeNames: ['ApproximateNumberOfMessagesDelayed'],
      }),
    );
    return Number(Attributes?.ApproximateNumberOfMessagesDelayed);
  }

  it('the delay message fires at the deadline and times the aggregate out with what arrived', async () => {
    // Prepare
    await fanin.sendRequest({ definition: 'short', aggregateId: 's-1' });
    await fanin.drain();
    await fanin.sendReply({ v: 1 }, { 'fanin-aggregate-id': 's-1', 'fanin-reply-id': 'a' });
    await fanin.drain();

    // Act
    const timer = await receiveTimer();
    fanin.clock.advance(1_000);
    await handleTimer(fanin.ctx, { ...timer, attributes: {}, receiveCount: 1 });

    // Assess
    expect(await fanin.outputs('completed')).toMatchObject([{ aggregateId: 's-1', counts: { received: 1 } }]);
  });

  it('a timeout aggregate with no reply at its deadline is timed out', async () => {
    // Prepare
    await fanin.sendRequest({ definition: 'short', aggregateId: 's-2' });
    await fanin.drain();

    // Act
    const timer = await receiveTimer();
    fanin.clock.advance(1_000);
    await handleTimer(fanin.ctx, { ...timer, attributes: {}, receiveCount: 1 });

    // Assess
    expect(await fanin.outputs('timed-out')).toMatchObject([{ aggregateId: 's-2', counts: { received: 0 } }]);
  });

  it('after the sweeper has acted, the timer is a no-op (and the other way round)', async () => {
    // Prepare
    await fanin.sendRequest({ definition: 'short', aggregateId: 's-3' });
    await fanin.drain();
    const timer = await receiveTimer();
    fanin.clock.advance(1_000);

    // Act
    await fanin.sweep();
    await handleTimer(fanin.ctx, { ...timer, attributes: {}, receiveCount: 1 });
    await fanin.sweep();

    // Assess
    expect(await fanin.outputs('timed-out')).toHaveLength(1);
  });

  it('a lost timer does not leave the aggregate open: the sweeper times it out', async () => {
    // Prepare
    await fanin.sendRequest({ definition: 'short', aggregateId: 's-4' });
    await fanin.drain();
    await receiveTimer(); // lost: never handled

    // Act
    fanin.clock.advance(1_000);
    const examined = await fanin.sweep();

    // Assess
    expect(examined).toBeGreaterThanOrEqual(1);
    expect(await fanin.outputs('timed-out')).toMatchObject([{ aggregateId: 's-4' }]);
  });

  it('a deadline beyond SQS’s 15-minute delay is not armed again when a timer fires early: the sweep arms it as it enters the horizon', async () => {
    // Prepare
    await fanin.sendRequest({ definition: 'long', aggregateId: 'l-1', expected: 1 });
    await fanin.drain();
    await takeAll(fanin.provisioned.queueUrls.timer);
    const header = await fanin.ctx.store.getHeader('l-1');
    const delayedBefore = await delayedTimers();

    // Act: a timer fires 15 minutes in, 45 minutes early
    fanin.clock.advance(900_000);
    await handleTimer(fanin.ctx, {
      messageId: 'early',
      body: JSON.stringify({ kind: 'deadline', aggregateId: 'l-1', dueAt: header?.deadline }),
      attributes: {},
      receiveCount: 1,
    });
    const delayedAfterEarly = await delayedTimers();
    fanin.clock.advance(2_000_000); // 11 minutes before the deadline: within the sweep's window
    await fanin.sweep();

    // Assess
    expect(delayedAfterEarly).toBe(delayedBefore);
    expect(await delayedTimers()).toBe(delayedBefore + 1);
    expect((await fanin.ctx.store.getHeader('l-1'))?.status).toBe('open');
  });
});
