import { describe, expect, it } from 'vitest';
import {
  aggregate,
  byReplyOrder,
  type CondenseState,
  compareByCriteria,
  condenseResult,
  condenseStep,
  EMPTY_CONDENSE,
  missingReplyIds,
  type ReplyRecord,
  retainedBody,
} from '../../../../shared/engine/aggregation.ts';
import { readPath } from '../../../../shared/engine/path.ts';
import { ExpressionError } from '../../../../shared/errors.ts';
import {
  aContext,
  aDefinition,
  aReply,
  permutations,
  rejectionOf,
  seededRandom,
  shuffled,
} from './factories.ts';

const collect = aDefinition();
const ids = (result: unknown): string[] => (result as { replyId: string }[]).map((entry) => entry.replyId);

describe('aggregate: collect', () => {
  it('collect: orders replies by reply index regardless of arrival order ("10" after "9")', async () => {
    // Prepare
    const indexes = Array.from({ length: 12 }, (_, i) => String(i));
    const arrivals = shuffled(indexes, seededRandom(7)).map((id, at) => aReply(id, { item: id }, at));

    // Act
    const result = await aggregate(collect, arrivals, aContext());

    // Assess
    expect(ids(result)).toEqual(['0', '1', '2', '3', '4', '5', '6', '7', '8', '9', '10', '11']);
  });

  it('collect: yields { replyId, body } only', async () => {
    // Prepare
    const replies = [aReply('1', { sku: 'B' }, 20), aReply('0', { sku: 'A' }, 10)];

    // Act
    const result = await aggregate(collect, replies, aContext());

    // Assess
    expect(result).toStrictEqual([
      { replyId: '0', body: { sku: 'A' } },
      { replyId: '1', body: { sku: 'B' } },
    ]);
  });

  it('collect: gives the same order for every arrival order of mixed numeric and other ids', async () => {
    // Prepare
    const replyIds = ['9', '10', '5x', 'b', '0'];
    const orders = new Set<string>();

    // Act
    for (const arrival of permutations(replyIds)) {
      const replies = arrival.map((id, at) => aReply(id, id, at));
      orders.add(ids(await aggregate(collect, replies, aContext())).join(','));
    }

    // Assess
    expect([...orders]).toEqual(['0,9,10,5x,b']);
  });

  it('collect: orders non-numeric ids by id', async () => {
    // Prepare
    const replies = [aReply('bank-c', 3), aReply('bank-a', 1), aReply('bank-b', 2)];

    // Act
    const result = await aggregate(collect, replies, aContext());

    // Assess
    expect(ids(result)).toEqual(['bank-a', 'bank-b', 'bank-c']);
  });

  it('collect: no replies give an empty list', async () => {
    // Prepare
    const replies: ReplyRecord[] = [];

    // Act
    const result = await aggregate(collect, replies, aContext());

    // Assess
    expect(result).toStrictEqual([]);
  });

  it('collect: leaves the recorded replies in their order', async () => {
    // Prepare
    const replies = [aReply('2', 'c'), aReply('0', 'a'), aReply('1', 'b')];

    // Act
    await aggregate(collect, replies, aContext());

    // Assess
    expect(replies.map((reply) => reply.replyId)).toEqual(['2', '0', '1']);
  });
});

describe('byReplyOrder', () => {
  it('breaks a tie on the same id by the time received', () => {
    // Prepare
    const early = aReply('3', 'early', 100);
    const late = aReply('3', 'late', 200);

    // Act
    const comparison = byReplyOrder(late, early);

    // Assess
    expect(comparison).toBeGreaterThan(0);
  });
});

describe('aggregate: best', () => {
  const loan = aDefinition({
    name: 'loan-broker',
    aggregation: {
      algorithm: 'best',
      criteria: [
        { path: '$.rate', order: 'min' },
        { path: '$.termYears', order: 'min' },
      ],
    },
  });
  const auction = aDefinition({
    name: 'auction',
    aggregation: { algorithm: 'best', criteria: [{ path: 'bid.amount', order: 'max' }] },
  });

  it('best: picks the lowest rate, then the shortest term (the loan broker)', async () => {
    // Prepare
    const quotes = [
      aReply('bank-a', { bank: 'A', rate: 3.1, termYears: 15 }, 1),
      aReply('bank-b', { bank: 'B', rate: 2.9, termYears: 30 }, 2),
      aReply('bank-c', { bank: 'C', rate: 2.9, termYears: 20 }, 3),
      aReply('bank-d', { bank: 'D', rate: 3.0, termYears: 10 }, 4),
    ];

    // Act
    const results = new Set<string>();
    for (const arrival of permutations(quotes)) {
      results.add(JSON.stringify(await aggregate(loan, arrival, aContext())));
    }

    // Assess
    expect([...results]).toEqual([
      JSON.stringify({ replyId: 'bank-c', body: { bank: 'C', rate: 2.9, termYears: 20 } }),
    ]);
  });

  it('best: picks the highest bid under order max', async () => {
    // Prepare
    const bids = [
      aReply('1', { bidder: 'ann', bid: { amount: 100 } }),
      aReply('2', { bidder: 'bob', bid: { amount: 120 } }),
      aReply('3', { bidder: 'cy', bid: { amount: 90 } }),
    ];

    // Act
    const result = await aggregate(auction, bids, aContext());

    // Assess
    expect(result).toStrictEqual({ replyId: '2', body: { bidder: 'bob', bid: { amount: 120 } } });
  });

  it.each([
    ['min', loan, [{ rate: 9, termYears: 30 }, {}, { termYears: 1 }]],
    ['max', auction, [{ bid: { amount: 1 } }, {}, { bid: {} }]],
  ])(
    'best (%s): a reply missing the criterion ranks last, whatever the order',
    async (_order, definition, bodies) => {
      // Prepare
      const replies = bodies.map((body, index) => aReply(`r${index}`, body, index));

      // Act
      const winners = new Set<string>();
      for (const arrival of permutations(replies)) {
        winners.add(((await aggregate(definition, arrival, aContext())) as { replyId: string }).replyId);
      }

      // Assess
      expect([...winners]).toEqual(['r0']);
    },
  );

  it('best: a reply missing the first criterion loses even with the best second criterion', async () => {
    // Prepare
    const quotes = [aReply('a', { termYears: 1 }, 1), aReply('b', { rate: 5, termYears: 40 }, 2)];

    // Act
    const result = await aggregate(loan, quotes, aContext());

    // Assess
    expect(result).toMatchObject({ replyId: 'b' });
  });

  it('best: a full tie goes to the earliest received reply', async () => {
    // Prepare
    const quotes = [
      aReply('bank-z', { rate: 2.9, termYears: 20 }, 300),
      aReply('bank-y', { rate: 2.9, termYears: 20 }, 100),
      aReply('bank-x', { rate: 2.9, termYears: 20 }, 200),
    ];

    // Act
    const result = await aggregate(loan, quotes, aContext());

    // Assess
    expect(result).toMatchObject({ replyId: 'bank-y' });
  });

  it('best: a full tie received at the same time goes to the lower reply id', async () => {
    // Prepare
    const quotes = [aReply('bank-b', { rate: 2.9 }, 100), aReply('bank-a', { rate: 2.9 }, 100)];

    // Act
    const result = await aggregate(loan, quotes, aContext());

    // Assess
    expect(result).toMatchObject({ replyId: 'bank-a' });
  });

  it('best: a non-numeric value never beats a number, whatever the arrival order', async () => {
    // Prepare
    const quotes = [
      aReply('n/a', { rate: 'N/A' }, 1),
      aReply('high', { rate: 3.1 }, 2),
      aReply('low', { rate: 2.9 }, 3),
    ];

    // Act
    const winners = new Set<string>();
    for (const arrival of permutations(quotes)) {
      winners.add(((await aggregate(loan, arrival, aContext())) as { replyId: string }).replyId);
    }

    // Assess
    expect([...winners]).toEqual(['low']);
  });

  it('best: a numeric string competes as a number ("10" beats "9" under max)', async () => {
    // Prepare
    const bids = [
      aReply('a', { bid: { amount: '9' } }, 1),
      aReply('b', { bid: { amount: '10' } }, 2),
      aReply('c', { bid: { amount: 9.5 } }, 3),
    ];

    // Act
    const result = await aggregate(auction, bids, aContext());

    // Assess
    expect(result).toMatchObject({ replyId: 'b' });
  });

  it('best: over no replies is null', async () => {
    // Prepare
    const replies: ReplyRecord[] = [];

    // Act
    const result = await aggregate(loan, replies, aContext());

    // Assess
    expect(result).toBeNull();
  });

  it('compareByCriteria: is antisymmetric', () => {
    // Prepare
    const criteria = [{ path: 'rate', order: 'min' as const }];
    const a = aReply('a', { rate: 'N/A' }, 1);
    const b = aReply('b', { rate: 3 }, 2);

    // Act
    const ab = compareByCriteria(criteria, a, b);
    const ba = compareByCriteria(criteria, b, a);

    // Assess
    expect(Math.sign(ab)).toBe(-Math.sign(ba));
    expect(ab).not.toBe(0);
  });
});

describe('aggregate: condense', () => {
  const condense = (functions?: ('count' | 'sum' | 'avg' | 'min' | 'max')[]) =>
    aDefinition({
      name: 'totals',
      aggregation:
        functions === undefined
          ? { algorithm: 'condense', field: '$.orders' }
          : { algorithm: 'condense', field: '$.orders', functions },
    });
  const mixed = [10, '20', 'many', null, 30, true, { n: 1 }, undefined, '', Number.NaN].map((orders, index) =>
    aReply(String(index), orders === undefined ? {} : { orders }),
  );

  it.each([
    ['count', 3],
    ['sum', 60],
    ['avg', 20],
    ['min', 10],
    ['max', 30],
  ] as const)('condense: %s skips values that are not numbers', async (fn, expected) => {
    // Prepare
    const definition = condense([fn]);

    // Act
    const result = await aggregate(definition, mixed, aContext());

    // Assess
    expect(result).toStrictEqual({ [fn]: expected });
  });

  it('condense: folds every function by default', async () => {
    // Prepare
    const definition = condense();

    // Act
    const result = await aggregate(definition, mixed, aContext());

    // Assess
    expect(result).toStrictEqual({ count: 3, sum: 60, avg: 20, min: 10, max: 30 });
  });

  it('condense: over no numbers, count and sum are 0 and avg, min and max are null', async () => {
    // Prepare
    const definition = condense();
    const replies = [aReply('0', { orders: 'none' }), aReply('1', {})];

    // Act
    const result = await aggregate(definition, replies, aContext());

    // Assess
    expect(result).toStrictEqual({ count: 0, sum: 0, avg: null, min: null, max: null });
  });

  it("condense: the seed's auction keeps only the highest bid, via max", async () => {
    // Prepare
    const definition = aDefinition({
      name: 'auction',
      aggregation: { algorithm: 'condense', field: '$.bid.amount', functions: ['max'] },
    });
    const bids = [
      aReply('1', { bidder: 'ann', bid: { amount: 100 } }),
      aReply('2', { bidder: 'bob', bid: { amount: 120 } }),
      aReply('3', { bidder: 'cy', bid: { amount: 90 } }),
    ];

    // Act
    const result = await aggregate(definition, bids, aContext());

    // Assess
    expect(result).toStrictEqual({ max: 120 });
  });

  it('condenseStep: the fold keeps a constant-size state and ends where aggregate over the whole list does', async () => {
    // Prepare
    const random = seededRandom(20240501);
    const values = Array.from({ length: 500 }, () => {
      const roll = random();
      if (roll < 0.1) return 'n/a';
      if (roll < 0.2) return String(Math.round(random() * 1000) / 10);
      return Math.round((random() * 2000 - 1000) * 100) / 100;
    });
    const replies = values.map((orders, i) => aReply(String(i), { orders, filler: 'x'.repeat(i) }));
    const definition = condense();
    const shapes = new Set<string>();

    // Act
    let state: CondenseState = EMPTY_CONDENSE;
    for (const reply of replies) {
      state = condenseStep(state, readPath(retainedBody(definition, reply.body), '$.orders'));
      shapes.add(
        Object.entries(state)
          .map(([key, value]) => `${key}:${value === null ? 'null' : typeof value}`)
          .join(),
      );
    }
    const whole = await aggregate(definition, replies, aContext());

    // Assess
    expect([...shapes]).toEqual(['count:number,sum:number,min:number,max:number']);
    expect(condenseResult(state, ['count', 'sum', 'avg', 'min', 'max'])).toStrictEqual(whole);
    expect(state.count).toBe(values.filter((v) => v !== 'n/a').length);
  });

  it('condenseStep: a value that is not a number leaves the state as it was', () => {
    // Prepare
    const state: CondenseState = { count: 2, sum: 5, min: 1, max: 4 };

    // Act
    const next = condenseStep(state, 'n/a');

    // Assess
    expect(next).toBe(state);
  });

  it('condenseStep: folds a number into every running value', () => {
    // Prepare
    const state: CondenseState = { count: 2, sum: 5, min: 1, max: 4 };

    // Act
    const next = condenseStep(state, -3);

    // Assess
    expect(next).toStrictEqual({ count: 3, sum: 2, min: -3, max: 4 });
  });

  it('condenseResult: projects only the functions asked for', () => {
    // Prepare
    const state: CondenseState = { count: 4, sum: 10, min: 1, max: 4 };

    // Act
    const result = condenseResult(state, ['avg', 'count']);

    // Assess
    expect(result).toStrictEqual({ avg: 2.5, count: 4 });
  });
});

describe('retainedBody', () => {
  const auction = aDefinition({
    name: 'auction',
    aggregation: { algorithm: 'condense', field: '$.bid.amount', functions: ['max'] },
  });

  it('condense: keeps only the field at its path', () => {
    // Prepare
    const body = { bidder: 'bob', bid: { amount: 120, currency: 'EUR' }, notes: 'x'.repeat(1000) };

    // Act
    const retained = retainedBody(auction, body);

    // Assess
    expect(retained).toStrictEqual({ bid: { amount: 120 } });
  });

  it('condense: keeps an indexed field readable at the same path', () => {
    // Prepare
    const definition = aDefinition({
      aggregation: { algorithm: 'condense', field: 'lines[1].qty', functions: ['sum'] },
    });
    const body = { lines: [{ qty: 1 }, { qty: 7, sku: 'B' }], customer: 'c-1' };

    // Act
    const retained = retainedBody(definition, body);

    // Assess
    expect(readPath(retained, 'lines[1].qty')).toBe(7);
    expect(JSON.stringify(retained)).not.toContain('customer');
    expect(JSON.stringify(retained)).not.toContain('sku');
  });

  it('condense: keeps nothing when the field is absent', () => {
    // Prepare
    const body = { bidder: 'bob' };

    // Act
    const retained = retainedBody(auction, body);

    // Assess
    expect(retained).toStrictEqual({});
  });

  it.each([
    ['collect', aDefinition()],
    ['best', aDefinition({ aggregation: { algorithm: 'best', criteria: [{ path: 'rate', order: 'min' }] } })],
    ['custom', aDefinition({ aggregation: { algorithm: 'custom', expression: 'replies' } })],
  ])('%s: keeps the whole body', (_algorithm, definition) => {
    // Prepare
    const body = { bidder: 'bob', bid: { amount: 120 } };

    // Act
    const retained = retainedBody(definition, body);

    // Assess
    expect(retained).toBe(body);
  });
});

describe('aggregate: custom', () => {
  const custom = (expression: string) =>
    aDefinition({ name: 'custom-agg', aggregation: { algorithm: 'custom', expression } });

  it('custom: sees replies, replyIds, aggregateId, definition, expected and parameters', async () => {
    // Prepare
    const definition = custom(`{
      "total": $sum(replies.amount),
      "ids": replyIds,
      "first": replies[0].amount,
      "aggregate": aggregateId,
      "definition": definition,
      "expected": expected,
      "threshold": parameters.threshold,
      "request": request.customer
    }`);
    const replies = [aReply('10', { amount: 3 }), aReply('2', { amount: 4 }), aReply('9', { amount: 5 })];
    const context = aContext({
      aggregateId: 'agg-77',
      definition: 'custom-agg',
      expected: 3,
      params: { threshold: 2.5 },
      request: { customer: 'c-9' },
    });

    // Act
    const result = await aggregate(definition, replies, context);

    // Assess
    expect(result).toStrictEqual({
      total: 12,
      ids: ['2', '9', '10'],
      first: 4,
      aggregate: 'agg-77',
      definition: 'custom-agg',
      expected: 3,
      threshold: 2.5,
      request: 'c-9',
    });
  });

  it('custom: expected and request are null when unknown', async () => {
    // Prepare
    const definition = custom('[expected = null, request = null]');

    // Act
    const result = await aggregate(definition, [aReply('0', {})], aContext());

    // Assess
    expect(result).toStrictEqual([true, true]);
  });

  it('custom: an expression that yields nothing gives null', async () => {
    // Prepare
    const definition = custom('replies.nothing');

    // Act
    const result = await aggregate(definition, [aReply('0', { a: 1 })], aContext());

    // Assess
    expect(result).toBeNull();
  });

  it('custom: an expression that throws raises an ExpressionError', async () => {
    // Prepare
    const definition = custom('$count(replies) < 2 ? $error("too few quotes") : replies');

    // Act
    const error = await rejectionOf(aggregate(definition, [aReply('0', {})], aContext()));

    // Assess
    expect(error).toBeInstanceOf(ExpressionError);
    expect((error as Error).message).toContain('too few quotes');
  });

  it('custom: a runaway expression raises an ExpressionError about its depth or time budget', async () => {
    // Prepare
    const definition = custom('($f := function($x){ $f($x+1) }; $f(0))');

    // Act
    const error = await rejectionOf(aggregate(definition, [aReply('0', {})], aContext()));

    // Assess
    expect(error).toBeInstanceOf(ExpressionError);
    expect((error as Error).message).toMatch(/depth|time/);
  });
});

describe('missingReplyIds', () => {
  it.each([
    ['the gaps', 4, ['0', '3'], ['1', '2']],
    ['nothing when every reply arrived', 3, ['2', '0', '1'], []],
    ['every index when nothing arrived', 3, [], ['0', '1', '2']],
    ['nothing when none were expected', 0, ['0'], []],
    ['the gaps, ignoring ids outside the range', 2, ['1', '5', 'bank-a'], ['0']],
  ])('lists %s', (_case, expected, received, missing) => {
    // Prepare
    // (values from the table)

    // Act
    const result = missingReplyIds(expected, received);

    // Assess
    expect(result).toEqual(missing);
  });

  it('accepts any iterable of received ids', () => {
    // Prepare
    const received = new Set(['1']);

    // Act
    const result = missingReplyIds(3, received.values());

    // Assess
    expect(result).toEqual(['0', '2']);
  });
});

/**
 * A result is built more than once — by its owner before the seal, by a resumer after a crash or
 * a failed channel — and every copy must be the same bytes. The algorithms are pure functions of
 * the members, the context's fixed time and the aggregate id.
 */
describe('aggregate: every build of a result is the same bytes', () => {
  const custom = aDefinition({
    aggregation: {
      algorithm: 'custom',
      expression:
        '{ "now": $now(), "millis": $millis(), "day": $now("[Y0001]-[M01]-[D01]"), "random": $random(), "shuffled": $shuffle([1, 2, 3, 4, 5, 6, 7, 8]), "n": $count(replies) }',
    },
  });
  const at = Date.UTC(2026, 0, 15, 9, 30, 0, 123);

  it('custom: $now() and $millis() are the fixed time of the context, not the clock', async () => {
    // Kills the mutant "custom expression evaluated without fixed inputs" (the clock and Math.random).
    // Prepare
    const replies = [aReply('0', { rate: 1 })];

    // Act
    const result = (await aggregate(custom, replies, aContext({ at }))) as Record<string, unknown>;

    // Assess
    expect(result).toMatchObject({
      now: '2026-01-15T09:30:00.123Z',
      millis: at,
      day: '2026-01-15',
      n: 1,
    });
  });

  it('custom: two builds of the same aggregate, at different wall times, give the same bytes; another aggregate draws other numbers', async () => {
    // Kills the mutant "custom expression evaluated without fixed inputs" (the clock and Math.random).
    // Prepare
    const replies = [aReply('0', { rate: 1 }), aReply('1', { rate: 2 })];

    // Act
    const first = JSON.stringify(await aggregate(custom, replies, aContext({ at })));
    await new Promise((resolve) => setTimeout(resolve, 5));
    const second = JSON.stringify(await aggregate(custom, [...replies].reverse(), aContext({ at })));
    const other = (await aggregate(custom, replies, aContext({ at, aggregateId: 'agg-2' }))) as {
      random: number;
      shuffled: number[];
    };

    // Assess
    expect(second).toBe(first);
    const parsed = JSON.parse(first) as { random: number; shuffled: number[] };
    expect(parsed.random).toBeGreaterThanOrEqual(0);
    expect(parsed.random).toBeLessThan(1);
    expect([...parsed.shuffled].sort()).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(other.random).not.toBe(parsed.random);
  });

  it('condense: the sum is folded in reply order, so the order replies are read in cannot change its last bit', async () => {
    // Kills the mutant "condense folds in read order" (no sort before the fold).
    // Prepare: 0.1 + 0.2 + 0.3 is 0.6000000000000001 from the left, 0.6 from the right
    const condense = aDefinition({
      aggregation: { algorithm: 'condense', field: '$.x', functions: ['sum', 'avg'] },
    });
    const replies = [aReply('0', { x: 0.1 }), aReply('1', { x: 0.2 }), aReply('2', { x: 0.3 })];

    // Act
    const inOrder = await aggregate(condense, replies, aContext({ at }));
    const reversed = await aggregate(condense, [...replies].reverse(), aContext({ at }));

    // Assess
    expect(JSON.stringify(reversed)).toBe(JSON.stringify(inOrder));
    expect(inOrder).toEqual({ sum: 0.6000000000000001, avg: 0.6000000000000001 / 3 });
  });
});
