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

type Fate = { replyId: string; fate: string; retries?: number };

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
});
