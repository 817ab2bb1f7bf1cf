import { describe, expect, it } from 'vitest';
import { parseJsonBody } from '../../../../shared/engine/json-body.ts';
import { BadMessageError } from '../../../../shared/errors.ts';

/** A message body parsed as JSON (docs/wire-contract.md: any body nests at most 64 levels). */
describe('parsing a message body', () => {
  it('parses valid JSON', () => {
    expect(parseJsonBody({ body: '{"quote":{"rate":2.9}}' })).toEqual({ quote: { rate: 2.9 } });
    expect(parseJsonBody({ body: 'null' })).toBeNull();
  });

  it('accepts 64 levels of nesting and refuses 65, before parsing', () => {
    expect(() => parseJsonBody({ body: `${'['.repeat(64)}${']'.repeat(64)}` })).not.toThrow();
    const deep = () => parseJsonBody({ body: `${'['.repeat(65)}${']'.repeat(65)}` });
    expect(deep).toThrow(BadMessageError);
    expect(deep).toThrow('body nests deeper than 64 levels of arrays and objects');
  });

  it('refuses a body that is not JSON, saying where it broke but never quoting it', () => {
    let error: unknown;
    try {
      parseJsonBody({ body: '{"card":"4111-secret" oops}' });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(BadMessageError);
    const message = (error as Error).message;
    expect(message).toMatch(/^body is not valid JSON \(at position \d+\)$/);
    expect(message).not.toContain('secret');
  });

  it('refuses an empty body', () => {
    expect(() => parseJsonBody({ body: '' })).toThrow(/^body is not valid JSON/);
  });
});
