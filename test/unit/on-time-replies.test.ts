import { describe, expect, it } from 'vitest';
import { onTimeReplies } from '../../shared/use-cases/late.ts';

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
