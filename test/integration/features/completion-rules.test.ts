import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReplyToRecord } from '../../../shared/ports.ts';
import { handleReplies } from '../../../shared/use-cases/replies.ts';
import { sealingAfter } from '../../support/failpoints.ts';
import { FaninUnderTest, type OutputBody } from '../../support/fanin.ts';

/**
 * Issue 14, part A, through the real handlers against the emulators: a completion predicate,
 * any-of combinations reporting what completed the aggregate, failed replies within and beyond
 * the definition's tolerance, and a request's own parameters within the definition's bounds.
 */
describe('completion rules', () => {
  let fanin: FaninUnderTest;

  beforeAll(async () => {
    fanin = await FaninUnderTest.start([
      {
        name: 'quorum',
        fanOut: { type: 'none' },
        // Complete once as many replies say yes as the request asks for (it reads the request).
        completion: {
          strategy: 'predicate',
          expression: '$count(replies[vote = "yes"]) >= request.body.quorum',
        },
        timeoutSeconds: 60,
      },
      {
        name: 'fragile',
        fanOut: { type: 'none' },
        completion: { strategy: 'predicate', expression: '$error("no verdict")' },
      },
      {
        name: 'quotes',
        fanOut: { type: 'none' },
        completion: {
          strategy: 'any',
          rules: [
            {
              rule: 'threshold',
              score: { source: 'path', path: '$.rate' },
              threshold: 3,
              direction: 'below',
            },
            { rule: 'count', count: 3 },
            { rule: 'all-arrived' },
          ],
        },
        aggregation: { algorithm: 'best', criteria: [{ path: '$.rate', order: 'min' }] },
        timeoutSeconds: 60,
      },
      {
        name: 'survey',
        fanOut: { type: 'none' },
        completion: { strategy: 'all' },
        aggregation: { algorithm: 'condense', field: '$.score', functions: ['count', 'avg'] },
        toleratedFailureCount: 1,
        timeoutSeconds: 60,
      },
      {
        name: 'sized',
        fanOut: { type: 'none' },
        completion: { strategy: 'count', count: 3 },
        timeoutSeconds: 600,
        requestParameters: { count: { min: 1, max: 5 }, timeoutSeconds: { min: 10, max: 120 } },
      },
    ]);
  });
  afterAll(() => fanin.stop());

  const reply = (aggregateId: string, replyId: string, body: unknown, extra: Record<string, string> = {}) =>
    fanin.sendReply(body, { 'fanin-aggregate-id': aggregateId, 'fanin-reply-id': replyId, ...extra });
  const failure = (aggregateId: string, replyId: string, error: string) =>
    reply(aggregateId, replyId, { detail: error, score: 0 }, { 'fanin-failure': error });
  const of = (outputs: OutputBody[], aggregateId: string) =>
    outputs.filter((o) => o.aggregateId === aggregateId);

  it('a predicate satisfied at the third reply completes with exactly those three replies; a later one is late', async () => {
    // Prepare
    await fanin.sendRequest({ definition: 'quorum', aggregateId: 'q-1', expected: 5, quorum: 2 });
    await fanin.drain();

    // Act: one reply at a time, as a responder would send them
    for (const [id, vote] of [
      ['a', 'yes'],
      ['b', 'no'],
    ] as const) {
      await reply('q-1', id, { vote });
      await fanin.drain();
    }
    const before = of(await fanin.outputs('completed'), 'q-1');
    await reply('q-1', 'c', { vote: 'yes' });
    await fanin.drain();
    await reply('q-1', 'd', { vote: 'yes' });
    await fanin.drain();

    // Assess (mutant killed: a predicate that is never evaluated leaves the aggregate open)
    expect(before).toHaveLength(0);
    const { output } = fanin.expectExactlyOneTerminalOutput('q-1');
    expect(output).toMatchObject({
      outcome: 'completed',
      completedBy: 'predicate',
      counts: { expected: 5, received: 3, failed: 0 },
    });
    expect((output.result as { replyId: string }[]).map((r) => r.replyId)).toEqual(['a', 'b', 'c']);
    expect(of(await fanin.outputs('late'), 'q-1').map((o) => o.replyId)).toEqual(['d']);
  });

  it('a reply recorded between the predicate completer’s read and its seal is routed late, never in the result', async () => {
    // Prepare
    await fanin.sendRequest({ definition: 'quorum', aggregateId: 'q-race', expected: 5, quorum: 2 });
    await fanin.drain();
    await reply('q-race', 'a', { vote: 'yes' });
    await fanin.drain();
    const healthy = fanin.ctx;
    const racer: ReplyToRecord = {
      replyId: 'z',
      payload: JSON.stringify({ vote: 'yes' }),
      receivedAt: fanin.clock.now,
      expiresAt: Math.ceil(fanin.clock.now / 1000) + 3600,
      messageId: 'm-racer',
    };

    // Act: reply b satisfies the predicate; just before its handler seals, the racer's put lands
    // (its own handler paused after the put, before its read)
    const completer = sealingAfter(healthy, async () => {
      await healthy.store.putReply('q-race', racer);
    });
    const failed = await handleReplies(completer, [
      {
        messageId: 'm-b',
        body: JSON.stringify({ vote: 'yes' }),
        attributes: { 'fanin-aggregate-id': 'q-race', 'fanin-reply-id': 'b' },
        receiveCount: 1,
      },
    ]);
    // The racer's handler wakes: its put is a duplicate, its read finds the aggregate sealed
    await reply('q-race', 'z', { vote: 'yes' });
    await fanin.drain();

    // Assess (mutant killed: building the result from a second read puts z in it)
    expect(failed.size).toBe(0);
    const { output } = fanin.expectExactlyOneTerminalOutput('q-race');
    expect(output).toMatchObject({ completedBy: 'predicate', counts: { received: 2 } });
    expect((output.result as { replyId: string }[]).map((r) => r.replyId)).toEqual(['a', 'b']);
    expect([...new Set(of(await fanin.outputs('late'), 'q-race').map((o) => o.replyId))]).toEqual(['z']);
  });

  it('a predicate that fails ends its aggregate failed with the reason at that reply, once', async () => {
    // Prepare
    await fanin.sendRequest({ definition: 'fragile', aggregateId: 'f-1', expected: 3 });
    await fanin.drain();

    // Act: the same reply delivered twice
    await reply('f-1', 'a', { v: 1 });
    await reply('f-1', 'a', { v: 1 });
    await fanin.drain();

    // Assess
    const { output, channel } = fanin.expectExactlyOneTerminalOutput('f-1');
    expect(channel).toBe('error');
    expect(output).toMatchObject({
      type: 'fanin.aggregate.failed',
      outcome: 'failed',
      completedBy: 'predicate',
      reason: expect.stringContaining('no verdict'),
    });
  });

  it.each([
    ['a rate at or below the threshold', 'qa-threshold', 5, [4.1, 2.9], 'threshold', 2.9],
    ['the third reply', 'qa-count', 5, [4.1, 3.9, 3.5], 'count', 3.5],
    ['the last expected reply', 'qa-all', 2, [4.1, 3.9], 'all-arrived', 3.9],
  ])(
    'any-of: %s completes the aggregate and is reported as what completed it',
    async (_what, id, expected, rates, by, best) => {
      // Prepare
      await fanin.sendRequest({ definition: 'quotes', aggregateId: id, expected });
      await fanin.drain();

      // Act
      for (const [index, rate] of rates.entries()) {
        await reply(id, String(index), { rate });
        await fanin.drain();
      }

      // Assess (mutant killed: reporting the first rule of the list whatever held)
      const { output } = fanin.expectExactlyOneTerminalOutput(id);
      expect(output).toMatchObject({
        outcome: 'completed',
        completedBy: by,
        counts: { received: rates.length },
      });
      expect(output.result).toMatchObject({ body: { rate: best } });
    },
  );

  it('the deadline, a complete command and a purge are reported as what ended the aggregate', async () => {
    // Prepare
    for (const id of ['qa-deadline', 'qa-complete', 'qa-purge']) {
      await fanin.sendRequest({ definition: 'quotes', aggregateId: id, expected: 5 });
    }
    await fanin.drain();
    await reply('qa-complete', '0', { rate: 4 });
    await fanin.drain();

    // Act
    await fanin.sendControl({ command: 'complete', aggregateId: 'qa-complete' });
    await fanin.sendControl({ command: 'purge', aggregateId: 'qa-purge' });
    await fanin.drain();
    fanin.clock.advance(61_000);
    await fanin.sweep();

    // Assess
    expect(fanin.expectExactlyOneTerminalOutput('qa-deadline').output).toMatchObject({
      outcome: 'timed-out',
      completedBy: 'deadline',
    });
    expect(fanin.expectExactlyOneTerminalOutput('qa-complete').output).toMatchObject({
      outcome: 'completed',
      completedBy: 'external',
    });
    expect(fanin.expectExactlyOneTerminalOutput('qa-purge').output).toMatchObject({
      outcome: 'purged',
      completedBy: 'purge',
    });
  });

  it('failed replies within the tolerance are reported beside the result, never folded into it', async () => {
    // Prepare
    await fanin.sendRequest({ definition: 'survey', aggregateId: 's-ok', expected: 3 });
    await fanin.drain();

    // Act
    await reply('s-ok', '0', { score: 4 });
    await failure('s-ok', '1', 'respondent unreachable');
    await reply('s-ok', '2', { score: 2 });
    await fanin.drain();

    // Assess (mutant killed: a failure passed to condense as a reply counts 3, its score 0 in the average)
    const { output } = fanin.expectExactlyOneTerminalOutput('s-ok');
    expect(output).toMatchObject({
      outcome: 'completed',
      completedBy: 'all-arrived',
      counts: { expected: 3, received: 3, failed: 1 },
      result: { count: 2, avg: 3 },
      failures: [
        {
          replyId: '1',
          error: 'respondent unreachable',
          body: { detail: 'respondent unreachable', score: 0 },
        },
      ],
      missing: [],
    });
  });

  it('a completion resumed after its owner failed to publish carries the same completedBy and failures', async () => {
    // Kills two mutants: the seal not keeping completedBy (the resumer publishes null), and the
    // store not keeping a reply's failure (the resumer folds the failure into the result).
    // Prepare
    await fanin.sendRequest({ definition: 'survey', aggregateId: 's-resumed', expected: 2 });
    await fanin.drain();
    await reply('s-resumed', '0', { score: 4 });
    await fanin.drain();
    const restore = fanin.probe.failEvery({ name: 'SQS.SendMessage', queueRole: 'completed' });
    await failure('s-resumed', '1', 'respondent unreachable');
    await fanin.consumePartition(0);
    restore();
    expect(await fanin.ctx.store.getHeader('s-resumed')).toMatchObject({
      status: 'completing',
      completedBy: 'all-arrived',
    });

    // Act: the owner's lease runs out; the sweeper resumes it from the sealed header
    fanin.clock.advance(fanin.ctx.completionLeaseMs + 1);
    await fanin.sweep();

    // Assess
    expect(await fanin.ctx.store.getHeader('s-resumed')).toMatchObject({ status: 'closed' });
    const { output } = fanin.expectExactlyOneTerminalOutput('s-resumed');
    expect(output).toMatchObject({
      completedBy: 'all-arrived',
      counts: { received: 2, failed: 1 },
      result: { count: 1, avg: 4 },
      failures: [{ replyId: '1', error: 'respondent unreachable' }],
    });
    await fanin.drain();
  });

  it('failures beyond the tolerance end the aggregate failed at once, listing them, with one terminal output', async () => {
    // Prepare
    await fanin.sendRequest({ definition: 'survey', aggregateId: 's-bad', expected: 5 });
    await fanin.drain();
    await reply('s-bad', '0', { score: 5 });
    await fanin.drain();

    // Act: the first failure delivered twice is one failure (tolerated); a second one is not
    await failure('s-bad', '1', 'timeout at respondent');
    await failure('s-bad', '1', 'timeout at respondent');
    await fanin.drain();
    const whileTolerated = fanin.publications('s-bad').filter((p) => p.channel === 'error');
    await failure('s-bad', '2', 'refused');
    await fanin.drain();
    await reply('s-bad', '3', { score: 1 });
    await fanin.drain();

    // Assess (mutants killed: failures never counted; a duplicate failure counted twice)
    expect(whileTolerated).toHaveLength(0);
    const { output, channel } = fanin.expectExactlyOneTerminalOutput('s-bad');
    expect(channel).toBe('error');
    expect(output).toMatchObject({
      type: 'fanin.aggregate.failed',
      outcome: 'failed',
      completedBy: 'failures',
      reason: expect.stringContaining('2 replies failed, more than the 1 tolerated'),
      counts: { expected: 5, received: 3, failed: 2 },
      result: null,
      failures: [
        { replyId: '1', error: 'timeout at respondent' },
        { replyId: '2', error: 'refused' },
      ],
    });
    expect(of(await fanin.outputs('late'), 's-bad').map((o) => o.replyId)).toEqual(['3']);
  });

  it('a request’s own count, within the definition’s bounds, completes its aggregate', async () => {
    // Prepare
    await fanin.sendRequest({ definition: 'sized', aggregateId: 'z-2', parameters: { count: 2 } });
    await fanin.sendRequest({ definition: 'sized', aggregateId: 'z-3' });
    await fanin.drain();

    // Act
    for (const id of ['z-2', 'z-3']) {
      await reply(id, 'a', { n: 1 });
      await reply(id, 'b', { n: 2 });
    }
    await fanin.drain();

    // Assess
    expect(fanin.expectExactlyOneTerminalOutput('z-2').output).toMatchObject({
      completedBy: 'count',
      counts: { received: 2 },
    });
    fanin.expectNoTerminalOutput('z-3');
    expect(await fanin.ctx.store.getHeader('z-3')).toMatchObject({ status: 'open', params: { count: 3 } });
  });

  it('a request’s own deadline, within the bounds, times its aggregate out then', async () => {
    // Prepare
    await fanin.sendRequest({
      definition: 'sized',
      aggregateId: 'z-soon',
      parameters: { timeoutSeconds: 10 },
    });
    await fanin.drain();

    // Act
    fanin.clock.advance(11_000);
    await fanin.sweep();

    // Assess
    expect(fanin.expectExactlyOneTerminalOutput('z-soon').output).toMatchObject({
      outcome: 'timed-out',
      completedBy: 'deadline',
    });
  });

  it.each([
    [
      'a count outside the bounds',
      { count: 9 },
      'parameters.count is 9, outside the bounds definition "sized" sets (1 to 5)',
    ],
    [
      'a deadline outside the bounds',
      { timeoutSeconds: 5 },
      'parameters.timeoutSeconds is 5, outside the bounds',
    ],
    [
      'a parameter the definition does not allow',
      { threshold: 2 },
      'does not let a request set parameters.threshold',
    ],
    [
      'a parameter no request can set',
      { writeShards: 4 },
      'parameters.writeShards is not a parameter a request can set',
    ],
    ['a count that is not an integer', { count: 2.5 }, 'parameters.count must be an integer'],
  ])(
    'a request with %s goes to the error output with the reason and opens nothing',
    async (_what, parameters, reason) => {
      // Prepare
      const aggregateId = `z-bad-${Object.keys(parameters)[0]}-${Object.values(parameters)[0]}`.replace(
        '.',
        '_',
      );

      // Act
      await fanin.sendRequest({ definition: 'sized', aggregateId, parameters });
      await fanin.drain();

      // Assess
      const errors = (await fanin.outputs('error')).filter((o) =>
        String((o.message as { body?: string } | undefined)?.body).includes(aggregateId),
      );
      expect(errors).toMatchObject([
        { type: 'fanin.error', source: 'ingress', reason: expect.stringContaining(reason) },
      ]);
      expect(await fanin.ctx.store.getHeader(aggregateId)).toBeUndefined();
    },
  );
});
