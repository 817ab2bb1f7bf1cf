import { describe, expect, it } from 'vitest';
import { externalRule } from '../../../../../shared/engine/completion/external.ts';

const spec = { strategy: 'external' } as const;

describe('the external rule', () => {
  it.each([
    ['no reply', { received: 0, params: {} }],
    ['every expected reply', { received: 3, expected: 3, params: {} }],
  ])('does not complete on %s', (_case, current) => {
    expect(externalRule.onReply(spec, current, 1)).toBeUndefined();
  });

  it('times out at a deadline and never reads the set for a reply', () => {
    expect(externalRule.atDeadline).toBe('times-out');
    expect(externalRule.reads(spec)).toBe('never');
  });
});
