import { describe, expect, it } from 'vitest';
import {
  meetsThreshold,
  overrideRule,
  thresholdMet,
} from '../../../../../shared/engine/completion/override.ts';

describe('meetsThreshold', () => {
  it.each([
    ['below', 2, 3, true],
    ['below', 3, 3, true],
    ['below', 4, 3, false],
    ['above', 4, 3, true],
    ['above', 3, 3, true],
    ['above', 2, 3, false],
  ] as const)('%s: score %d against threshold %d is %s', (direction, score, threshold, expected) => {
    // Prepare
    // (values from the table)

    // Act
    const met = meetsThreshold(direction, score, threshold);

    // Assess
    expect(met).toBe(expected);
  });
});

const below = {
  strategy: 'override',
  score: { source: 'path', path: '$.rate' },
  threshold: 3,
  direction: 'below',
  completeWhenAllArrived: true,
} as const;

describe('the override rule', () => {
  it.each([
    ['completes on a score at the threshold', below, { received: 1, params: {} }, 3, 'threshold'],
    ['waits on a score beyond it', below, { received: 1, expected: 4, params: {} }, 3.5, undefined],
    ['waits without a score', below, { received: 1, expected: 4, params: {} }, undefined, undefined],
    [
      'completes once every expected reply is in',
      below,
      { received: 4, expected: 4, params: {} },
      9,
      'all-arrived',
    ],
    [
      'waits for its deadline once all arrived, without completeWhenAllArrived',
      { ...below, completeWhenAllArrived: false },
      { received: 4, expected: 4, params: {} },
      9,
      undefined,
    ],
    [
      'takes the request’s threshold over its own',
      below,
      { received: 1, params: { threshold: 4 } },
      3.5,
      'threshold',
    ],
  ] as const)('%s', (_case, spec, current, score, by) => {
    expect(overrideRule.onReply(spec, current, score)).toBe(by);
  });

  it('completes with what arrived at the deadline, reads every batch and says its threshold', () => {
    expect(overrideRule.atDeadline).toBe('completes-with-what-arrived');
    expect(overrideRule.reads(below)).toBe('every-batch');
    expect(overrideRule.threshold?.(below)).toMatchObject({ threshold: 3, direction: 'below' });
  });

  it('thresholdMet: no score never meets it', () => {
    expect(thresholdMet(below, {}, undefined)).toBe(false);
    expect(thresholdMet({ ...below, direction: 'above' }, {}, 3)).toBe(true);
  });
});
