/** The rounding and per-reply figures every section of the results is built with. */
import { describe, expect, it } from 'vitest';
import { faninWho, perReply, round, roundAll, snakeKeys } from '../../../../bench/run/figures.ts';

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

describe('the results JSON names its fields in snake_case', () => {
  it('renames camelCase fields at any depth, in arrays too', () => {
    const results = snakeKeys({
      usage: { writeUnits: 5, lambdaMs: 40, stepFunctions: 0 },
      scale: [{ fanOut: 10, fanin: { writeUnitsPerReply: 1.5 } }],
    });
    expect(results).toEqual({
      usage: { write_units: 5, lambda_ms: 40, step_functions: 0 },
      scale: [{ fan_out: 10, fanin: { write_units_per_reply: 1.5 } }],
    });
  });

  it('keeps fields already in snake_case and figures such as p50', () => {
    expect(snakeKeys({ cost_per_million_aggregates_usd: 31.7, p50: 1, p99: 2 })).toEqual({
      cost_per_million_aggregates_usd: 31.7,
      p50: 1,
      p99: 2,
    });
  });

  it('keeps keys that are data: operation names, who and operation, key labels, seconds', () => {
    const data = {
      GetItem: 1,
      'fanin:reply PutItem': 2,
      'esm ReceiveMessage|timer': 3,
      'shard 0': 4,
      '86400': 5,
      'timed-out': 6,
    };
    expect(snakeKeys({ callsPerInvocation: data })).toEqual({ calls_per_invocation: data });
  });

  it('leaves null, strings and numbers as they are', () => {
    expect(snakeKeys({ readmeTotal: null, name: 'writeShards 8' })).toEqual({
      readme_total: null,
      name: 'writeShards 8',
    });
  });
});
