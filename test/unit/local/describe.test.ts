import { describe, expect, it } from 'vitest';
import { describeOutput, formatDuration } from '../../../local/describe.ts';

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

describe('formatDuration', () => {
  it.each([
    [850, '850 ms'],
    [1_200, '1.2 s'],
    [59_900, '59.9 s'],
    [2 * MINUTE + 5 * SECOND, '2 min 5 s'],
    [MINUTE, '1 min'],
    [HOUR, '1 h'],
    [3 * HOUR + 20 * MINUTE, '3 h 20 min'],
    [30 * DAY, '30 d'],
    [3 * DAY + 4 * HOUR, '3 d 4 h'],
  ])('%d ms reads as %s', (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
  });

  it.each([
    // Each just below a unit's boundary: rounding the remainder alone gave "1 min 60 s",
    // "1 h 60 min" and "29 d 24 h".
    [999.6, '1.0 s'],
    [59_960, '1 min'],
    [2 * MINUTE - 400, '2 min'],
    [2 * HOUR - 20 * SECOND, '2 h'],
    [HOUR - 400, '1 h'],
    [30 * DAY - 10 * MINUTE, '30 d'],
    [DAY - 20 * SECOND, '1 d'],
  ])('%d ms rounds up into the next unit (%s), never to a part as large as its unit', (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
  });
});

describe('describeOutput', () => {
  const result = {
    type: 'fanin.aggregate.completed',
    definition: 'loan-broker',
    aggregateId: 'loan-1',
    counts: { expected: 3, received: 2 },
    missing: [{ replyId: '2' }],
    result: null,
  };

  it('says how many recipients timed out and how many were asked again, for a definition with responders', () => {
    const line = describeOutput({
      ...result,
      recipients: [
        { replyId: '0', fate: 'replied', retries: 1 },
        { replyId: '1', fate: 'replied' },
        { replyId: '2', fate: 'timed-out', retries: 1 },
      ],
    });
    expect(line).toMatch(/\[2\/3 replies, 1 missing, 1 timed out, 2 asked again\]$/);
  });

  it('says nothing of recipients without responders', () => {
    expect(describeOutput(result)).toMatch(/\[2\/3 replies, 1 missing\]$/);
  });
});
