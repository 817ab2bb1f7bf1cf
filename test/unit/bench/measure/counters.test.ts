/** The meter's counter keys (`metric|who|detail`) and the sums the results are built from. */
import { describe, expect, it } from 'vitest';
import { diff, grouped, parseKey, total } from '../../../../bench/measure/counters.ts';

const counters = {
  'ddb.wcu|fanin:reply|PutItem': 10,
  'ddb.wcu|fanin:reply|TransactWriteItems|state': 4,
  'ddb.wcu|clients|PutItem': 3,
  'sqs.call|fanin:reply|DeleteMessageBatch': 2,
};

describe('the benchmark counters', () => {
  it('splits a key into metric, who, and a detail that may hold the separator itself', () => {
    expect(parseKey('ddb.wcu|fanin:reply|TransactWriteItems|state')).toEqual({
      metric: 'ddb.wcu',
      who: 'fanin:reply',
      detail: 'TransactWriteItems|state',
    });
  });

  it('gives what changed between two snapshots and leaves out counters that did not move', () => {
    expect(diff({ a: 5, b: 2, c: 1 }, { a: 3, b: 2 })).toEqual({ a: 2, c: 1 });
  });

  it('sums one metric over the callers a filter keeps', () => {
    expect(total(counters, 'ddb.wcu')).toBe(17);
    expect(total(counters, 'ddb.wcu', (who) => who.startsWith('fanin'))).toBe(14);
    expect(total(counters, 'sqs.call')).toBe(2);
  });

  it('groups one metric by a label of who and detail, dropping what the label leaves undefined', () => {
    const byOperation = grouped(counters, 'ddb.wcu', (who, detail) =>
      who === 'clients' ? undefined : detail.split('|')[0],
    );
    expect(byOperation).toEqual({ PutItem: 10, TransactWriteItems: 4 });
  });
});
