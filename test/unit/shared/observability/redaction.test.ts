import { describe, expect, it } from 'vitest';
import { describeError, redact } from '../../../../shared/observability/redaction.ts';

/** What fanin logs of a reason (docs/security.md: logs carry ids and reasons, never message values). */
describe('redacting what is logged', () => {
  it.each([
    [
      'a quoted value',
      'reply names definition "bids" but aggregate "a-1" is of definition "orders"',
      'reply names definition "…" but aggregate "…" is of definition "…"',
    ],
    [
      'a received value, up to the next ; or )',
      'parameters.count must be a number (received string)',
      'parameters.count must be a number (received …)',
    ],
    ['a received value before a ;', 'received 4111-1111; then more', 'received …; then more'],
    ['nothing to elide', 'body is not valid JSON (at position 3)', 'body is not valid JSON (at position 3)'],
    ['an empty quote', 'id ""', 'id "…"'],
  ])('elides %s', (_, reason, logged) => {
    expect(redact(reason)).toBe(logged);
  });

  it('describes an error by its name and message, redacted', () => {
    expect(describeError(new TypeError('cannot read "secret"'))).toBe('TypeError: cannot read "…"');
  });

  it('describes anything else thrown as text', () => {
    expect(describeError('broke on "x"')).toBe('broke on "…"');
    expect(describeError(42)).toBe('42');
  });
});
