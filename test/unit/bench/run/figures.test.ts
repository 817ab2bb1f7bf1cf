/** The rounding and per-reply figures every section of the results is built with. */
import { describe, expect, it } from 'vitest';
import { faninWho, perReply, round, roundAll } from '../../../../bench/run/figures.ts';

describe("the results' figures", () => {
  it('rounds to two decimals unless told otherwise', () => {
    expect(round(1.23456)).toBe(1.23);
    expect(round(1.23456, 3)).toBe(1.235);
    expect(round(1234.5, 0)).toBe(1235);
  });

  it('rounds every finite number of an object to four decimals and leaves the rest', () => {
    expect(roundAll({ a: 1 / 3, b: 'x', c: Number.POSITIVE_INFINITY })).toEqual({
      a: 0.3333,
      b: 'x',
      c: Number.POSITIVE_INFINITY,
    });
  });

  it("counts fanin's handlers as fanin and its clients and pollers as not", () => {
    expect(faninWho('fanin:reply')).toBe(true);
    expect(faninWho('clients')).toBe(false);
    expect(faninWho('esm')).toBe(false);
  });

  it('divides a metric by the replies, per group, sorted by group', () => {
    const counters = { 'ddb.wcu|fanin:reply|PutItem': 30, 'ddb.wcu|fanin:fan-out|BatchWriteItem': 5 };
    const byOperation = perReply(counters, 'ddb.wcu', 20, (who, detail) => `${who} ${detail}`);
    expect(Object.entries(byOperation)).toEqual([
      ['fanin:fan-out BatchWriteItem', 0.25],
      ['fanin:reply PutItem', 1.5],
    ]);
  });
});
