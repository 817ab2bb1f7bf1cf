import { describe, expect, it } from 'vitest';
import {
  heartbeatExtends,
  ownDeadline,
  type RespondersHeader,
  recipientDeadline,
  recipientFates,
  settlementAt,
} from '../../../../shared/engine/responders.ts';

/** Recipients' own deadlines, heartbeats and fates (docs/definitions.md, "Looking after the responders"). */

const header = (over: Partial<RespondersHeader> = {}): RespondersHeader => ({
  openedAt: 0,
  expected: 3,
  params: { timeoutSeconds: 300, recipientTimeoutSeconds: 30, heartbeatSeconds: 60 },
  ...over,
});

describe('recipient deadlines', () => {
  it("counts a recipient's deadline from the open, its own timeout over the one value", () => {
    const h = header({ params: { recipientTimeoutSeconds: 30, recipientTimeouts: [null, 90, null] } });
    expect([0, 1, 2].map((i) => recipientDeadline(h, String(i)))).toEqual([30_000, 90_000, 30_000]);
  });

  it('moves a deadline to the last kept heartbeat plus heartbeatSeconds, never earlier, never past the aggregate deadline', () => {
    expect(recipientDeadline(header({ beats: { '0': 10_000 } }), '0')).toBe(70_000);
    expect(
      recipientDeadline(
        header({ params: { recipientTimeoutSeconds: 90, heartbeatSeconds: 5 }, beats: { '0': 10_000 } }),
        '0',
      ),
    ).toBe(90_000);
    expect(recipientDeadline(header({ beats: { '0': 280_000 } }), '0')).toBe(300_000);
  });

  it('has no deadline without a recipient timeout', () => {
    expect(recipientDeadline(header({ params: { timeoutSeconds: 300 } }), '0')).toBeUndefined();
  });
});

describe('own deadlines', () => {
  it("settles a recipient on its own only when its deadline comes before the aggregate's end", () => {
    const h = header({
      params: { timeoutSeconds: 100, recipientTimeoutSeconds: 30, heartbeatSeconds: 60 },
      beats: { '1': 50_000 },
    });
    // 30 s; a heartbeat at 50 s would carry it to 110 s, capped at the 100 s deadline: the aggregate's
    expect([0, 1].map((i) => ownDeadline(h, String(i)))).toEqual([30_000, undefined]);
    expect(recipientDeadline(h, '1')).toBe(100_000);
    const atEnd = header({ params: { timeoutSeconds: 30, recipientTimeoutSeconds: 30 } });
    expect(ownDeadline(atEnd, '0')).toBeUndefined();
  });

  it("never times out, nor awaits, a recipient the aggregate's deadline cuts off", () => {
    const h = header({ params: { timeoutSeconds: 20, recipientTimeoutSeconds: 30 }, expected: 2 });
    expect(settlementAt(h, new Set(['0']), 25_000)).toEqual({ timedOut: [], allSettled: false });
    expect(recipientFates(h, [{ replyId: '0' }], 20_000).map((f) => f.fate)).toEqual(['replied', 'no-reply']);
  });
});

describe('settlement', () => {
  it('settles as timed out exactly the recipients without a reply whose deadline is at or before the time', () => {
    const h = header({ params: { recipientTimeoutSeconds: 30, recipientTimeouts: [null, 90, null] } });
    expect(settlementAt(h, new Set(['2']), 29_999)).toEqual({
      timedOut: [],
      allSettled: false,
      nextDue: 30_000,
    });
    expect(settlementAt(h, new Set(['2']), 30_000)).toEqual({
      timedOut: ['0'],
      allSettled: false,
      nextDue: 90_000,
    });
    expect(settlementAt(h, new Set(['1', '2']), 30_000)).toEqual({ timedOut: ['0'], allSettled: true });
  });

  it('settles nothing for an aggregate whose recipients have no deadlines of their own', () => {
    expect(settlementAt(header({ params: { timeoutSeconds: 300 } }), new Set(), 1e12)).toEqual({
      timedOut: [],
      allSettled: false,
    });
  });
});

describe('heartbeats', () => {
  it('extends only before the deadline in force, and only when newer than the one kept', () => {
    expect(heartbeatExtends(header(), '0', 29_999)).toBe(true);
    expect(heartbeatExtends(header(), '0', 30_000)).toBe(false);
    expect(heartbeatExtends(header({ beats: { '0': 20_000 } }), '0', 70_000)).toBe(true);
    expect(heartbeatExtends(header({ beats: { '0': 20_000 } }), '0', 20_000)).toBe(false);
    expect(heartbeatExtends(header({ params: { recipientTimeoutSeconds: 30 } }), '0', 1)).toBe(false);
  });
});

describe('fates', () => {
  it('names each recipient replied, failed, timed out, without reply yet, or never asked', () => {
    const h = { ...header({ expected: 5 }), askedUpTo: 4 };
    const fates = recipientFates(h, [{ replyId: '0' }, { replyId: '1', failure: 'no' }], 40_000);
    expect(fates.map((f) => f.fate)).toEqual(['replied', 'failed', 'timed-out', 'timed-out', 'not-asked']);
    expect(recipientFates(h, [], 10_000)[2]).toEqual({ replyId: '2', fate: 'no-reply', deadline: 30_000 });
  });

  it('says which attempt of a recipient failed before it replied or timed out (retry.failedReplies)', () => {
    const h = { ...header(), retried: { '0': 1, '1': 2 }, failedAttempts: { '0': 1, '1': 2 } };
    const fates = recipientFates(h, [{ replyId: '0' }], 40_000);
    expect(fates.map((f) => [f.fate, f.retries, f.failedAttempt])).toEqual([
      ['replied', 1, 1],
      ['timed-out', 2, 2],
      ['timed-out', undefined, undefined],
    ]);
  });
});
