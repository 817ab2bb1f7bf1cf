import { describe, expect, it } from 'vitest';
import { idOf, Ledger } from '../../../sim/ledger.ts';

/**
 * The ledger's own logic: the output id of a publication's text, and the publications grouped by
 * it. The invariants read every run through these (invariants.test.ts builds ledgers by hand).
 */

describe('idOf', () => {
  it('reads the id of a JSON output, and nothing from text that is not one or has no string id', () => {
    expect(idOf('{"id":"agg/result","type":"x"}')).toBe('agg/result');
    expect(idOf('{"id":7}')).toBeUndefined();
    expect(idOf('not json')).toBeUndefined();
    expect(idOf('null')).toBeUndefined();
  });
});

describe('Ledger.byId', () => {
  it('groups publications by output id, in the order published, leaving out those without one', () => {
    const ledger = new Ledger();
    const p = (text: string, channel: string) => ({ channel, text, at: 0, task: 't' });
    ledger.publications.push(
      p('{"id":"a"}', 'queue'),
      p('{"id":"b"}', 'queue'),
      p('garbage', 'queue'),
      p('{"id":"a"}', 'bus'),
    );
    const grouped = ledger.byId();
    expect([...grouped.keys()]).toEqual(['a', 'b']);
    expect(grouped.get('a')?.map((x) => x.channel)).toEqual(['queue', 'bus']);
  });
});
