import { describe, expect, it } from 'vitest';
import { replyOutputId, resultId, snapshotId } from '../../../../shared/engine/output-ids.ts';

describe('output ids', () => {
  it('keep ids without / or % as they were', () => {
    expect(resultId('quote-0001')).toBe('quote-0001/result');
    expect(replyOutputId('quote-0001', 'late', '3')).toBe('quote-0001/late/3');
    expect(replyOutputId('loan:abc', 'unknown', '0')).toBe('loan:abc/unknown/0');
    expect(snapshotId('order-42', 2)).toBe('order-42/snapshot/2');
  });

  it('never give two different outputs one id, whatever / and % the ids hold', () => {
    // Prepare: aggregate and reply ids made of the characters an id could use to mimic another's
    const parts = [
      'p',
      'q',
      '/',
      '%',
      '%2F',
      'late',
      'unknown',
      'result',
      'snapshot',
      '1',
      'p/late/q',
      'q/late/r',
    ];
    const ids = new Set<string>(parts);
    for (const a of parts) for (const b of parts) ids.add(a + b);

    // Act
    const seen = new Map<string, string>();
    const clash: string[] = [];
    const note = (id: string, what: string) => {
      const other = seen.get(id);
      if (other !== undefined && other !== what) clash.push(`${what} and ${other} share ${id}`);
      seen.set(id, what);
    };
    for (const a of ids) {
      note(resultId(a), `result of ${a}`);
      note(snapshotId(a, 1), `snapshot 1 of ${a}`);
      for (const r of ids) {
        note(replyOutputId(a, 'late', r), `late ${r} of ${a}`);
        note(replyOutputId(a, 'unknown', r), `unknown ${r} of ${a}`);
      }
    }

    // Assess (mutant killed: ids joined as they are — p + late q/late/r is p/late/q + late r)
    expect(clash).toEqual([]);
  });
});
