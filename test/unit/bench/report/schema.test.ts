import { describe, expect, it } from 'vitest';
import { snakeKeys } from '../../../../bench/report/schema.ts';

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
