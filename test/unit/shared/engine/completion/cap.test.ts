import { describe, expect, it } from 'vitest';
import {
  byRecordedOrder,
  firstSuccesses,
  type RecordedReply,
  sealedMembers,
} from '../../../../../shared/engine/completion/cap.ts';
import type { CompletedBy } from '../../../../../shared/engine/completion/decision.ts';

type CompletionSpec = Parameters<typeof sealedMembers>[0];

const reply = (replyId: string, receivedAt: number, failure?: string): RecordedReply =>
  failure === undefined ? { replyId, receivedAt } : { replyId, receivedAt, failure };
const ids = (replies: readonly RecordedReply[]) => replies.map((r) => r.replyId);

describe('firstSuccesses', () => {
  it.each<[string, RecordedReply[], number, string[]]>([
    ['keeps the earliest recorded of two', [reply('b', 20), reply('a', 10)], 1, ['a']],
    [
      'keeps every reply when no more than the cap succeeded',
      [reply('a', 10), reply('b', 20)],
      2,
      ['a', 'b'],
    ],
    ['breaks a tie of recorded time by reply id', [reply('y', 10), reply('x', 10)], 1, ['x']],
    [
      'orders index ids numerically, not as text',
      [reply('10', 5), reply('9', 5), reply('2', 5)],
      2,
      ['9', '2'],
    ],
    ['puts index ids before other ids recorded at the same time', [reply('a', 5), reply('3', 5)], 1, ['3']],
    ['takes recorded time before the id', [reply('0', 30), reply('5', 10), reply('7', 20)], 2, ['5', '7']],
    [
      'keeps every failed reply, which does not count toward the cap',
      [reply('0', 10, 'down'), reply('1', 20), reply('2', 30, 'down'), reply('3', 40)],
      1,
      ['0', '1', '2'],
    ],
    [
      'keeps the order it was given',
      [reply('c', 30), reply('a', 10), reply('d', 40), reply('b', 20)],
      3,
      ['c', 'a', 'b'],
    ],
  ])('%s', (_case, replies, cap, expected) => {
    expect(ids(firstSuccesses(replies, cap))).toEqual(expected);
  });

  it('chooses the same members however the read ordered the replies', () => {
    const replies = [reply('4', 7), reply('1', 9), reply('3', 7), reply('0', 9), reply('2', 8)];
    const chosen = new Set<string>();
    for (let shift = 0; shift < replies.length; shift += 1) {
      const rotated = [...replies.slice(shift), ...replies.slice(0, shift)];
      chosen.add(JSON.stringify(ids(firstSuccesses(rotated, 3)).sort()));
      chosen.add(JSON.stringify(ids(firstSuccesses([...rotated].reverse(), 3)).sort()));
    }
    expect([...chosen]).toEqual([JSON.stringify(['2', '3', '4'])]);
  });
});

describe('byRecordedOrder', () => {
  it('sorts by recorded time, then index ids numerically, then other ids', () => {
    const sorted = [reply('b', 1), reply('10', 1), reply('a', 1), reply('2', 1), reply('z', 0)].sort(
      byRecordedOrder,
    );
    expect(ids(sorted)).toEqual(['z', '2', '10', 'a', 'b']);
  });
});

describe('sealedMembers', () => {
  const three = [reply('0', 10), reply('1', 10), reply('2', 10)];
  const count: CompletionSpec = { strategy: 'count', count: 2 };
  const first: CompletionSpec = { strategy: 'first' };
  const anyOf: CompletionSpec = {
    strategy: 'any',
    rules: [
      { rule: 'threshold', score: { source: 'path', path: '$.rate' }, threshold: 3, direction: 'below' },
      { rule: 'count', count: 2 },
    ],
  };
  it.each<[string, CompletionSpec, { count?: number }, CompletedBy, string[]]>([
    ['first: the first reply', first, {}, 'first', ['0']],
    ['first: a request count does not change it', first, { count: 2 }, 'first', ['0']],
    ["count: the rule's N", count, {}, 'count', ['0', '1']],
    ["count: the request's N before the rule's", count, { count: 1 }, 'count', ['0']],
    ['count: every reply when all arrived decided it', count, {}, 'all-arrived', ['0', '1', '2']],
    ['count: every reply at the deadline', count, {}, 'deadline', ['0', '1', '2']],
    ['count: every reply on an external event', count, {}, 'external', ['0', '1', '2']],
    ['count: every reply when failures decided it', count, {}, 'failures', ['0', '1', '2']],
    ["any: its count rule's N when that rule decided", anyOf, {}, 'count', ['0', '1']],
    ['any: every reply when its threshold decided', anyOf, {}, 'threshold', ['0', '1', '2']],
  ])('%s', (_case, completion, params, completedBy, expected) => {
    expect(ids(sealedMembers(completion, params, completedBy, three))).toEqual(expected);
  });
});
