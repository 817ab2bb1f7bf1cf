import { describe, expect, it } from 'vitest';
import { type CompletionState, decide } from '../../../../shared/engine/completion.ts';
import { Outcome } from '../../../../shared/engine/constants.ts';
import {
  type DefinitionInput,
  effectiveParameters,
  parseDefinition,
} from '../../../../shared/engine/definition.ts';
import { failureOf, failuresBeyondTolerance } from '../../../../shared/engine/failures.ts';
import { predicateHolds, predicateInput, readsRequest, truthy } from '../../../../shared/engine/predicate.ts';
import { expectedOutsideBounds, requestOverrides } from '../../../../shared/engine/request-parameters.ts';
import { InvalidDefinitionError } from '../../../../shared/errors.ts';
import { aDefinition, aReply, thrownBy } from './factories.ts';

const REPLY = { type: 'reply' } as const;
const DEADLINE = { type: 'deadline' } as const;
const state = (received: number, extra: Partial<CompletionState> = {}): CompletionState => ({
  received,
  params: {},
  ...extra,
});

const predicate = aDefinition({ completion: { strategy: 'predicate', expression: 'true' } });
const anyOf = aDefinition({
  completion: {
    strategy: 'any',
    rules: [
      { rule: 'threshold', score: { source: 'path', path: '$.rate' }, threshold: 3, direction: 'below' },
      { rule: 'count', count: 3 },
      { rule: 'predicate', expression: 'true' },
      { rule: 'all-arrived' },
    ],
  },
});

describe('decide: completedBy for every way an aggregate ends', () => {
  it.each([
    ['all, the last expected reply', { strategy: 'all' }, state(3, { expected: 3 }), REPLY, 'all-arrived'],
    ['count, the Nth reply', { strategy: 'count', count: 2 }, state(2, { expected: 5 }), REPLY, 'count'],
    [
      'count, every expected reply when fewer than N',
      { strategy: 'count', count: 9 },
      state(2, { expected: 2 }),
      REPLY,
      'all-arrived',
    ],
    ['first, the first reply', { strategy: 'first' }, state(1), REPLY, 'first'],
    [
      'timeout, every expected reply',
      { strategy: 'timeout' },
      state(2, { expected: 2 }),
      REPLY,
      'all-arrived',
    ],
    ['timeout, the deadline', { strategy: 'timeout' }, state(1), DEADLINE, 'deadline'],
    ['all, the deadline', { strategy: 'all' }, state(1, { expected: 2 }), DEADLINE, 'deadline'],
    ['external, a complete command', { strategy: 'external' }, state(0), { type: 'external' }, 'external'],
    ['all, a purge', { strategy: 'all' }, state(0), { type: 'purge' }, 'purge'],
  ] as const)('%s', (_case, completion, current, event, by) => {
    // Prepare
    const definition = aDefinition({ completion, timeoutSeconds: 60 } as Partial<DefinitionInput>);

    // Act
    const decision = decide(definition, current, event);

    // Assess
    expect(decision).toMatchObject({ complete: true, completedBy: by });
  });

  it('override: a score at the threshold is reported as the threshold', () => {
    // Prepare
    const definition = aDefinition({
      completion: {
        strategy: 'override',
        score: { source: 'path', path: '$.rate' },
        threshold: 3,
        direction: 'below',
      },
      timeoutSeconds: 60,
    });

    // Act
    const decision = decide(definition, state(1, { expected: 4 }), { type: 'reply', score: 3 });

    // Assess
    expect(decision).toMatchObject({ outcome: Outcome.COMPLETED, completedBy: 'threshold' });
  });
});

describe('decide: predicate', () => {
  it('waits while the predicate does not hold, even with every expected reply in', () => {
    expect(decide(predicate, state(3, { expected: 3, predicate: false }), REPLY)).toStrictEqual({
      complete: false,
    });
  });

  it('completes, reported as the predicate, once it holds', () => {
    expect(decide(predicate, state(1, { predicate: true }), REPLY)).toStrictEqual({
      complete: true,
      outcome: Outcome.COMPLETED,
      completedBy: 'predicate',
    });
  });

  it('times out at the deadline', () => {
    expect(decide(predicate, state(2, { predicate: false }), DEADLINE)).toMatchObject({
      outcome: Outcome.TIMED_OUT,
      completedBy: 'deadline',
    });
  });
});

describe('decide: any', () => {
  it('the first rule of the definition that holds is what completed it', () => {
    // Prepare: count, predicate and all-arrived all hold; the threshold (first) does not
    const current = state(3, { expected: 3, predicate: true });

    // Act
    const decision = decide(anyOf, current, { type: 'reply', score: 3.5 });

    // Assess
    expect(decision).toMatchObject({ completedBy: 'count' });
  });

  it.each([
    ['a score at the threshold', state(1, { expected: 5 }), 2.5, 'threshold'],
    ['the predicate', state(1, { expected: 5, predicate: true }), undefined, 'predicate'],
    ['every expected reply', state(2, { expected: 2 }), undefined, 'all-arrived'],
  ])('completes on %s alone', (_case, current, score, by) => {
    expect(decide(anyOf, current, { type: 'reply', score })).toMatchObject({ completedBy: by });
  });

  it('waits while no rule holds', () => {
    expect(
      decide(anyOf, state(2, { expected: 5, predicate: false }), { type: 'reply', score: 4 }),
    ).toStrictEqual({
      complete: false,
    });
  });

  it('a request’s count and threshold, stored in the parameters, replace the rules’ own', () => {
    // Prepare
    const params = { count: 2, threshold: 4 };

    // Act
    const byCount = decide(anyOf, state(2, { expected: 9, params }), { type: 'reply', score: 4.5 });
    const byThreshold = decide(anyOf, state(1, { expected: 9, params }), { type: 'reply', score: 3.9 });

    // Assess
    expect(byCount).toMatchObject({ completedBy: 'count' });
    expect(byThreshold).toMatchObject({ completedBy: 'threshold' });
  });

  it('its count and threshold are runtime parameters like the count and override strategies’', () => {
    expect(effectiveParameters(anyOf)).toStrictEqual({ count: 3, threshold: 3 });
    expect(effectiveParameters(anyOf, { count: 5 })).toStrictEqual({ count: 5, threshold: 3 });
  });
});

describe('decide: failed replies', () => {
  const tolerant = aDefinition({ completion: { strategy: 'all' }, toleratedFailureCount: 1 });

  it('count toward every expected reply, so the aggregate completes with them in', () => {
    expect(decide(tolerant, state(3, { expected: 3, failed: 1 }), REPLY)).toMatchObject({
      outcome: Outcome.COMPLETED,
      completedBy: 'all-arrived',
    });
  });

  it('never count toward a count or first', () => {
    // Prepare
    const count = aDefinition({ completion: { strategy: 'count', count: 2 }, toleratedFailureCount: 5 });
    const first = aDefinition({ completion: { strategy: 'first' }, toleratedFailureCount: 5 });

    // Act
    const decisions = [
      decide(count, state(2, { expected: 9, failed: 1 }), REPLY),
      decide(first, state(1, { failed: 1 }), REPLY),
    ];

    // Assess
    expect(decisions).toStrictEqual([{ complete: false }, { complete: false }]);
  });

  it('beyond the tolerance end the aggregate failed at once, before any rule, with the reason', () => {
    expect(decide(tolerant, state(2, { expected: 5, failed: 2 }), REPLY)).toStrictEqual({
      complete: true,
      outcome: Outcome.FAILED,
      completedBy: 'failures',
      reason: '2 replies failed, more than the 1 tolerated (toleratedFailureCount)',
    });
  });

  it('a timeout strategy with only failed replies times out at the deadline', () => {
    // Prepare
    const timeout = aDefinition({
      completion: { strategy: 'timeout' },
      timeoutSeconds: 60,
      toleratedFailureCount: 3,
    });

    // Act
    const decision = decide(timeout, state(2, { failed: 2 }), DEADLINE);

    // Assess
    expect(decision).toMatchObject({ outcome: Outcome.TIMED_OUT, completedBy: 'deadline' });
  });
});

describe('failuresBeyondTolerance', () => {
  it.each([
    ['no failure', {}, { received: 3, failed: 0 }, false, undefined],
    [
      'one failure when none is tolerated',
      {},
      { received: 3, failed: 1 },
      false,
      '1 reply failed; the definition tolerates none',
    ],
    ['failures up to the count', { toleratedFailureCount: 2 }, { received: 3, failed: 2 }, false, undefined],
    [
      'one more than the count',
      { toleratedFailureCount: 2 },
      { received: 3, failed: 3 },
      false,
      '3 replies failed, more than the 2 tolerated',
    ],
    [
      'a share up to the percentage of expected',
      { toleratedFailurePercentage: 20 },
      { expected: 10, received: 3, failed: 2 },
      false,
      undefined,
    ],
    [
      'a share beyond the percentage of expected',
      { toleratedFailurePercentage: 20 },
      { expected: 10, received: 3, failed: 3 },
      false,
      '3 of 10 replies failed (30%)',
    ],
    [
      'a share of unknown expected, not yet final',
      { toleratedFailurePercentage: 20 },
      { received: 1, failed: 1 },
      false,
      undefined,
    ],
    [
      'a share of unknown expected, final',
      { toleratedFailurePercentage: 20 },
      { received: 4, failed: 1 },
      true,
      '1 of 4 replies failed (25%)',
    ],
    [
      'both, the count exceeded',
      { toleratedFailureCount: 1, toleratedFailurePercentage: 90 },
      { expected: 10, received: 2, failed: 2 },
      false,
      'more than the 1 tolerated',
    ],
    [
      'both, the percentage exceeded',
      { toleratedFailureCount: 9, toleratedFailurePercentage: 10 },
      { expected: 10, received: 2, failed: 2 },
      false,
      'more than the 10% tolerated',
    ],
  ])('%s', (_case, tolerance, current, final, reason) => {
    // Act
    const verdict = failuresBeyondTolerance(tolerance, current, final);

    // Assess
    if (reason === undefined) expect(verdict).toBeUndefined();
    else expect(verdict).toContain(reason);
  });
});

describe('failureOf', () => {
  it('reads the fanin-failure attribute as one line, and nothing without it', () => {
    expect(failureOf({ 'fanin-failure': '  bank\n down ' })).toBe('bank down');
    expect(failureOf({ 'fanin-failure': ' ' })).toBe('failed');
    expect(failureOf({ 'fanin-failure': 'x'.repeat(5000) })).toHaveLength(1024);
    expect(failureOf({ 'fanin-reply-id': '1' })).toBeUndefined();
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

describe('request parameters', () => {
  const sized = aDefinition({
    completion: { strategy: 'count', count: 3 },
    requestParameters: { count: { min: 1, max: 5 }, timeoutSeconds: { min: 10, max: 120 } },
  });

  it('within the bounds are taken as they are', () => {
    expect(requestOverrides(sized, { count: 5, timeoutSeconds: 10 })).toStrictEqual({
      parameters: { count: 5, timeoutSeconds: 10 },
    });
    expect(requestOverrides(sized, undefined)).toStrictEqual({ parameters: {} });
  });

  it.each([
    [{ count: 6 }, 'parameters.count is 6, outside the bounds definition "orders" sets (1 to 5)'],
    [{ count: 0 }, 'parameters.count is 0, outside the bounds'],
    [{ threshold: 1 }, 'definition "orders" does not let a request set parameters.threshold'],
    [{ expected: 3 }, 'parameters.expected is not a parameter a request can set'],
    [{ count: '3' }, 'parameters.count must be an integer (received "3")'],
    [[1], 'parameters must be an object'],
  ])('%j is refused: %s', (parameters, reason) => {
    expect(requestOverrides(sized, parameters)).toStrictEqual({ refusal: expect.stringContaining(reason) });
  });

  it('an expected count is checked against its bounds when the definition sets them', () => {
    // Prepare
    const bounded = aDefinition({
      fanOut: { type: 'none' },
      requestParameters: { expected: { min: 1, max: 10 } },
    });

    // Act & Assess
    expect(expectedOutsideBounds(bounded, 10)).toBeUndefined();
    expect(expectedOutsideBounds(bounded, 11)).toContain('expected is 11, outside the bounds');
    expect(expectedOutsideBounds(bounded, undefined)).toContain('expected is required');
    expect(expectedOutsideBounds(sized, 10_000)).toBeUndefined();
  });
});

describe('parseDefinition: completion rules', () => {
  const rejection = (input: Partial<DefinitionInput>) => {
    const error = thrownBy(() => parseDefinition({ name: 'x', completion: { strategy: 'all' }, ...input }));
    expect(error).toBeInstanceOf(InvalidDefinitionError);
    return (error as Error).message;
  };

  it.each([
    [
      'a predicate that does not parse',
      { completion: { strategy: 'predicate', expression: '$count(replies' } },
      'completion.expression: is not a valid JSONata expression',
    ],
    [
      'an any rule twice',
      {
        completion: {
          strategy: 'any',
          rules: [
            { rule: 'count', count: 2 },
            { rule: 'count', count: 3 },
          ],
        },
      },
      "completion.rules.1.rule: rule 'count' appears twice",
    ],
    [
      'all-arrived without an expected count',
      {
        mode: 'self-starting',
        correlation: { source: 'path', path: '$.k' },
        completion: { strategy: 'any', rules: [{ rule: 'all-arrived' }] },
      },
      "completion.rules.0.rule: 'all-arrived' needs an expected count",
    ],
    [
      'bounds whose min is above their max',
      { completion: { strategy: 'count', count: 2 }, requestParameters: { count: { min: 5, max: 2 } } },
      'requestParameters.count: min must be at most max',
    ],
    [
      'a count bound without a count',
      { requestParameters: { count: { min: 1, max: 2 } } },
      "requestParameters.count: completion strategy 'all' has no count for a request to set",
    ],
    [
      'a threshold bound without a threshold',
      { requestParameters: { threshold: { min: 1, max: 2 } } },
      'requestParameters.threshold: completion strategy',
    ],
    [
      'an expected bound on a splitter',
      {
        fanOut: { type: 'splitter', itemsPath: '$.items', target: 'q' },
        requestParameters: { expected: { min: 1, max: 2 } },
      },
      'requestParameters.expected: a splitter fan-out counts its own replies',
    ],
    [
      'a tolerated percentage above 100',
      { toleratedFailurePercentage: 101 },
      'toleratedFailurePercentage: Too big',
    ],
  ])('rejects %s, naming the field', (_case, input, message) => {
    expect(rejection(input as Partial<DefinitionInput>)).toContain(message);
  });

  it('accepts the any-of of every rule kind, failure tolerance and request bounds together', () => {
    expect(() =>
      parseDefinition({
        name: 'loan',
        fanOut: { type: 'none' },
        completion: anyOf.completion,
        toleratedFailureCount: 1,
        toleratedFailurePercentage: 25,
        requestParameters: {
          count: { min: 1, max: 5 },
          threshold: { min: 1, max: 5 },
          expected: { min: 1, max: 9 },
        },
      }),
    ).not.toThrow();
  });
});
