import type { Message } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RawMessage } from '../../../shared/ports.ts';
import { handleReplies } from '../../../shared/use-cases/replies.ts';
import { FaninUnderTest, takeAll } from '../../support/fanin.ts';

/**
 * Each recipient's own reply deadline and the heartbeats that extend it (docs/definitions.md,
 * "Looking after the responders"; docs/wire-contract.md, "Heartbeat"), through the real handlers
 * and the emulators: a silent recipient is settled as timed out at its own deadline, seconds
 * after the open, long before the aggregate's; a heartbeat before that deadline moves it once,
 * however often it is delivered; one after it, or one fanin cannot place, changes nothing. The
 * terminal outputs are counted as sent (the probe records every publication, below any FIFO
 * deduplication). Timer messages are real SQS delays, so the deadlines are kept to a few seconds.
 */
describe("recipients' own deadlines and heartbeats", () => {
  let fanin: FaninUnderTest;
  const stamp = Date.now().toString(36);
  // A recipient list's own deadlines name its queues, so the queues have fixed names.
  const [bankA, bankB, bankC] = ['a', 'b', 'c'].map((q) => `rcp-${q}-${stamp}`) as [string, string, string];
  const RECIPIENT_MS = 3_000;
  const OWN_C_MS = 5_000;
  const HEARTBEAT_MS = 5_000;
  const AGGREGATE_MS = 60_000;
  beforeAll(async () => {
    fanin = await FaninUnderTest.start([
      {
        name: 'banks',
        fanOut: { type: 'recipient-list', recipients: [bankA, bankB, bankC] },
        completion: { strategy: 'all' },
        timeoutSeconds: AGGREGATE_MS / 1000,
        responders: {
          timeoutSeconds: RECIPIENT_MS / 1000,
          timeouts: { [bankC]: OWN_C_MS / 1000 },
          heartbeatSeconds: HEARTBEAT_MS / 1000,
        },
        requestParameters: { recipientTimeoutSeconds: { min: 1, max: 4 } },
      },
      {
        name: 'quiet',
        fanOut: { type: 'recipient-list', recipients: [bankA, bankB, bankC] },
        completion: { strategy: 'all' },
        timeoutSeconds: AGGREGATE_MS / 1000,
        responders: { timeoutSeconds: RECIPIENT_MS / 1000 },
      },
    ]);
    for (const q of [bankA, bankB, bankC]) await fanin.targetQueue(q, true);
  });
  afterAll(() => fanin.stop());

  type Missing = { replyId: string; label?: string; timedOut?: true };
  type Fate = { replyId: string; fate: string; deadline?: number; heartbeatAt?: number };
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  /** Opens an aggregate at the test clock's time; returns when, and the three sub-requests. */
  const open = async (definition: string, id: string, parameters?: Record<string, unknown>) => {
    const opened = fanin.clock.now;
    await fanin.sendRequest({ definition, aggregateId: id, ...(parameters ? { parameters } : {}) });
    await fanin.drain();
    const asked = await Promise.all([bankA, bankB, bankC].map((q) => fanin.takeRequests(q)));
    expect(
      asked.map((m) => m.length),
      'one sub-request per recipient',
    ).toEqual([1, 1, 1]);
    return { opened, subRequests: asked.map((m) => m[0]) as [Message, Message, Message] };
  };
  const faninAttributes = (subRequest: Message): Record<string, string> => {
    const attributes: Record<string, string> = {};
    for (const [k, v] of Object.entries(subRequest.MessageAttributes ?? {}))
      if (k.startsWith('fanin-') && v.StringValue !== undefined) attributes[k] = v.StringValue;
    return attributes;
  };
  /** A heartbeat as the wire contract has a responder send it: to fanin-reply-to, the sub-request's attributes plus fanin-heartbeat. */
  const heartbeat = async (subRequest: Message): Promise<void> => {
    const attributes: Record<string, string> = { ...faninAttributes(subRequest), 'fanin-heartbeat': '1' };
    const replyTo = attributes['fanin-reply-to'] as string;
    const partition = fanin.provisioned.replyQueueUrls.indexOf(replyTo);
    expect(partition, 'the heartbeat goes to a reply partition').toBeGreaterThanOrEqual(0);
    await fanin.sendReply({}, attributes, partition);
  };
  const terminalOf = (id: string) =>
    fanin.probe.published.filter((p) => p.body.id === `${id}/result` && p.channel !== 'eventbridge');
  /** Fires timer messages as SQS makes them visible (real delays) until the aggregate has a terminal output. */
  const fireTimersUntilDone = async (id: string, withinMs: number): Promise<void> => {
    const until = Date.now() + withinMs;
    while (terminalOf(id).length === 0 && Date.now() < until) {
      await fanin.fireTimers();
      if (terminalOf(id).length === 0) await sleep(250);
    }
  };
  const unchanged = (id: string) =>
    fanin.logs.filter(
      (l) => l.message.startsWith('heartbeat changed nothing') && l.fields.aggregateId === id,
    );

  it("all with one recipient silent completes all-settled at that recipient's own deadline, by its timer, once, the silent one missing as timed out", async () => {
    // Prepare: bank-a and bank-c reply; bank-b (3 s of its own) never does
    const id = `settled-${stamp}`;
    const { opened, subRequests } = await open('banks', id);
    await fanin.reply(subRequests[0], { rate: 4 });
    await fanin.reply(subRequests[2], { rate: 5 });
    await fanin.drain();
    fanin.clock.advance(RECIPIENT_MS - 500);
    await fanin.fireTimers();
    fanin.expectNoTerminalOutput(id);

    // Act: bank-b's deadline passes; the timer armed at the open fires (after its real 3 s delay)
    fanin.clock.advance(600);
    await fireTimersUntilDone(id, 6_000);

    // Assess (mutant killed: "timed-out recipients not counted toward all arrived" — the
    // aggregate waits for its 60 s deadline and nothing is published here)
    const { output } = fanin.expectExactlyOneTerminalOutput(id);
    expect(
      fanin.clock.now - opened,
      'decided seconds after the open, not at the aggregate deadline',
    ).toBeLessThan(RECIPIENT_MS + 1_000);
    expect(output).toMatchObject({
      outcome: 'completed',
      completedBy: 'all-settled',
      counts: { expected: 3, received: 2, failed: 0 },
    });
    expect(output.missing as Missing[]).toEqual([{ replyId: '1', label: bankB, timedOut: true }]);
    // (mutant killed: "a recipient list's own timeouts ignored" — bank-c's deadline is the definition's 3 s)
    expect(output.recipients as Fate[]).toEqual([
      { replyId: '0', fate: 'replied', deadline: opened + RECIPIENT_MS },
      { replyId: '1', fate: 'timed-out', deadline: opened + RECIPIENT_MS },
      { replyId: '2', fate: 'replied', deadline: opened + OWN_C_MS },
    ]);
    // the aggregate deadline, later, adds nothing
    fanin.clock.advance(AGGREGATE_MS);
    await fanin.sweep();
    fanin.expectExactlyOneTerminalOutput(id);
  });

  it('a heartbeat sent twice and redelivered extends the deadline once: not decided at the old deadline, completed by the reply after it, never a member', async () => {
    // Prepare: bank-a and bank-c reply
    const id = `beat-${stamp}`;
    const { subRequests } = await open('banks', id);
    await fanin.reply(subRequests[0], { rate: 4 });
    await fanin.reply(subRequests[2], { rate: 5 });
    await fanin.drain();

    // Act: at 1 s bank-b beats, the message sent twice (two SQS messages, the same SentTimestamp)
    fanin.clock.advance(1_000);
    const beatAt = fanin.clock.now;
    await heartbeat(subRequests[1]);
    await heartbeat(subRequests[1]);
    await fanin.drain();
    // (mutant killed: "a heartbeat recorded as a reply" — all three in, completed now)
    fanin.expectNoTerminalOutput(id);
    // and redelivered at 2.5 s (the same SQS message: same id and SentTimestamp, received again)
    fanin.clock.advance(1_500);
    const redelivered: RawMessage = {
      messageId: `redelivered-${id}`,
      body: '{}',
      attributes: { ...faninAttributes(subRequests[1]), 'fanin-heartbeat': '1' },
      receiveCount: 2,
      sentAt: beatAt,
    };
    expect((await handleReplies(fanin.ctx, [redelivered])).size).toBe(0);
    // past the old deadline (3 s), before the new one (1 s + 5 s): the sweeper looks, nothing is decided
    fanin.clock.advance(1_000);
    await fanin.sweep();
    // (mutant killed: "a heartbeat never extends" — bank-b is timed out at 3 s and all-settled is published)
    fanin.expectNoTerminalOutput(id);
    // and the next recipient deadline it keeps moves on to bank-b's new one (mutant killed: "the
    // timer and the sweeper never look at the recipients' deadlines" — it stays at 3 s and every
    // sweep finds it due again)
    expect((await fanin.ctx.store.getHeader(id))?.recipientsDue).toBe(beatAt + HEARTBEAT_MS);
    fanin.clock.advance(2_000);
    await fanin.reply(subRequests[1], { rate: 3 });
    await fanin.drain();

    // Assess
    const { output } = fanin.expectExactlyOneTerminalOutput(id);
    expect(output).toMatchObject({
      outcome: 'completed',
      completedBy: 'all-arrived',
      counts: { expected: 3, received: 3, failed: 0 },
      missing: [],
    });
    const result = output.result as { replyId: string; body: unknown }[];
    expect(result.map((r) => [r.replyId, r.body]).sort()).toEqual([
      ['0', { rate: 4 }],
      ['1', { rate: 3 }],
      ['2', { rate: 5 }],
    ]);
    // moved once, by the first copy (mutant killed: "a heartbeat's time is when it is handled" —
    // the redelivery at 2.5 s moves the deadline to 7.5 s)
    expect((output.recipients as Fate[])[1]).toEqual({
      replyId: '1',
      fate: 'replied',
      deadline: beatAt + HEARTBEAT_MS,
      heartbeatAt: beatAt,
    });
    expect(unchanged(id), 'the copy and the redelivery each changed nothing').toHaveLength(2);
    expect(await fanin.outputs('late')).toEqual([]);
    expect(await fanin.outputs('error')).toEqual([]);
  });

  it("a heartbeat after its recipient's deadline changes nothing: the recipient stays timed out", async () => {
    // Prepare: bank-a replies; bank-b's 3 s pass with no reply; bank-c (5 s) still has time
    const id = `after-${stamp}`;
    const { opened, subRequests } = await open('banks', id);
    await fanin.reply(subRequests[0], { rate: 4 });
    await fanin.drain();
    fanin.clock.advance(RECIPIENT_MS + 500);

    // Act: bank-b beats at 3.5 s, then bank-c replies at 4 s
    await heartbeat(subRequests[1]);
    await fanin.drain();
    const header = await fanin.ctx.store.getHeader(id);
    expect(header?.beats?.['1'], 'the late heartbeat is not kept').toBeUndefined();
    fanin.clock.advance(500);
    await fanin.reply(subRequests[2], { rate: 5 });
    await fanin.drain();

    // Assess (mutant killed: "a heartbeat extends whenever it comes" — bank-b is moved to 8.5 s
    // and the aggregate is still open after bank-c's reply)
    const { output } = fanin.expectExactlyOneTerminalOutput(id);
    expect(output).toMatchObject({ outcome: 'completed', completedBy: 'all-settled' });
    expect(output.missing as Missing[]).toEqual([{ replyId: '1', label: bankB, timedOut: true }]);
    expect((output.recipients as Fate[])[1]).toEqual({
      replyId: '1',
      fate: 'timed-out',
      deadline: opened + RECIPIENT_MS,
    });
    expect(unchanged(id)).toHaveLength(1);
    expect(await fanin.outputs('error')).toEqual([]);
  });

  it('a heartbeat naming no aggregate, or to a definition that takes none, goes to the error output with the reason', async () => {
    // Prepare: an aggregate of a definition without heartbeats
    const id = `quiet-${stamp}`;
    const { subRequests } = await open('quiet', id);
    await fanin.outputs('error');

    // Act
    await fanin.sendReply(
      {},
      { 'fanin-aggregate-id': `nobody-${stamp}`, 'fanin-reply-id': '0', 'fanin-heartbeat': '1' },
    );
    await heartbeat(subRequests[1]);
    await fanin.drain();

    // Assess (mutants killed: "a heartbeat to no aggregate dropped in silence"; "a definition
    // without heartbeatSeconds ignores heartbeats in silence")
    const errors = await fanin.outputs('error');
    expect(errors).toHaveLength(2);
    expect(errors.every((e) => e.type === 'fanin.error' && e.source === 'reply')).toBe(true);
    const reasons = errors.map((e) => String(e.reason));
    expect(
      reasons.some((r) => r.includes('heartbeat') && r.includes(`no aggregate nobody-${stamp} exists`)),
      reasons.join('\n'),
    ).toBe(true);
    expect(
      reasons.some((r) => r.includes('heartbeat') && r.includes('"quiet" takes no heartbeats')),
      reasons.join('\n'),
    ).toBe(true);
    // neither is a reply: no aggregate is opened for the first, the quiet one is still open and
    // does not complete on the other two replies
    expect(await fanin.ctx.store.getHeader(`nobody-${stamp}`)).toBeUndefined();
    expect((await fanin.ctx.store.getHeader(id))?.status).toBe('open');
    await fanin.reply(subRequests[0], { rate: 1 });
    await fanin.reply(subRequests[2], { rate: 2 });
    await fanin.drain();
    fanin.expectNoTerminalOutput(id);
  });

  it("with every timer lost, the sweeper alone settles the recipient at its deadline (a request's own recipientTimeoutSeconds)", async () => {
    // Prepare: a request of its own 2 s recipient deadline; bank-a and bank-c (5 s of its own) reply
    const id = `swept-${stamp}`;
    const { opened, subRequests } = await open('banks', id, { recipientTimeoutSeconds: 2 });
    await fanin.reply(subRequests[0], { rate: 4 });
    await fanin.reply(subRequests[2], { rate: 5 });
    await fanin.drain();
    // the timers are lost: none is ever fired (and those already visible are dropped)
    await takeAll(fanin.provisioned.queueUrls.timer);
    fanin.clock.advance(1_900);
    await fanin.sweep();
    fanin.expectNoTerminalOutput(id);

    // Act
    fanin.clock.advance(200);
    await fanin.sweep();

    // Assess (mutant killed: "no recipient deadline due entry at the open" — nothing is
    // published at 2.1 s; and "a request cannot set recipientTimeoutSeconds" — the request is refused)
    const { output } = fanin.expectExactlyOneTerminalOutput(id);
    expect(output).toMatchObject({ outcome: 'completed', completedBy: 'all-settled' });
    expect(output.missing as Missing[]).toEqual([{ replyId: '1', label: bankB, timedOut: true }]);
    expect((output.recipients as Fate[]).map((r) => [r.fate, r.deadline])).toEqual([
      ['replied', opened + 2_000],
      ['timed-out', opened + 2_000],
      ['replied', opened + OWN_C_MS],
    ]);
    await takeAll(fanin.provisioned.queueUrls.timer);
  });
});
