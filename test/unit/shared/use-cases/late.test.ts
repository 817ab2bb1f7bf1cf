import { describe, expect, it } from 'vitest';
import { fixedReason, onTimeReplies } from '../../../../shared/use-cases/late.ts';

/**
 * The late output's reason for a reply handled after its aggregate's result was fixed
 * (docs/wire-contract.md, "Late replies and the deadline"): a reply SQS accepted before the
 * deadline, whose handling crashed and came back only after the deadline's seal, says when it was
 * sent and when the deadline was, so its producer can tell it from a reply that was simply late.
 * Kills the mutant 'settle: late reason without the send time'.
 */
describe('the late reason of a reply handled after the result was fixed', () => {
  const timedOut = { status: 'closed', outcome: 'timed-out', deadline: 60_000, closeBy: 600_000 } as const;

  it('says it was sent before the deadline, with both times', () => {
    expect(fixedReason(timedOut, 1_000)).toBe(
      'aggregate is closed (timed-out): the reply was sent at 1970-01-01T00:00:01.000Z, before the deadline at 1970-01-01T00:01:00.000Z, and came after its result was fixed',
    );
  });

  it('says only that it came after the result was fixed when it was sent at or after the deadline, or its time is unknown', () => {
    const plain = 'aggregate is closed (timed-out): the reply came after its result was fixed';
    expect(fixedReason(timedOut, 60_000)).toBe(plain);
    expect(fixedReason(timedOut)).toBe(plain);
  });

  it('names no deadline under an inactivity timeout (the deadline in force moved with the replies)', () => {
    expect(fixedReason({ ...timedOut, params: { inactivityTimeoutSeconds: 5 } }, 1_000)).toBe(
      'aggregate is closed (timed-out): the reply came after its result was fixed',
    );
  });
});

/**
 * The members any seal may take: replies received before the deadline in force when each arrived
 * (docs/wire-contract.md, "Late replies"). A pure function of the header and the stored replies.
 */
describe('replies received before the deadline in force', () => {
  const at = (...times: number[]) => times.map((receivedAt, i) => ({ replyId: String(i), receivedAt }));
  const ids = (replies: { replyId: string }[]) => replies.map((r) => r.replyId);

  it('are those received before an absolute deadline; one received at it is late', () => {
    const header = { openedAt: 0, params: { timeoutSeconds: 10 }, closeBy: 60_000 };
    expect(ids(onTimeReplies(header, at(4_000, 9_999, 10_000, 12_000)))).toEqual(['0', '1']);
  });

  it('are those received before the allowed life ends when there is no deadline', () => {
    const header = { openedAt: 0, params: {}, closeBy: 30_000 };
    expect(ids(onTimeReplies(header, at(29_999, 30_000)))).toEqual(['0']);
  });

  it('move the inactivity deadline each, in order of arrival, whatever order they are read in', () => {
    // inactivity 5 s, absolute 60 s: 4 s and 8 s keep it open; 14 s is 6 s after 8 s: late, and
    // it moves nothing, so 16 s is late as well
    const header = {
      openedAt: 0,
      params: { timeoutSeconds: 60, inactivityTimeoutSeconds: 5 },
      closeBy: 60_000,
    };
    const replies = at(16_000, 8_000, 14_000, 4_000);
    expect(ids(onTimeReplies(header, replies))).toEqual(['1', '3']);
  });

  it('never move the inactivity deadline past the absolute one', () => {
    const header = {
      openedAt: 0,
      params: { timeoutSeconds: 10, inactivityTimeoutSeconds: 5 },
      closeBy: 60_000,
    };
    expect(ids(onTimeReplies(header, at(4_000, 8_000, 10_500)))).toEqual(['0', '1']);
  });
});
