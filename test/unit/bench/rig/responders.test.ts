/**
 * The responders' send schedules, one per arrival pattern: which replies go together, in what order,
 * and when. The emulator runs (npm run bench) use them; this pins the order and timing alone.
 */
import { describe, expect, it } from 'vitest';
import { type HeldReply, type ReleasePlan, SCHEDULES } from '../../../../bench/rig/responders.ts';

const replies = (aggregateId: string, n: number): HeldReply[] =>
  Array.from({ length: n }, (_, i) => ({
    aggregateId,
    replyTo: 'reply-q',
    body: '{}',
    attributes: { 'fanin-reply-id': `${aggregateId}-${i}` },
  }));
const plan = (pattern: ReleasePlan['pattern'], rotation = 2): ReleasePlan => ({
  pattern,
  ids: [],
  repliesPerSecond: 10,
  rotation,
  spread: { medianMs: 400, sigma: 0.8, maxMs: 10_000 },
  senders: 1,
});
const slot = (seq: number) => seq * 100;
const ids = (sends: ReturnType<(typeof SCHEDULES)['together']>) =>
  sends.map((s) => s.replies.map((r) => r.attributes['fanin-reply-id']).join('+'));

describe("the responders' schedules", () => {
  it('together: an aggregate in batches of ten, the next aggregate after its replies slots', () => {
    const sends = SCHEDULES.together([replies('a', 12), replies('b', 3)], slot, plan('together'));
    expect(sends.map((s) => [s.due, s.replies.length])).toEqual([
      [0, 10],
      [0, 2],
      [1200, 3],
    ]);
  });

  it('independent: one reply at a time, round-robin, a newcomer taking the place of an aggregate done', () => {
    const sends = SCHEDULES.independent(
      [replies('a', 2), replies('b', 1), replies('c', 2)],
      slot,
      plan('independent'),
    );
    expect(ids(sends)).toEqual(['a-0', 'b-0', 'c-0', 'a-1', 'c-1']);
    expect(sends.map((s) => s.due)).toEqual([0, 100, 200, 300, 400]);
  });

  it('independent leaves the queues it was given as they were', () => {
    const queues = [replies('a', 2)];
    SCHEDULES.independent(queues, slot, plan('independent'));
    expect(queues[0]).toHaveLength(2);
  });

  it('spread: each reply on its own after a seeded delay within the maximum, in the order they fall due', () => {
    const queues = [replies('a', 5), replies('b', 5)];
    const sends = SCHEDULES.spread(queues, slot, plan('spread'));
    const again = SCHEDULES.spread(queues, slot, plan('spread'));
    expect(sends.every((s) => s.replies.length === 1)).toBe(true);
    expect(sends.map((s) => s.due)).toEqual([...sends.map((s) => s.due)].sort((x, y) => x - y));
    expect(sends.filter((s) => s.replies[0]?.aggregateId === 'b').every((s) => s.due >= 500)).toBe(true);
    expect(sends.every((s) => s.due <= 500 + 10_000)).toBe(true);
    expect(again.map((s) => s.due)).toEqual(sends.map((s) => s.due));
  });
});
