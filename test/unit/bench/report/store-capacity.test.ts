/**
 * The store-capacity section: both windows' rates, and the fraction of the store's capacity given
 * only when the run found the two windows in agreement (`meaningful`, decided in
 * bench/run/assemble.ts and tested there); else the spread is the emulator's, not fanin's.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { Results } from '../../../../bench/report/schema.ts';
import { storeCapacitySection } from '../../../../bench/report/store-capacity.ts';

const committed = JSON.parse(
  readFileSync(new URL('../../../../bench/results/latest.json', import.meta.url), 'utf8'),
) as Results;

/** The committed results with the windows and fraction of this test. */
function withWindows(meaningful: boolean): Results {
  const k = committed.store_capacity;
  return {
    ...committed,
    fraction_of_store_capacity: 0.148,
    store_capacity: {
      ...k,
      before: { ...k.before, puts_per_second: 2172.7, per_second: [1924, 2260], duration_ms: 10_002 },
      after: meaningful
        ? { ...k.after, puts_per_second: 2031.25, per_second: [1989, 2150], duration_ms: 5_001 }
        : { ...k.after, puts_per_second: 1500.25, per_second: [1500], duration_ms: 5_001 },
      spread: meaningful ? 0.067 : 0.31,
      spread_limit: 0.25,
      per_second_range: meaningful ? [1924, 2260] : [1500, 2260],
      fraction_range: [0.143, 0.153],
      meaningful,
    },
  };
}

describe('the store-capacity section', () => {
  it('gives each window its rate to one decimal and its whole seconds', () => {
    const text = storeCapacitySection(withWindows(true)).join('\n');
    expect(text).toContain('| before | 2,172.7 | 1924 · 2260 |');
    expect(text).toContain('| after | 2,031.3 | 1989 · 2150 |');
    expect(text).toContain('window just before the saturated run (10 s;');
    expect(text).toContain('Spread between the windows 6.7 % (slowest to fastest second 1924–2260 puts/s).');
    const apart = storeCapacitySection(withWindows(false)).join('\n');
    expect(apart).toContain('| after | 1,500.3 | 1500 |');
    expect(apart).toContain('Spread between the windows 31 % (slowest to fastest second 1500–2260 puts/s).');
  });

  it('reports the fraction with its range when the run found the windows in agreement', () => {
    const text = storeCapacitySection(withWindows(true)).join(' ');
    expect(text).toContain('agree within 25 %, so the fraction is reported: 0.148 (0.143–0.153');
    expect(text).not.toContain('no fraction is reported');
  });

  it('reports no fraction, only what it would be against either window, when the run found them apart', () => {
    const text = storeCapacitySection(withWindows(false)).join(' ');
    expect(text).toContain('differ by more than 25 %, so no fraction is reported');
    expect(text).toContain('it would be 0.143 or 0.153');
    expect(text).not.toContain('0.148');
  });
});
