import type { Message } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RawMessage } from '../../../shared/ports.ts';
import { handleReplies } from '../../../shared/use-cases/replies.ts';
import { handleTimer } from '../../../shared/use-cases/timers.ts';
import type { AwsCall } from '../../support/aws-probe.ts';
import { FaninUnderTest } from '../../support/fanin.ts';

/**
 * Retries of sub-requests (docs/definitions.md, "Retries"; docs/wire-contract.md, "Retried
 * sub-requests"), through the real handlers and the emulators: a recipient that has not replied
 * is sent its sub-request again at its round, to the queue it first went to, with the same reply
 * id and `fanin-attempt`; its reply to the retry is its one reply. A crash between a retry's send
 * and its record sends it once more, with the same reply id and attempt, and never a third time.
 * Every send is counted as the system made it (the probe, below any deduplication). Timer
 * messages are real SQS delays, so the rounds are seconds apart.
 */
describe('retries of sub-requests', () => {
  let fanin: FaninUnderTest;
  const stamp = Date.now().toString(36);
  const INTERVAL_MS = 2_000;
  // A splitter's target is a queue name: fixed here, created exactly so.
  const pickers = `rty-pickers-${stamp}`;
  const failing = `rty-failing-${stamp}`;
  beforeAll(async () => {
    fanin = await FaninUnderTest.start([
      {
        name: 'pickers',
        fanOut: { type: 'splitter', itemsPath: '$.items', target: pickers },
        completion: { strategy: 'all' },
        timeoutSeconds: 60,
        responders: { timeoutSeconds: 30, retry: { attempts: 2, intervalSeconds: INTERVAL_MS / 1000 } },
      },
      {
        name: 'failing',
        fanOut: { type: 'splitter', itemsPath: '$.items', target: failing },
        completion: { strategy: 'all' },
        timeoutSeconds: 60,
        responders: {
          timeoutSeconds: 30,
          retry: { attempts: 1, intervalSeconds: INTERVAL_MS / 1000, failedReplies: true },
        },
      },
    ]);
    await fanin.targetQueue(pickers, true);
    await fanin.targetQueue(failing, true);
  });
  afterAll(() => fanin.stop());

  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  const attributesOf = (m: Message): Record<string, string> =>
    Object.fromEntries(
      Object.entries(m.MessageAttributes ?? {}).flatMap(([k, v]) =>
        v.StringValue !== undefined ? [[k, v.StringValue]] : [],
      ),
    );
  /** Every sub-request entry the system handed to SQS for aggregate `id` (the probe's record, not the queue). */
  const sentTo = (id: string) =>
    fanin.probe.calls
      .filter((c: AwsCall) => c.system && c.name.startsWith('SQS.SendMessage') && c.outcome === 'ok')
      .flatMap((c) => {
        const input = c.input as {
          Entries?: { MessageBody?: string; MessageAttributes?: Record<string, { StringValue?: string }> }[];
          MessageBody?: string;
          MessageAttributes?: Record<string, { StringValue?: string }>;
        };
        return input.Entries ?? [input];
      })
      .filter((e) => e.MessageAttributes?.['fanin-aggregate-id']?.StringValue === id)
      .filter((e) => !JSON.stringify(e.MessageBody ?? '').includes('fanin.aggregate'))
      .map((e) => ({
        replyId: e.MessageAttributes?.['fanin-reply-id']?.StringValue,
        attempt: e.MessageAttributes?.['fanin-attempt']?.StringValue ?? '1',
        body: e.MessageBody,
      }));
  /** Opens an aggregate of two items at the test clock's time; returns its two sub-requests. */
  const open = async (id: string): Promise<Message[]> => {
    await fanin.sendRequest({ definition: 'pickers', aggregateId: id, items: [{ sku: 'a' }, { sku: 'b' }] });
    await fanin.drain();
    const asked = await fanin.takeRequests(pickers);
    expect(asked, 'one sub-request per item').toHaveLength(2);
    return asked.sort(
      (a, b) => Number(attributesOf(a)['fanin-reply-id']) - Number(attributesOf(b)['fanin-reply-id']),
    );
  };
  /** Fires timer messages as SQS makes them visible (real delays) until `done` or `withinMs`. */
  const fireTimersUntil = async (done: () => boolean, withinMs: number): Promise<void> => {
    const until = Date.now() + withinMs;
    while (!done() && Date.now() < until) {
      await fanin.fireTimers();
      if (!done()) await sleep(250);
    }
  };

  it('a silent recipient is asked again at its round with its reply id and attempt 2, and its reply to the retry is its one reply', async () => {
    // Prepare: item a replies, item b is silent
    const id = `retried-${stamp}`;
    const [a] = await open(id);
    await fanin.reply(a as Message, { picked: 'a' });
    await fanin.drain();

    // Act: the first round falls due; its timer (armed at the open, 2 s) fires
    fanin.clock.advance(INTERVAL_MS + 100);
    await fireTimersUntil(() => sentTo(id).length > 2, 6_000);
    const again = await fanin.takeRequests(pickers);
    expect(again, 'one retry, on the queue the sub-request went to').toHaveLength(1);
    const retry = again[0] as Message;
    await fanin.reply(retry, { picked: 'b' });
    await fanin.drain();

    // Assess (mutant killed: "a round asks no one again" — nothing on the queue, no result)
    expect(attributesOf(retry)).toMatchObject({ 'fanin-reply-id': '1', 'fanin-attempt': '2' });
    expect(JSON.parse(retry.Body ?? 'null')).toEqual({ sku: 'b' });
    expect(
      sentTo(id).map((s) => [s.replyId, s.attempt]),
      'item a, which replied, is never asked again',
    ).toEqual([
      ['0', '1'],
      ['1', '1'],
      ['1', '2'],
    ]);
    const { output } = fanin.expectExactlyOneTerminalOutput(id);
    expect(output).toMatchObject({
      outcome: 'completed',
      completedBy: 'all-arrived',
      counts: { received: 2 },
    });
    expect(output.recipients).toEqual([
      expect.objectContaining({ replyId: '0', fate: 'replied' }),
      expect.objectContaining({ replyId: '1', fate: 'replied', retries: 1 }),
    ]);
  });

  it('a crash between a retry sent and its round recorded sends it once more, the same attempt, and never a third time', async () => {
    // Prepare: nobody replies
    const id = `crash-${stamp}`;
    await open(id);
    fanin.clock.advance(INTERVAL_MS + 100);
    const round = { kind: 'deadline', aggregateId: id, dueAt: fanin.clock.now };
    const timer = (messageId: string, receiveCount: number) =>
      handleTimer(fanin.ctx, { messageId, body: JSON.stringify(round), attributes: {}, receiveCount });
    // the invocation dies at the round's record, after its sends
    fanin.probe.crashAt(
      {
        name: 'DynamoDB.UpdateItem',
        where: (c) =>
          String((c.input as { UpdateExpression?: string }).UpdateExpression).includes('retryRound'),
      },
      'before',
    );

    // Act: the timer, then its redelivery, then a copy of it
    await expect(timer('t-1', 1)).rejects.toThrow();
    expect(fanin.probe.disarm(), 'crashed at the record').toBeDefined();
    await timer('t-1', 2);
    await timer('t-2', 1);

    // Assess (mutant killed: "the round recorded before it is sent" — the crash loses the retry,
    // attempt 2 never sent; mutant "each look takes a round": the third look sends attempt 3 at once)
    const retries = sentTo(id).filter((s) => s.attempt !== '1');
    expect(retries.map((s) => [s.replyId, s.attempt])).toEqual([
      ['0', '2'],
      ['1', '2'],
      ['0', '2'],
      ['1', '2'],
    ]);
    const header = await fanin.ctx.store.getHeader(id);
    expect(header).toMatchObject({ retryRound: 1, retried: { '0': 1, '1': 1 } });
    fanin.expectNoTerminalOutput(id);
  });

  describe('failed replies retried (retry.failedReplies)', () => {
    /** Opens an aggregate of two items of definition `failing`; returns its two sub-requests, by reply id. */
    const openFailing = async (id: string): Promise<Message[]> => {
      await fanin.sendRequest({
        definition: 'failing',
        aggregateId: id,
        items: [{ sku: 'a' }, { sku: 'b' }],
      });
      await fanin.drain();
      const asked = await fanin.takeRequests(failing);
      expect(asked, 'one sub-request per item').toHaveLength(2);
      return asked.sort(
        (a, b) => Number(attributesOf(a)['fanin-reply-id']) - Number(attributesOf(b)['fanin-reply-id']),
      );
    };
    /** A failed reply to `subRequest`, as SQS would deliver it (its fanin-* attributes copied back). */
    const failureTo = (subRequest: Message, messageId: string, receiveCount = 1): RawMessage => ({
      messageId,
      body: JSON.stringify({ code: 'DOWN' }),
      attributes: {
        ...Object.fromEntries(
          Object.entries(attributesOf(subRequest)).filter(([k]) => k.startsWith('fanin-')),
        ),
        'fanin-failure': 'picker down',
      },
      receiveCount,
      sentAt: fanin.clock.now,
    });
    const failedKeeps = () =>
      fanin.probe.calls.filter(
        (c: AwsCall) =>
          c.system &&
          c.name === 'DynamoDB.UpdateItem' &&
          String((c.input as { UpdateExpression?: string }).UpdateExpression).includes('failedAttempts'),
      );

    it('a failed reply kept, then its handler crashed, redelivered and sent again, asks its recipient once more, and its reply to the retry is its one reply', async () => {
      // Prepare: item a replies; item b's failure is kept, then the handler dies before its delivery is acknowledged
      const id = `failed-${stamp}`;
      const [a, b] = await openFailing(id);
      await fanin.reply(a as Message, { picked: 'a' });
      await fanin.drain();
      fanin.probe.crashAt(
        {
          name: 'DynamoDB.UpdateItem',
          where: (c) =>
            String((c.input as { UpdateExpression?: string }).UpdateExpression).includes('failedAttempts'),
        },
        'after',
      );
      const crashed = await handleReplies(fanin.ctx, [failureTo(b as Message, `f-${stamp}`)]);
      expect(fanin.probe.disarm(), 'crashed after the keep').toBeDefined();
      expect([...crashed], 'the delivery is not acknowledged').toEqual([`f-${stamp}`]);

      // Act: the redelivery, a second send of the same failure by the responder, then the round
      expect((await handleReplies(fanin.ctx, [failureTo(b as Message, `f-${stamp}`, 2)])).size).toBe(0);
      expect((await handleReplies(fanin.ctx, [failureTo(b as Message, `f2-${stamp}`)])).size).toBe(0);
      fanin.expectNoTerminalOutput(id);
      fanin.clock.advance(INTERVAL_MS + 100);
      await fireTimersUntil(() => sentTo(id).length > 2, 6_000);
      const again = await fanin.takeRequests(failing);
      expect(again, 'one retry, on the queue the sub-request went to').toHaveLength(1);
      const retry = again[0] as Message;
      await fanin.reply(retry, { picked: 'b' });
      await fanin.drain();

      // Assess (mutant killed: "a failed reply with a retry ahead recorded as its recipient's reply" —
      // the aggregate completes with item b failed and nobody is asked again)
      expect(attributesOf(retry)).toMatchObject({ 'fanin-reply-id': '1', 'fanin-attempt': '2' });
      expect(
        sentTo(id).map((s) => [s.replyId, s.attempt]),
        'every send the system made, below deduplication: item b asked once more, never twice',
      ).toEqual([
        ['0', '1'],
        ['1', '1'],
        ['1', '2'],
      ]);
      expect(
        failedKeeps().filter((c) => c.outcome === 'ok'),
        'the failure kept once',
      ).toHaveLength(1);
      const { output } = fanin.expectExactlyOneTerminalOutput(id);
      expect(output).toMatchObject({
        outcome: 'completed',
        completedBy: 'all-arrived',
        counts: { received: 2, failed: 0 },
        failures: [],
      });
      expect(output.recipients).toEqual([
        expect.objectContaining({ replyId: '0', fate: 'replied' }),
        expect.objectContaining({ replyId: '1', fate: 'replied', retries: 1, failedAttempt: 1 }),
      ]);
    });

    it('the failure of the last attempt is the recipient’s reply, and a copy of the first attempt’s failure after it changes nothing', async () => {
      // Prepare: item a replies; item b fails attempt 1 and is asked again
      const id = `failed-last-${stamp}`;
      const [a, b] = await openFailing(id);
      await fanin.reply(a as Message, { picked: 'a' });
      await fanin.drain();
      expect((await handleReplies(fanin.ctx, [failureTo(b as Message, `l1-${stamp}`)])).size).toBe(0);
      fanin.clock.advance(INTERVAL_MS + 100);
      await fireTimersUntil(() => sentTo(id).length > 2, 6_000);
      const [retry] = await fanin.takeRequests(failing);
      if (!retry) throw new Error('item b was not asked again');

      // Act: a late copy of attempt 1's failure, then attempt 2 fails too
      expect((await handleReplies(fanin.ctx, [failureTo(b as Message, `l1-${stamp}`, 3)])).size).toBe(0);
      fanin.expectNoTerminalOutput(id);
      expect((await handleReplies(fanin.ctx, [failureTo(retry, `l2-${stamp}`)])).size).toBe(0);

      // Assess (mutant killed: "a failure kept while no round is left" — no result until item b's deadline)
      expect(sentTo(id).map((s) => [s.replyId, s.attempt])).toEqual([
        ['0', '1'],
        ['1', '1'],
        ['1', '2'],
      ]);
      const { output } = fanin.expectExactlyOneTerminalOutput(id);
      expect(output).toMatchObject({
        outcome: 'failed',
        completedBy: 'failures',
        failures: [expect.objectContaining({ replyId: '1', error: 'picker down' })],
      });
      expect(output.recipients).toEqual([
        expect.objectContaining({ replyId: '0', fate: 'replied' }),
        expect.objectContaining({ replyId: '1', fate: 'failed', retries: 1, failedAttempt: 1 }),
      ]);
    });
  });
});
