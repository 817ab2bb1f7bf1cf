import { describe, expect, it } from 'vitest';
import { parseDefinition } from '../../../../shared/engine/definition.ts';
import type { RecipientPolicy } from '../../../../shared/engine/recipients.ts';
import {
  attemptOf,
  failedReplyCourse,
  type RetryHeader,
  retriedAfter,
  retryRoundAt,
  retrySubRequests,
} from '../../../../shared/engine/retries.ts';

/** Retries of sub-requests (docs/definitions.md, "Retries"): when each round is due, and whom it asks again. */

const header = (over: Partial<RetryHeader> = {}): RetryHeader => ({
  openedAt: 1_000,
  expected: 3,
  askedUpTo: 3,
  params: {
    timeoutSeconds: 600,
    recipientTimeoutSeconds: 100,
    heartbeatSeconds: 30,
    retry: { attempts: 3, intervalSeconds: 10, backoffRate: 2 },
  },
  ...over,
});

describe('retry rounds', () => {
  it('ask again each recipient asked that has no reply, none that replied or failed', () => {
    const round = retryRoundAt(header(), new Set(['0']), 11_000);
    expect(round).toEqual({
      round: 1,
      recipients: [
        { replyId: '1', attempt: 2 },
        { replyId: '2', attempt: 2 },
      ],
    });
  });

  it('count attempts per recipient: the second round is attempt 3 for one asked again before', () => {
    const round = retryRoundAt(header({ retryRound: 1, retried: { '1': 1 } }), new Set(['0', '2']), 31_000);
    expect(round).toEqual({ round: 2, recipients: [{ replyId: '1', attempt: 3 }] });
    expect(retriedAfter({ retried: { '1': 1, '2': 1 } }, round ?? { round: 0, recipients: [] })).toEqual({
      '1': 2,
      '2': 1,
    });
  });

  it('are not due before their time, nor past the last one', () => {
    expect(retryRoundAt(header(), new Set(), 10_999)).toBeUndefined();
    expect(retryRoundAt(header({ retryRound: 3 }), new Set(), 10_000_000)).toBeUndefined();
  });

  it('taken late (a lost timer) take only the last round due, one attempt each, never a burst', () => {
    const round = retryRoundAt(header(), new Set(['0', '1']), 80_000);
    expect(round).toEqual({ round: 3, recipients: [{ replyId: '2', attempt: 2 }] });
  });

  it('pass by a recipient past its own deadline, one never asked, and one whose heartbeat still holds', () => {
    const h = header({
      expected: 4,
      askedUpTo: 3,
      params: {
        timeoutSeconds: 600,
        recipientTimeoutSeconds: 100,
        recipientTimeouts: [20, null, null, null],
        heartbeatSeconds: 30,
        retry: { attempts: 3, intervalSeconds: 30, backoffRate: 1 },
      },
      beats: { '1': 5_000, '2': 2_000 },
    });
    // At 31 s: 0 is past its 20 s deadline, 1's heartbeat at 5 s holds until 35 s, 2's at 2 s
    // until 32 s, 3 was never asked: no one. At 61 s neither heartbeat holds: 1 and 2.
    expect(retryRoundAt(h, new Set(), 31_000)?.recipients).toEqual([]);
    expect(retryRoundAt({ ...h, retryRound: 1 }, new Set(), 61_000)?.recipients).toEqual([
      { replyId: '1', attempt: 2 },
      { replyId: '2', attempt: 2 },
    ]);
  });
});

describe('retried sub-requests', () => {
  const splitter = parseDefinition({
    name: 'items',
    fanOut: { type: 'splitter', itemsPath: '$.order.items', target: 'worker' },
    completion: { strategy: 'all' },
    responders: { retry: { attempts: 1, intervalSeconds: 10 } },
  });
  const list = parseDefinition({
    name: 'banks',
    fanOut: { type: 'recipient-list', recipients: ['bank-a', 'bank-b'] },
    completion: { strategy: 'all' },
    responders: { retry: { attempts: 1, intervalSeconds: 10 } },
  });
  const fromRequest = parseDefinition({
    name: 'named',
    fanOut: { type: 'recipient-list' },
    completion: { strategy: 'all' },
    responders: { retry: { attempts: 1, intervalSeconds: 10 } },
  });
  const policy: RecipientPolicy = { accounts: [], ownQueues: ['fanin-ingress'] };
  const round = { round: 1, recipients: [{ replyId: '1', attempt: 2 }] };

  it("are a splitter's item at the reply id's index, to its target", () => {
    const request = { body: { order: { items: [{ sku: 'a' }, { sku: 'b' }] } } };
    expect(retrySubRequests(splitter, { expected: 2 }, request, policy, round)).toEqual([
      { replyId: '1', attempt: 2, target: 'worker', body: { sku: 'b' } },
    ]);
  });

  it("are a recipient list's payload to the queue at that index, the request's recipients checked as at fan-out", () => {
    const request = { body: { payload: { amount: 5 } } };
    expect(retrySubRequests(list, { expected: 2 }, request, policy, round)).toEqual([
      { replyId: '1', attempt: 2, target: 'bank-b', body: { amount: 5 } },
    ]);
    const named = { body: { recipients: ['bank-x', 'bank-y'], amount: 5 } };
    expect(retrySubRequests(fromRequest, { expected: 2 }, named, policy, round)).toEqual([
      { replyId: '1', attempt: 2, target: 'bank-y', body: { recipients: ['bank-x', 'bank-y'], amount: 5 } },
    ]);
  });

  it('are none when the stored request is gone or is not the one the aggregate was planned from', () => {
    expect(retrySubRequests(splitter, { expected: 2 }, undefined, policy, round)).toEqual([]);
    expect(
      retrySubRequests(splitter, { expected: 3 }, { body: { order: { items: [1, 2] } } }, policy, round),
    ).toEqual([]);
    const forbidden = { body: { recipients: ['bank-x', 'fanin-ingress'] } };
    expect(retrySubRequests(fromRequest, { expected: 2 }, forbidden, policy, round)).toEqual([]);
  });
});

describe('failed replies retried (retry.failedReplies)', () => {
  // Rounds at 11 s, 31 s and 71 s (opened at 1 s); each recipient's deadline 101 s.
  const failing = (over: Partial<RetryHeader> = {}): RetryHeader =>
    header({
      params: {
        timeoutSeconds: 600,
        recipientTimeoutSeconds: 100,
        heartbeatSeconds: 30,
        retry: { attempts: 3, intervalSeconds: 10, backoffRate: 2, failedReplies: true },
      },
      failedAttempts: {},
      ...over,
    });

  it('read the attempt a reply answers from fanin-attempt, and take one that no round can send for the first', () => {
    const retry = { attempts: 3 };
    expect(attemptOf({}, retry)).toBe(1);
    expect(attemptOf({ 'fanin-attempt': '2' }, retry)).toBe(2);
    expect(attemptOf({ 'fanin-attempt': '4' }, retry)).toBe(4);
    expect(attemptOf({ 'fanin-attempt': '5' }, retry)).toBe(1);
    expect(attemptOf({ 'fanin-attempt': '0' }, retry)).toBe(1);
    expect(attemptOf({ 'fanin-attempt': '2.5' }, retry)).toBe(1);
    expect(attemptOf({ 'fanin-attempt': '2' }, undefined)).toBe(1);
  });

  it('keep a failure while a round is left before its recipient deadline', () => {
    expect(failedReplyCourse(failing(), '1', 1, 5_000)).toBe('retry');
    expect(failedReplyCourse(failing({ retryRound: 2, retried: { '1': 2 } }), '1', 3, 40_000)).toBe('retry');
  });

  it('record the failure of the last attempt, and any without failedReplies', () => {
    const last = failing({ retryRound: 3, retried: { '1': 3 } });
    expect(failedReplyCourse(last, '1', 4, 80_000)).toBe('record');
    expect(failedReplyCourse(header(), '1', 1, 5_000)).toBe('record');
  });

  it('record a failure whose next round comes at or after its recipient deadline', () => {
    // deadline 21 s: the first round (11 s) is before it, the second (31 s) is not
    const short = failing({ params: { ...failing().params, recipientTimeoutSeconds: 20 } });
    expect(failedReplyCourse(short, '1', 1, 5_000)).toBe('retry');
    expect(failedReplyCourse({ ...short, retryRound: 1, retried: { '1': 1 } }, '1', 2, 15_000)).toBe(
      'record',
    );
  });

  it('record a failure received at or after its recipient deadline (late, as any reply)', () => {
    expect(failedReplyCourse(failing(), '1', 1, 101_000)).toBe('record');
  });

  it('take a failure of an attempt kept already, or older than the one kept, for a copy', () => {
    const kept = failing({ retryRound: 1, retried: { '1': 1 }, failedAttempts: { '1': 2 } });
    expect(failedReplyCourse(kept, '1', 2, 20_000)).toBe('copy');
    expect(failedReplyCourse(kept, '1', 1, 20_000)).toBe('copy');
  });

  it('never take a failure of an attempt older than the last one sent for the last word', () => {
    // attempt 4 went out in the last round: attempt 2's failure is no answer to it
    const out = failing({ retryRound: 3, retried: { '1': 3 } });
    expect(failedReplyCourse(out, '1', 2, 80_000)).toBe('retry');
  });

  it('count a round sent but not recorded (a crash) when it judges the rounds left', () => {
    // round 1 sent attempt 2 and crashed before its record: round 1 is taken again (attempt 2 again),
    // so attempt 3 comes from round 2; with one attempt only, none does
    expect(failedReplyCourse(failing(), '1', 2, 12_000)).toBe('retry');
    const once = failing({
      params: {
        ...failing().params,
        retry: { attempts: 1, intervalSeconds: 10, backoffRate: 2, failedReplies: true },
      },
    });
    expect(failedReplyCourse(once, '1', 2, 12_000)).toBe('record');
  });

  it('ask again a recipient whose failure of its last attempt is kept, whatever its heartbeat', () => {
    const h = failing({ beats: { '1': 8_000 }, failedAttempts: { '1': 1 } });
    expect(retryRoundAt(h, new Set(['0', '2']), 11_000)?.recipients).toEqual([{ replyId: '1', attempt: 2 }]);
    // a failure of an older attempt says nothing of the one it is working on
    const working = failing({
      retryRound: 1,
      retried: { '1': 1 },
      beats: { '1': 25_000 },
      failedAttempts: { '1': 1 },
    });
    expect(retryRoundAt(working, new Set(['0', '2']), 31_000)?.recipients).toEqual([]);
  });
});
