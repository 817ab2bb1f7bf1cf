import { describe, expect, it } from 'vitest';
import { firstRule } from '../../../../../shared/engine/completion/first.ts';

const spec = { strategy: 'first' } as const;

describe('the first rule', () => {
  it.each([
    ['waits for a reply', { received: 0, params: {} }, undefined],
    ['completes with the first reply', { received: 1, params: {} }, 'first'],
    ['waits while every reply so far failed', { received: 2, failed: 2, params: {} }, undefined],
    ['completes with a success after a failure', { received: 2, failed: 1, params: {} }, 'first'],
  ])('%s', (_case, current, by) => {
    expect(firstRule.onReply(spec, current, undefined)).toBe(by);
  });

  it('times out at the deadline and reads the set after every batch', () => {
    expect(firstRule.atDeadline).toBe('times-out');
    expect(firstRule.reads(spec)).toBe('every-batch');
  });
});
