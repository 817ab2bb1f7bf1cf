import { describe, expect, it } from 'vitest';
import { allArrived, successesOf, validReplies } from '../../../../../shared/engine/completion/tally.ts';

describe('validReplies', () => {
  it('keeps replies not found late and naming no other definition', () => {
    const replies = [
      { replyId: '0' },
      { replyId: '1', late: true },
      { replyId: '2', definition: 'orders' },
      { replyId: '3', definition: 'other' },
    ];
    expect(validReplies({ definition: 'orders' }, replies).map((r) => r.replyId)).toStrictEqual(['0', '2']);
  });
});

describe('the tally', () => {
  it.each([
    [{ received: 3, params: {} }, 3],
    [{ received: 3, failed: 1, params: {} }, 2],
    [{ received: 2, failed: 2, params: {} }, 0],
  ])('successesOf %#', (tally, successes) => {
    expect(successesOf(tally)).toBe(successes);
  });

  it.each([
    [{ received: 3, expected: 3, params: {} }, true],
    [{ received: 2, expected: 3, params: {} }, false],
    [{ received: 3, failed: 3, expected: 3, params: {} }, true],
    [{ received: 3, params: {} }, false],
  ])('allArrived %#', (tally, arrived) => {
    expect(allArrived(tally)).toBe(arrived);
  });
});
