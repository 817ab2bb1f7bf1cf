import { describe, expect, it } from 'vitest';
import { type DefinitionInput, simulate } from '../../../../../packages/testing/src/index.ts';
import { noResult, oneResult } from './one-result.ts';

/**
 * Retries of sub-requests (docs/definitions.md, "Retries"), by the kit on the production handlers
 * at virtual time: a recipient that has not replied is sent its sub-request again with the same
 * reply id and an attempt number, on Step Functions' schedule (`intervalSeconds`, then times
 * `backoffRate`), up to `attempts`; never one that replied, is past its own deadline or is
 * working (a heartbeat that still holds), and never once the aggregate is sealed. A reply to any
 * attempt counts once. Counted on every send fanin made (below any deduplication).
 */

const banks: DefinitionInput = {
  name: 'banks',
  fanOut: { type: 'recipient-list', recipients: ['bank-a', 'bank-b', 'bank-c'] },
  completion: { strategy: 'all' },
  timeoutSeconds: 600,
  responders: {
    timeoutSeconds: 120,
    heartbeatSeconds: 40,
    retry: { attempts: 3, intervalSeconds: 20, backoffRate: 2 },
  },
};
const items: DefinitionInput = {
  name: 'items',
  fanOut: { type: 'splitter', itemsPath: '$.items', target: 'worker' },
  completion: { strategy: 'all' },
  timeoutSeconds: 300,
  responders: { timeoutSeconds: 50, retry: { attempts: 3, intervalSeconds: 20, backoffRate: 2 } },
};

type Fate = { replyId: string; fate: string; retries?: number; failedAttempt?: number };

/** The banks with failures retried too (`retry.failedReplies`): rounds at 20 s, 60 s and 140 s, each bank 120 s. */
const retrying: DefinitionInput = {
  ...banks,
  name: 'banks-failed',
  responders: {
    timeoutSeconds: 120,
    heartbeatSeconds: 40,
    retry: { attempts: 3, intervalSeconds: 20, backoffRate: 2, failedReplies: true },
  },
};

describe('retries (kit)', () => {
  it('a silent recipient is asked again at 20 s and 60 s with its reply id and attempt number, and its reply to a retry counts once', async () => {
    // Prepare
    const run = simulate(banks);
    await run.request({ aggregateId: 'loan-1', amount: 100 });
    const opened = run.now();
    await run.reply('bank-a', { rate: 4 });
    await run.reply('bank-c', { rate: 5 });

    // Act: bank-b is silent through two rounds (20 s, 20 + 40 = 60 s), then answers the second retry twice
    await run.advance('19s');
    const beforeFirstRound = run.subRequests('bank-b').length;
    await run.advance('45s');
    const toB = run.subRequests('bank-b', 'loan-1');
    const retry = toB.at(-1);
    if (!retry) throw new Error('no sub-request to bank-b');
    await run.reply(retry, { rate: 3 });
    await run.reply(retry, { rate: 3 });

    // Assess (mutant killed: a round that asks no one again, or asks the ones that replied)
    expect(beforeFirstRound).toBe(1);
    expect(toB.map((s) => [s.replyId, s.attempt, s.sentAt - opened])).toEqual([
      ['1', 1, 0],
      ['1', 2, 20_000],
      ['1', 3, 60_000],
    ]);
    expect(toB.every((s) => JSON.stringify(s.body) === JSON.stringify(toB[0]?.body))).toBe(true);
    expect(run.subRequests('bank-a')).toHaveLength(1);
    expect(run.subRequests('bank-c')).toHaveLength(1);
    const { output } = oneResult(run, 'loan-1');
    expect(output).toMatchObject({
      outcome: 'completed',
      completedBy: 'all-arrived',
      counts: { received: 3 },
    });
    expect(output.recipients as Fate[]).toEqual([
      expect.objectContaining({ replyId: '0', fate: 'replied' }),
      expect.objectContaining({ replyId: '1', fate: 'replied', retries: 2 }),
      expect.objectContaining({ replyId: '2', fate: 'replied' }),
    ]);
    expect((output.recipients as Fate[])[0]?.retries).toBeUndefined();
  });

  it("no retry goes past a recipient's own deadline, and none after the seal", async () => {
    // Prepare: rounds at 20 s and 60 s; bank-c's own deadline is 30 s, bank-b's 120 s
    const run = simulate({
      ...banks,
      name: 'banks-own',
      responders: { ...banks.responders, timeouts: { 'bank-c': 30 } },
    });
    await run.request({ aggregateId: 'loan-3' });
    await run.reply('bank-a', { rate: 4 });

    // Act: bank-b answers its third attempt at 70 s, then time runs on
    await run.advance('70s');
    await run.reply(run.subRequests('bank-b', 'loan-3').at(-1) ?? 'bank-b', { rate: 3 });
    await run.advance('10m');

    // Assess: bank-c was asked again at 20 s, not at 60 s (past its 30 s deadline); nothing was
    // sent after the seal (mutant killed: a round that ignores the recipient's deadline sends
    // bank-c attempt 3 at 60 s)
    expect(run.subRequests('bank-c', 'loan-3').map((s) => s.attempt)).toEqual([1, 2]);
    expect(run.subRequests('bank-b', 'loan-3').map((s) => s.attempt)).toEqual([1, 2, 3]);
    const { output } = oneResult(run, 'loan-3');
    expect(output).toMatchObject({ completedBy: 'all-settled' });
    expect(output.recipients as Fate[]).toEqual([
      expect.objectContaining({ replyId: '0', fate: 'replied' }),
      expect.objectContaining({ replyId: '1', fate: 'replied', retries: 2 }),
      expect.objectContaining({ replyId: '2', fate: 'timed-out', retries: 1 }),
    ]);
    const sealedAt = Number(output.closedAt ?? run.now());
    expect(run.subRequests(undefined, 'loan-3').every((s) => s.sentAt <= sealedAt)).toBe(true);
  });

  it('a splitter item is sent again as itself, to its target', async () => {
    // Prepare
    const run = simulate(items);
    await run.request({ aggregateId: 'job-1', items: ['a', 'b'] });
    await run.reply('worker', { done: 'a' });

    // Act
    await run.advance('21s');

    // Assess
    const toB = run.subRequests('worker', 'job-1').filter((s) => s.replyId === '1');
    expect(toB.map((s) => [s.attempt, s.body])).toEqual([
      [1, 'b'],
      [2, 'b'],
    ]);
  });

  it('a recipient whose heartbeat still holds is working: the round passes it by', async () => {
    // Prepare
    const run = simulate(banks);
    await run.request({ aggregateId: 'loan-2' });
    await run.reply('bank-a', { rate: 4 });

    // Act: bank-b beats at 15 s (holds until 55 s); bank-c is silent
    await run.advance('15s');
    await run.heartbeat({ replyId: '1' });
    await run.advance('10s');

    // Assess (mutant killed: heartbeats ignored by the round, bank-b asked again while working)
    noResult(run, 'loan-2');
    expect(run.subRequests('bank-b', 'loan-2').map((s) => s.attempt)).toEqual([1]);
    expect(run.subRequests('bank-c', 'loan-2').map((s) => s.attempt)).toEqual([1, 2]);
  });

  it('a definition without retry sends each sub-request once and keeps no request for it', async () => {
    // Prepare
    const { retry: _, ...noRetry } = items.responders ?? {};
    const run = simulate({ ...items, name: 'once', responders: noRetry });
    await run.request({ aggregateId: 'job-2', items: ['a', 'b'] });

    // Act
    await run.advance('10m');

    // Assess
    expect(run.subRequests('worker', 'job-2').map((s) => s.attempt)).toEqual([1, 1]);
    const { output } = oneResult(run, 'job-2');
    expect((output.recipients as Fate[]).every((r) => r.retries === undefined)).toBe(true);
  });

  describe('failed replies (retry.failedReplies)', () => {
    it('a recipient that replied with a failure is asked again at the next round, and its reply to the retry is its one reply', async () => {
      // Prepare
      const run = simulate(retrying);
      await run.request({ aggregateId: 'fail-1' });
      const opened = run.now();
      await run.reply('bank-a', { rate: 4 });
      await run.reply('bank-c', { rate: 5 });

      // Act: bank-b fails at 5 s; the round at 20 s asks it again; it answers the retry
      await run.advance('5s');
      await run.fail('bank-b', 'credit check down', { code: 'DOWN' });
      await run.advance('16s');
      const retry = run.subRequests('bank-b', 'fail-1').at(-1);
      if (!retry) throw new Error('no sub-request to bank-b');
      await run.reply(retry, { rate: 3 });

      // Assess (mutant killed: a failed reply with a retry ahead recorded as its recipient's reply)
      expect(run.subRequests('bank-b', 'fail-1').map((s) => [s.attempt, s.sentAt - opened])).toEqual([
        [1, 0],
        [2, 20_000],
      ]);
      const { output } = oneResult(run, 'fail-1');
      expect(output).toMatchObject({
        outcome: 'completed',
        completedBy: 'all-arrived',
        counts: { received: 3, failed: 0 },
        failures: [],
      });
      expect((output.recipients as Fate[])[1]).toMatchObject({
        replyId: '1',
        fate: 'replied',
        retries: 1,
        failedAttempt: 1,
      });
    });

    it('a kept failure is not a failure: with none tolerated the aggregate stays open until the retry answers', async () => {
      // Prepare
      const run = simulate(retrying);
      await run.request({ aggregateId: 'fail-2' });

      // Act: bank-a fails; nothing else yet
      await run.fail('bank-a', 'busy');
      await run.advance('10s');

      // Assess (mutant killed: the kept failure counted against the tolerance)
      noResult(run, 'fail-2');
    });

    it('the failure of the last attempt is the recipient’s reply: recorded failed, the aggregate fails as it would without retries', async () => {
      // Prepare: one retry only, at 20 s
      const run = simulate({
        ...retrying,
        name: 'banks-failed-once',
        responders: { timeoutSeconds: 120, retry: { attempts: 1, intervalSeconds: 20, failedReplies: true } },
      });
      await run.request({ aggregateId: 'fail-3' });
      await run.reply('bank-a', { rate: 4 });
      await run.reply('bank-c', { rate: 5 });

      // Act: bank-b fails attempt 1, is asked again, fails attempt 2
      await run.fail('bank-b', 'down');
      await run.advance('21s');
      const retry = run.subRequests('bank-b', 'fail-3').at(-1);
      if (retry?.attempt !== 2) throw new Error('bank-b was not asked again');
      await run.fail(retry, 'still down');

      // Assess (mutant killed: a failure kept while no round is left, the recipient left to time out)
      const { output } = oneResult(run, 'fail-3');
      expect(output).toMatchObject({
        outcome: 'failed',
        completedBy: 'failures',
        failures: [{ replyId: '1', error: 'still down' }],
      });
      expect((output.recipients as Fate[])[1]).toMatchObject({
        fate: 'failed',
        retries: 1,
        failedAttempt: 1,
      });
      expect(run.subRequests('bank-b', 'fail-3').map((s) => s.attempt)).toEqual([1, 2]);
    });

    it('copies of a failed reply consume no attempt: the recipient is asked once more per round, never twice', async () => {
      // Prepare
      const run = simulate(retrying);
      await run.request({ aggregateId: 'fail-4' });
      await run.reply('bank-a', { rate: 4 });
      await run.reply('bank-c', { rate: 5 });

      // Act: bank-b's failure is sent three times, then it answers the round at 20 s
      await run.fail('bank-b', 'down', null, { copies: 3 });
      await run.advance('21s');
      const retry = run.subRequests('bank-b', 'fail-4').at(-1);
      if (!retry) throw new Error('no sub-request to bank-b');
      await run.fail(retry, 'down again');
      await run.fail(retry, 'down again');
      await run.advance('40s');

      // Assess: attempt 2 at 20 s, attempt 3 at 60 s, one each
      expect(run.subRequests('bank-b', 'fail-4').map((s) => s.attempt)).toEqual([1, 2, 3]);
      noResult(run, 'fail-4');
    });

    it('a failure of attempt 1 handled after attempt 2 went out is no answer to attempt 2, even when attempt 2 is the last', async () => {
      // Prepare: one retry only, at 20 s
      const run = simulate({
        ...retrying,
        name: 'banks-failed-stale',
        responders: { timeoutSeconds: 120, retry: { attempts: 1, intervalSeconds: 20, failedReplies: true } },
      });
      await run.request({ aggregateId: 'fail-5' });
      await run.reply('bank-a', { rate: 4 });
      await run.reply('bank-c', { rate: 5 });
      const first = run.subRequests('bank-b', 'fail-5')[0];
      if (!first) throw new Error('no sub-request to bank-b');

      // Act: bank-b is silent until the retry at 20 s, then its first attempt fails; the retry succeeds
      await run.advance('21s');
      await run.fail(first, 'slow and failed');
      noResult(run, 'fail-5');
      const retry = run.subRequests('bank-b', 'fail-5').at(-1);
      if (retry?.attempt !== 2) throw new Error('bank-b was not asked again');
      await run.reply(retry, { rate: 3 });

      // Assess (mutant killed: a stale failure judged as the last attempt's, ending the aggregate failed)
      const { output } = oneResult(run, 'fail-5');
      expect(output).toMatchObject({ outcome: 'completed', completedBy: 'all-arrived', failures: [] });
      expect((output.recipients as Fate[])[1]).toMatchObject({
        fate: 'replied',
        retries: 1,
        failedAttempt: 1,
      });
    });

    it('a recipient that failed and then stays silent times out at its own deadline, and its fate says it failed before', async () => {
      // Prepare
      const run = simulate(retrying);
      await run.request({ aggregateId: 'fail-6' });
      await run.reply('bank-a', { rate: 4 });
      await run.reply('bank-c', { rate: 5 });

      // Act: bank-b fails attempt 1 and never answers again
      await run.fail('bank-b', 'down');
      await run.advance('10m');

      // Assess: asked at 20 s and 60 s (140 s is past its 120 s deadline); settled as timed out
      expect(run.subRequests('bank-b', 'fail-6').map((s) => s.attempt)).toEqual([1, 2, 3]);
      const { output } = oneResult(run, 'fail-6');
      expect(output).toMatchObject({ completedBy: 'all-settled', failures: [] });
      expect((output.recipients as Fate[])[1]).toMatchObject({
        fate: 'timed-out',
        retries: 2,
        failedAttempt: 1,
      });
    });

    it('a heartbeat before the failure does not hold the round off: a failed recipient is no longer working', async () => {
      // Prepare
      const run = simulate(retrying);
      await run.request({ aggregateId: 'fail-7' });
      await run.reply('bank-a', { rate: 4 });
      await run.reply('bank-c', { rate: 5 });

      // Act: bank-b beats at 10 s (holds until 50 s), fails at 12 s; the round at 20 s
      await run.advance('10s');
      await run.heartbeat({ replyId: '1' });
      await run.advance('2s');
      await run.fail('bank-b', 'gave up');
      await run.advance('9s');

      // Assess (mutant killed: a kept failure's recipient passed by for its heartbeat)
      expect(run.subRequests('bank-b', 'fail-7').map((s) => s.attempt)).toEqual([1, 2]);
    });

    it('a failure at or after the recipient’s deadline is late, as without failedReplies', async () => {
      // Prepare: bank-c's own deadline 30 s; rounds at 20 s and 60 s
      const run = simulate({
        ...retrying,
        name: 'banks-failed-late',
        responders: { ...retrying.responders, timeouts: { 'bank-c': 30 } },
      });
      await run.request({ aggregateId: 'fail-8' });
      await run.reply('bank-a', { rate: 4 });

      // Act: bank-c answers its first attempt with a failure at 35 s, while bank-b still holds the aggregate open
      await run.advance('35s');
      await run.fail(run.subRequests('bank-c', 'fail-8')[0] ?? 'bank-c', 'too late');
      noResult(run, 'fail-8');
      await run.reply('bank-b', { rate: 3 });

      // Assess (mutant killed: a failure kept whatever its recipient's deadline)
      expect(run.outputs('late').map((o) => o.replyId)).toEqual(['2']);
      expect(run.subRequests('bank-c', 'fail-8').map((s) => s.attempt)).toEqual([1, 2]);
      const { output } = oneResult(run, 'fail-8');
      expect(output).toMatchObject({ completedBy: 'all-settled', failures: [] });
      expect((output.recipients as Fate[])[2]).toMatchObject({ fate: 'timed-out', retries: 1 });
      expect((output.recipients as Fate[])[2]?.failedAttempt).toBeUndefined();
    });

    it('without failedReplies a failed reply is its recipient’s reply and is never asked again', async () => {
      // Prepare
      const run = simulate({ ...banks, name: 'banks-no-failed', toleratedFailureCount: 1 });
      await run.request({ aggregateId: 'fail-9' });
      await run.reply('bank-a', { rate: 4 });
      await run.reply('bank-c', { rate: 5 });

      // Act
      await run.fail('bank-b', 'down');
      await run.advance('10m');

      // Assess
      expect(run.subRequests('bank-b', 'fail-9').map((s) => s.attempt)).toEqual([1]);
      const { output } = oneResult(run, 'fail-9');
      expect(output).toMatchObject({ completedBy: 'all-arrived', counts: { failed: 1 } });
      expect((output.recipients as Fate[])[1]?.failedAttempt).toBeUndefined();
    });
  });
});
