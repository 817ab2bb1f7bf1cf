import { describe, expect, it } from 'vitest';
import { failureOf, failuresBeyondTolerance } from '../../../../../shared/engine/completion/failures.ts';

describe('failuresBeyondTolerance', () => {
  it.each([
    ['no failure', {}, { received: 3, failed: 0 }, false, undefined],
    [
      'one failure when none is tolerated',
      {},
      { received: 3, failed: 1 },
      false,
      '1 reply failed; the definition tolerates none',
    ],
    ['failures up to the count', { toleratedFailureCount: 2 }, { received: 3, failed: 2 }, false, undefined],
    [
      'one more than the count',
      { toleratedFailureCount: 2 },
      { received: 3, failed: 3 },
      false,
      '3 replies failed, more than the 2 tolerated',
    ],
    [
      'a share up to the percentage of expected',
      { toleratedFailurePercentage: 20 },
      { expected: 10, received: 3, failed: 2 },
      false,
      undefined,
    ],
    [
      'a share beyond the percentage of expected',
      { toleratedFailurePercentage: 20 },
      { expected: 10, received: 3, failed: 3 },
      false,
      '3 of 10 replies failed (30%)',
    ],
    [
      'a share of unknown expected, not yet final',
      { toleratedFailurePercentage: 20 },
      { received: 1, failed: 1 },
      false,
      undefined,
    ],
    [
      'a share of unknown expected, final',
      { toleratedFailurePercentage: 20 },
      { received: 4, failed: 1 },
      true,
      '1 of 4 replies failed (25%)',
    ],
    [
      'both, the count exceeded',
      { toleratedFailureCount: 1, toleratedFailurePercentage: 90 },
      { expected: 10, received: 2, failed: 2 },
      false,
      'more than the 1 tolerated',
    ],
    [
      'both, the percentage exceeded',
      { toleratedFailureCount: 9, toleratedFailurePercentage: 10 },
      { expected: 10, received: 2, failed: 2 },
      false,
      'more than the 10% tolerated',
    ],
  ])('%s', (_case, tolerance, current, final, reason) => {
    // Act
    const verdict = failuresBeyondTolerance(tolerance, current, final);

    // Assess
    if (reason === undefined) expect(verdict).toBeUndefined();
    else expect(verdict).toContain(reason);
  });
});

describe('failureOf', () => {
  it('reads the fanin-failure attribute as one line, and nothing without it', () => {
    expect(failureOf({ 'fanin-failure': '  bank\n down ' })).toBe('bank down');
    expect(failureOf({ 'fanin-failure': ' ' })).toBe('failed');
    expect(failureOf({ 'fanin-failure': 'x'.repeat(5000) })).toHaveLength(1024);
    expect(failureOf({ 'fanin-reply-id': '1' })).toBeUndefined();
  });
});
