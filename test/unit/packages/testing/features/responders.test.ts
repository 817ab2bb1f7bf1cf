import { describe, expect, it } from 'vitest';
import { type DefinitionInput, simulate } from '../../../../../packages/testing/src/index.ts';
import { noResult, oneResult } from './one-result.ts';

/**
 * Looking after the responders (docs/definitions.md, "Looking after the responders"), by the kit
 * on the production handlers at virtual time: each recipient's own reply deadline settles it as
 * timed out, `all` completes once every recipient replied, failed or timed out instead of waiting
 * for the aggregate's deadline, a reply after its recipient's deadline is late, and a heartbeat
 * before that deadline extends it (never one after it, never as a reply).
 */

const banks: DefinitionInput = {
  name: 'banks',
  fanOut: { type: 'recipient-list', recipients: ['bank-a', 'bank-b', 'bank-c'] },
  completion: { strategy: 'all' },
  timeoutSeconds: 600,
  responders: { timeoutSeconds: 30, timeouts: { 'bank-c': 90 }, heartbeatSeconds: 60 },
  requestParameters: { recipientTimeoutSeconds: { min: 5, max: 300 } },
};
const firstOk: DefinitionInput = {
  name: 'first-ok',
  fanOut: { type: 'splitter', itemsPath: '$.items', target: 'worker' },
  completion: { strategy: 'first' },
  timeoutSeconds: 600,
  responders: { timeoutSeconds: 20 },
  toleratedFailureCount: 3,
};

type Missing = { replyId: string; label?: string; timedOut?: true };
type Fate = { replyId: string; fate: string; deadline?: number; heartbeatAt?: number };

describe('responders (kit)', () => {
  it('all completes once every recipient replied or passed its own deadline, listing the timed-out one missing', async () => {
    // Prepare
    const run = simulate(banks);
    await run.request({ aggregateId: 'loan-1' });
    const opened = run.now();
    await run.reply('bank-a', { rate: 4 });
    await run.reply('bank-c', { rate: 5 });

    // Act: bank-b's own deadline (30 s) passes, long before the aggregate's (600 s)
    await run.advance('29s');
    noResult(run, 'loan-1');
    await run.advance('2s');

    // Assess (mutant killed: timed-out recipients not counted toward all arrived waits for the 600 s deadline)
    const { output } = oneResult(run, 'loan-1');
    expect(output).toMatchObject({
      outcome: 'completed',
      completedBy: 'all-settled',
      counts: { expected: 3, received: 2, failed: 0 },
    });
    expect(output.missing as Missing[]).toEqual([{ replyId: '1', label: 'bank-b', timedOut: true }]);
    expect(output.recipients as Fate[]).toEqual([
      { replyId: '0', fate: 'replied', deadline: opened + 30_000 },
      { replyId: '1', fate: 'timed-out', deadline: opened + 30_000 },
      { replyId: '2', fate: 'replied', deadline: opened + 90_000 },
    ]);
    expect(run.elapsed()).toBeLessThan(60_000);
  });

  it("a reply after its recipient's deadline is late and not a member, though the aggregate is still open", async () => {
    // Prepare
    const run = simulate(banks);
    await run.request({ aggregateId: 'loan-2' });
    await run.reply('bank-a', { rate: 4 });

    // Act: bank-b answers at 40 s, after its 30 s deadline; bank-c (90 s) still has time
    await run.advance('40s');
    await run.reply('bank-b', { rate: 1 });

    // Assess: routed late at once, while the aggregate waits for bank-c (mutant killed: a reply
    // past its recipient's own deadline is routed only at the seal)
    noResult(run, 'loan-2');
    expect(run.outputs('late')).toMatchObject([{ replyId: '1', aggregateStatus: 'open' }]);
    await run.reply('bank-c', { rate: 5 });

    // Assess (mutant killed: a reply judged only against the aggregate's deadline becomes a member)
    const { output } = oneResult(run, 'loan-2');
    expect((output.result as { replyId: string }[]).map((r) => r.replyId).sort()).toEqual(['0', '2']);
    const late = run.outputs('late');
    expect(late).toHaveLength(1);
    expect(late[0]).toMatchObject({ replyId: '1' });
    expect(String(late[0]?.reason)).toContain("after its recipient's deadline");
  });

  it("a heartbeat before its recipient's deadline extends it by heartbeatSeconds, and is never counted as a reply", async () => {
    // Prepare
    const run = simulate(banks);
    await run.request({ aggregateId: 'loan-3' });
    await run.reply('bank-a', { rate: 4 });
    await run.reply('bank-c', { rate: 5 });

    // Act: bank-b beats at 20 s (deadline 30 s → 80 s), and replies at 70 s
    await run.advance('20s');
    const beatAt = run.now();
    await run.heartbeat({ replyId: '1' });
    await run.advance('15s');
    const afterOldDeadline = run.outputs('completed').length + run.outputs('timed-out').length;
    await run.advance('35s');
    await run.reply('bank-b', { rate: 3 });

    // Assess (mutant killed: a heartbeat recorded as a reply completes the aggregate at 20 s with bank-b's empty body)
    expect(afterOldDeadline).toBe(0);
    const { output } = oneResult(run, 'loan-3');
    expect(output).toMatchObject({ outcome: 'completed', completedBy: 'all-arrived', missing: [] });
    expect((output.recipients as Fate[])[1]).toEqual({
      replyId: '1',
      fate: 'replied',
      deadline: beatAt + 60_000,
      heartbeatAt: beatAt,
    });
    expect(run.outputs('late')).toEqual([]);
  });

  it("a heartbeat after its recipient's deadline revives nothing: the recipient stays timed out", async () => {
    // Prepare
    const run = simulate({ ...banks, name: 'banks-open', completion: { strategy: 'count', count: 3 } });
    await run.request({ aggregateId: 'loan-4' });
    await run.reply('bank-a', { rate: 4 });

    // Act: bank-b's heartbeat comes at 35 s, past its 30 s deadline
    await run.advance('35s');
    await run.heartbeat({ replyId: '1' });
    await run.reply('bank-c', { rate: 5 });

    // Assess: every recipient is settled (bank-b timed out), so the count's "every expected reply
    // is in" holds with bank-b settled as timed out
    // (mutant killed: a heartbeat that ignores the deadline extends bank-b and the aggregate waits)
    const { output } = oneResult(run, 'loan-4');
    expect(output).toMatchObject({ outcome: 'completed', completedBy: 'all-settled' });
    expect((output.recipients as Fate[])[1]).toMatchObject({ fate: 'timed-out' });
    expect((output.recipients as Fate[])[1]?.heartbeatAt).toBeUndefined();
  });

  it('a request sets its own recipient deadline within the bounds; outside them it is refused', async () => {
    // Prepare
    const run = simulate(banks);

    // Act
    await run.request({ aggregateId: 'loan-5', parameters: { recipientTimeoutSeconds: 5 } });
    await run.request({ aggregateId: 'loan-6', parameters: { recipientTimeoutSeconds: 301 } });
    await run.reply({ aggregateId: 'loan-5', replyId: '0' }, { rate: 4 });
    await run.advance('6s');

    // Assess: bank-b timed out at 5 s, bank-c keeps its own 90 s
    expect(run.result('loan-5')).toBeUndefined();
    await run.reply({ aggregateId: 'loan-5', replyId: '2' }, { rate: 5 });
    const { output } = oneResult(run, 'loan-5');
    expect(output).toMatchObject({ completedBy: 'all-settled', missing: [{ replyId: '1', timedOut: true }] });
    expect(JSON.stringify(run.outputs('error'))).toContain(
      'recipientTimeoutSeconds is 301, outside the bounds',
    );
  });

  it('a first not met once every recipient is settled ends the aggregate as its deadline would, long before it', async () => {
    // Prepare
    const run = simulate(firstOk);
    await run.request({ aggregateId: 'job-1', items: [1, 2, 3] });
    await run.fail('worker', 'out of stock');

    // Act: the other two never answer; their 20 s deadline passes
    await run.advance('19s');
    noResult(run, 'job-1');
    await run.advance('2s');

    // Assess (mutant killed: an aggregate whose recipients are all settled waits for its 600 s deadline)
    const { output } = oneResult(run, 'job-1');
    expect(output).toMatchObject({ outcome: 'timed-out', completedBy: 'responders-settled' });
    expect((output.missing as Missing[]).map((m) => m.timedOut)).toEqual([true, true]);
    expect((output.recipients as Fate[]).map((r) => r.fate)).toEqual(['failed', 'timed-out', 'timed-out']);
  });

  // The default loan-broker's shape: 8 s per bank, a heartbeat buys 4 s, the aggregate 10 s.
  const broker: DefinitionInput = {
    name: 'broker',
    fanOut: { type: 'recipient-list', recipients: ['bank-a', 'bank-b'] },
    completion: { strategy: 'all' },
    timeoutSeconds: 10,
    responders: { timeoutSeconds: 8, heartbeatSeconds: 4 },
    requestParameters: { timeoutSeconds: { min: 1, max: 60 } },
  };

  it("a recipient whose heartbeat carries it to the aggregate's deadline is cut off by that deadline: timed out, not completed as settled", async () => {
    // Prepare
    const run = simulate(broker);
    await run.request({ aggregateId: 'loan-cut' });
    await run.reply('bank-a', { rate: 4 });
    await run.advance('7s');
    await run.heartbeat({ replyId: '1' });

    // Act: its own deadline would be 11 s; the aggregate's is 10 s
    await run.advance('3500ms');

    // Assess (mutant killed: a recipient deadline capped at the aggregate's settles it on its own)
    const { output } = oneResult(run, 'loan-cut');
    expect(output).toMatchObject({ outcome: 'timed-out', completedBy: 'deadline' });
    expect(output.missing as Missing[]).toEqual([{ replyId: '1', label: 'bank-b' }]);
    expect((output.recipients as Fate[]).map((r) => r.fate)).toEqual(['replied', 'no-reply']);
  });

  it("a request's deadline before its recipients' own deadlines times the aggregate out at it", async () => {
    // Prepare
    const run = simulate(broker);
    await run.request({ aggregateId: 'loan-short', parameters: { timeoutSeconds: 5 } });
    await run.reply('bank-a', { rate: 4 });

    // Act
    await run.advance('5500ms');

    // Assess
    const { output } = oneResult(run, 'loan-short');
    expect(output).toMatchObject({ outcome: 'timed-out', completedBy: 'deadline' });
    expect((output.recipients as Fate[]).map((r) => r.fate)).toEqual(['replied', 'no-reply']);
  });

  it("once the last recipient deadline has passed, the aggregate's own deadline still fires on time, by its timer", async () => {
    // Prepare: only bank-a has a deadline of its own; the others wait for the aggregate's, 90 s
    const run = simulate({
      name: 'some-own',
      fanOut: { type: 'recipient-list', recipients: ['bank-a', 'bank-b'] },
      completion: { strategy: 'all' },
      timeoutSeconds: 90,
      responders: { timeouts: { 'bank-a': 5 } },
    });
    await run.request({ aggregateId: 'loan-late' });
    await run.advance('6s');
    noResult(run, 'loan-late');

    // Act: past the deadline, before the sweep at 120 s could end it
    await run.advance('85s');

    // Assess (mutant killed: no timer is armed once no recipient deadline is left)
    const { output } = oneResult(run, 'loan-late');
    expect(output).toMatchObject({ outcome: 'timed-out', completedBy: 'deadline' });
    expect((output.recipients as Fate[]).map((r) => r.fate)).toEqual(['timed-out', 'no-reply']);
  });

  it('a heartbeat naming a reply id that is no recipient, zero-padded ones included, goes to the error output and changes no deadline', async () => {
    // Prepare
    const run = simulate(banks);
    await run.request({ aggregateId: 'loan-pad' });
    const asked = run.subRequests().find((s) => s.replyId === '1');
    const attributes = Object.fromEntries(
      Object.entries(asked?.attributes ?? {}).filter(([name]) => name.startsWith('fanin-')),
    );

    // Act
    for (const replyId of ['01', '00', '7'])
      await run.send({}, { ...attributes, 'fanin-reply-id': replyId, 'fanin-heartbeat': '1' });
    await run.advance('91s');

    // Assess (mutant killed: a heartbeat's reply id is any string of digits below the expected count)
    const errors = run.outputs('error').map((o) => String(o.reason));
    expect(errors).toEqual(
      ['01', '00', '7'].map((id) => `heartbeat: reply id "${id}" is not a recipient of aggregate loan-pad`),
    );
    const { output } = oneResult(run, 'loan-pad');
    expect((output.recipients as Fate[]).map((r) => r.heartbeatAt)).toEqual([
      undefined,
      undefined,
      undefined,
    ]);
  });
});
