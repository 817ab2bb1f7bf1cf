import { describe, expect, it } from 'vitest';
import {
  byFanOut,
  columns,
  fmt,
  listed,
  prose,
  table,
  tableRow,
  usd,
} from '../../../../bench/report/format.ts';

describe("the report's number formatting", () => {
  it('gives a figure with thousands separators and at most the digits asked for', () => {
    expect(fmt(1234.5678)).toBe('1,234.57');
    expect(fmt(1234.5678, 0)).toBe('1,235');
    expect(fmt(0.5, 3)).toBe('0.5');
  });

  it('shows a missing or infinite figure as a dash', () => {
    expect(fmt(undefined)).toBe('—');
    expect(fmt(null)).toBe('—');
    expect(fmt(Number.POSITIVE_INFINITY)).toBe('—');
    expect(fmt(Number.NaN)).toBe('—');
  });

  it('gives dollars with cents always', () => {
    expect(usd(31.7)).toBe('$31.70');
    expect(usd(1234.5)).toBe('$1,234.50');
    expect(usd(0)).toBe('$0.00');
  });

  it('gives a figure by fan-out in the order given', () => {
    expect(byFanOut({ '10': 1.5, '100': 1.523 })).toBe('1.5 @10, 1.52 @100');
  });

  it('gives named figures in the order given, with the digits asked for, and nothing for none', () => {
    expect(listed({ reply: 0.98254, 'fan-out': 0.01 })).toBe('reply 0.983, fan-out 0.01');
    expect(listed({ reply: 1.0178 }, 1)).toBe('reply 1');
    expect(listed({})).toBe('');
  });
});

describe("the report's markdown tables", () => {
  it('builds a table from columns: each header beside the cell it takes from every row', () => {
    const rows = [
      { fanOut: 10, units: 1.5 },
      { fanOut: 100, units: 1.52 },
    ];
    expect(
      columns(rows, [
        ['fan-out', (r) => String(r.fanOut)],
        ['units', (r) => String(r.units)],
      ]),
    ).toEqual(['| fan-out | units |', '|---|---|', '| 10 | 1.5 |', '| 100 | 1.52 |']);
  });

  it('writes the header, the separator and one row per entry', () => {
    expect(table(['window', 'puts/s'], [['before', '812.4']])).toEqual([
      '| window | puts/s |',
      '|---|---|',
      '| before | 812.4 |',
    ]);
  });

  it('writes an empty cell as a space', () => {
    expect(tableRow(['a', '', 'b'])).toBe('| a | | b |');
  });
});

describe('prose written over several source lines', () => {
  it('is one line: each line break and the indentation after it is a space', () => {
    const n = 3;
    const text = prose`one aggregate
      of ${n} replies,
      each alone`;
    expect(text).toBe('one aggregate of 3 replies, each alone');
  });

  it('leaves the values it is given as they are', () => {
    const value = 'a\nb';
    expect(prose`x ${value} y`).toBe('x a\nb y');
  });
});
