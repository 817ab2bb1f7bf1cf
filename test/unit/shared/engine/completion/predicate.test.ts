import { describe, expect, it } from 'vitest';
import { decide } from '../../../../../shared/engine/completion/plan.ts';
import {
  predicateHolds,
  predicateInput,
  predicateRule,
  readsRequest,
  truthy,
} from '../../../../../shared/engine/completion/predicate.ts';
import type { ReplyTally } from '../../../../../shared/engine/completion/tally.ts';
import { Outcome } from '../../../../../shared/engine/constants.ts';
import { aDefinition, aReply } from '../factories.ts';

const REPLY = { type: 'reply' } as const;
const DEADLINE = { type: 'deadline' } as const;
const tallied = (received: number, extra: Partial<ReplyTally> = {}): ReplyTally => ({
  received,
  params: {},
  ...extra,
});

const predicate = aDefinition({ completion: { strategy: 'predicate', expression: 'true' } });

describe('decide: predicate', () => {
  it('waits while the predicate does not hold, even with every expected reply in', () => {
    expect(decide(predicate, tallied(3, { expected: 3, predicate: false }), REPLY)).toStrictEqual({
      complete: false,
    });
  });

  it('completes, reported as the predicate, once it holds', () => {
    expect(decide(predicate, tallied(1, { predicate: true }), REPLY)).toStrictEqual({
      complete: true,
      outcome: Outcome.COMPLETED,
      completedBy: 'predicate',
    });
  });

  it('times out at the deadline', () => {
    expect(decide(predicate, tallied(2, { predicate: false }), DEADLINE)).toMatchObject({
      outcome: Outcome.TIMED_OUT,
      completedBy: 'deadline',
    });
  });
});

describe('predicate', () => {
  it('sees successful replies in reply order, failures apart, and what the aggregate knows', () => {
    // Act
    const input = predicateInput(
      [aReply('10', { v: 'b' }), aReply('2', { v: 'a' })],
      [{ replyId: '3', error: 'down', body: null }],
      {
        aggregateId: 'agg-1',
        definition: 'quorum',
        expected: 5,
        params: { count: 2 },
        request: { body: { q: 2 } },
      },
    );

    // Assess
    expect(input).toStrictEqual({
      replies: [{ v: 'a' }, { v: 'b' }],
      replyIds: ['2', '10'],
      failures: [{ replyId: '3', error: 'down', body: null }],
      received: 3,
      expected: 5,
      parameters: { count: 2 },
      request: { body: { q: 2 } },
      aggregateId: 'agg-1',
      definition: 'quorum',
    });
  });

  it.each([
    [true, true],
    [false, false],
    [0, false],
    [2, true],
    ['', false],
    ['x', true],
    [null, false],
    [undefined, false],
    [[], false],
    [[false, 0], false],
    [[false, 1], true],
    [{}, false],
    [{ a: 1 }, true],
  ])('holds on %j as JSONata’s $boolean says: %s', (value, holds) => {
    expect(truthy(value)).toBe(holds);
  });

  it('evaluates over the input, bounded like custom expressions', async () => {
    // Prepare
    const input = predicateInput([aReply('0', { vote: 'yes' }), aReply('1', { vote: 'yes' })], [], {
      aggregateId: 'a',
      definition: 'q',
      params: {},
      request: { body: { quorum: 2 } },
    });

    // Act
    const holds = await predicateHolds('$count(replies[vote = "yes"]) >= request.body.quorum', input);
    const runaway = predicateHolds('($f := function($n) { $f($n + 1) }; $f(0))', input);

    // Assess
    expect(holds).toBe(true);
    await expect(runaway).rejects.toThrow(/depth budget|time budget/);
  });

  it('loads the request only for an expression that mentions it', () => {
    expect(readsRequest('$count(replies) >= request.body.quorum')).toBe(true);
    expect(readsRequest('$count(replies) >= 2')).toBe(false);
  });
});

describe('the predicate rule', () => {
  const spec = { strategy: 'predicate', expression: '$count(replies) > 1' } as const;

  it.each([
    ['completes once its predicate holds', true, 'predicate'],
    ['waits while it does not', false, undefined],
    ['waits while it was not evaluated', undefined, undefined],
  ] as const)('%s', (_case, holds, by) => {
    const tally: ReplyTally = {
      received: 2,
      params: {},
      ...(holds !== undefined ? { predicate: holds } : {}),
    };
    expect(predicateRule.onReply(spec, tally, undefined)).toBe(by);
  });

  it('times out at the deadline, reads every batch and says its expression', () => {
    expect(predicateRule.atDeadline).toBe('times-out');
    expect(predicateRule.reads(spec)).toBe('every-batch');
    expect(predicateRule.predicate?.(spec)).toBe('$count(replies) > 1');
  });
});
