import { describe, expect, it } from 'vitest';
import {
  predicateHolds,
  predicateInput,
  readsRequest,
  truthy,
} from '../../../../../shared/engine/completion/predicate-evaluation.ts';
import { aReply } from '../factories.ts';

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
