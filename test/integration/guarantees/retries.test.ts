import type { Message } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
  beforeAll(async () => {
    fanin = await FaninUnderTest.start([
      {
        name: 'pickers',
        fanOut: { type: 'splitter', itemsPath: '$.items', target: pickers },
        completion: { strategy: 'all' },
        timeoutSeconds: 60,
        responders: { timeoutSeconds: 30, retry: { attempts: 2, intervalSeconds: INTERVAL_MS / 1000 } },
      },
    ]);
    await fanin.targetQueue(pickers, true);
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
});
