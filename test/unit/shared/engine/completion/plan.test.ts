import { describe, expect, it } from 'vitest';
import type { CompletionEvent, Decision } from '../../../../../shared/engine/completion/decision.ts';
import {
  completionThreshold,
  completionTrigger,
  countRuleOf,
  decide,
  LARGE_FAN_OUT,
  needsExpected,
  predicateOf,
  tallyOf,
  thresholdRuleOf,
} from '../../../../../shared/engine/completion/plan.ts';
import type { ReplyTally } from '../../../../../shared/engine/completion/tally.ts';
import { Outcome } from '../../../../../shared/engine/constants.ts';
import type { Definition, DefinitionInput } from '../../../../../shared/engine/definition.ts';
import { aDefinition, anOverrideDefinition, aState } from '../factories.ts';

const WAIT: Decision = { complete: false };
const COMPLETED = { complete: true, outcome: Outcome.COMPLETED };
const TIMED_OUT = { complete: true, outcome: Outcome.TIMED_OUT };
const PURGED = { complete: true, outcome: Outcome.PURGED };

const REPLY: CompletionEvent = { type: 'reply' };
const DEADLINE: CompletionEvent = { type: 'deadline' };
const tallied = (received: number, extra: Partial<ReplyTally> = {}): ReplyTally => ({
  received,
  params: {},
  ...extra,
});
const EXTERNAL: CompletionEvent = { type: 'external' };
const PURGE: CompletionEvent = { type: 'purge' };
const scored = (score: number): CompletionEvent => ({ type: 'reply', score });

const all = aDefinition({ completion: { strategy: 'all' }, timeoutSeconds: 60 });
const count = aDefinition({ completion: { strategy: 'count', count: 3 }, timeoutSeconds: 60 });
const first = aDefinition({ completion: { strategy: 'first' }, timeoutSeconds: 60 });
const timeout = aDefinition({ completion: { strategy: 'timeout' }, timeoutSeconds: 60 });
const timeoutToTheEnd = aDefinition({
  completion: { strategy: 'timeout', completeWhenAllArrived: false },
  timeoutSeconds: 60,
});
const external = aDefinition({ completion: { strategy: 'external' }, timeoutSeconds: 3600 });

describe('decide: all', () => {
  it('all: waits while an expected reply is missing', () => {
    // Prepare
    const state = aState(2, 3);

    // Act
    const decision = decide(all, state, REPLY);

    // Assess
    expect(decision).toMatchObject(WAIT);
  });

  it('all: completes when the last expected reply arrives', () => {
    // Prepare
    const state = aState(3, 3);

    // Act
    const decision = decide(all, state, REPLY);

    // Assess
    expect(decision).toMatchObject(COMPLETED);
  });

  it('all: times out at the deadline even when all but one reply arrived', () => {
    // Prepare
    const state = aState(2, 3);

    // Act
    const decision = decide(all, state, DEADLINE);

    // Assess
    expect(decision).toMatchObject(TIMED_OUT);
  });

  it('all: keeps waiting when the expected count is unknown', () => {
    // Prepare
    const state = aState(50);

    // Act
    const decision = decide(all, state, REPLY);

    // Assess
    expect(decision).toMatchObject(WAIT);
  });
});

describe('decide: count', () => {
  it.each([
    [2, WAIT],
    [3, COMPLETED],
    [4, COMPLETED],
  ])('count: with 3 required and %i received decides %o', (received, expected) => {
    // Prepare
    const state = aState(received, undefined, { count: 3 });

    // Act
    const decision = decide(count, state, REPLY);

    // Assess
    expect(decision).toMatchObject(expected);
  });

  it("count: uses the definition's count when the parameters carry none", () => {
    // Prepare
    const state = aState(3);

    // Act
    const decision = decide(count, state, REPLY);

    // Assess
    expect(decision).toMatchObject(COMPLETED);
  });

  it.each([
    ['a higher runtime count waits past the definition count', 5, 3, WAIT],
    ['a higher runtime count completes when reached', 5, 5, COMPLETED],
    ['a lower runtime count completes before the definition count', 2, 2, COMPLETED],
  ])('count: %s', (_case, runtimeCount, received, expected) => {
    // Prepare
    const state = aState(received, undefined, { count: runtimeCount });

    // Act
    const decision = decide(count, state, REPLY);

    // Assess
    expect(decision).toMatchObject(expected);
  });

  it('count: completes when every expected reply is in although fewer than N are expected', () => {
    // Prepare
    const state = aState(2, 2, { count: 3 });

    // Act
    const decision = decide(count, state, REPLY);

    // Assess
    expect(decision).toMatchObject(COMPLETED);
  });

  it('count: times out at the deadline short of N', () => {
    // Prepare
    const state = aState(2, undefined, { count: 3 });

    // Act
    const decision = decide(count, state, DEADLINE);

    // Assess
    expect(decision).toMatchObject(TIMED_OUT);
  });
});

describe('decide: first', () => {
  it('first: the first reply completes the aggregate', () => {
    // Prepare
    const state = aState(1, 5);

    // Act
    const decision = decide(first, state, REPLY);

    // Assess
    expect(decision).toMatchObject(COMPLETED);
  });

  it('first: times out at the deadline with no reply', () => {
    // Prepare
    const state = aState(0, 5);

    // Act
    const decision = decide(first, state, DEADLINE);

    // Assess
    expect(decision).toMatchObject(TIMED_OUT);
  });
});

describe('decide: timeout', () => {
  it('timeout: waits on replies while some are missing', () => {
    // Prepare
    const state = aState(4, 5);

    // Act
    const decision = decide(timeout, state, REPLY);

    // Assess
    expect(decision).toMatchObject(WAIT);
  });

  it('timeout: waits on replies when the expected count is unknown', () => {
    // Prepare
    const state = aState(1000);

    // Act
    const decision = decide(timeout, state, REPLY);

    // Assess
    expect(decision).toMatchObject(WAIT);
  });

  it('timeout: completes early when every expected reply arrived (completeWhenAllArrived true)', () => {
    // Prepare
    const state = aState(5, 5);

    // Act
    const decision = decide(timeout, state, REPLY);

    // Assess
    expect(decision).toMatchObject(COMPLETED);
  });

  it('timeout: waits for the deadline even when all arrived (completeWhenAllArrived false)', () => {
    // Prepare
    const state = aState(5, 5);

    // Act
    const decision = decide(timeoutToTheEnd, state, REPLY);

    // Assess
    expect(decision).toMatchObject(WAIT);
  });

  it.each([
    ['completes with one reply', timeout, 1, COMPLETED],
    ['completes with some replies', timeout, 3, COMPLETED],
    ['times out with no reply', timeout, 0, TIMED_OUT],
    ['completes with replies (completeWhenAllArrived false)', timeoutToTheEnd, 5, COMPLETED],
    ['times out with no reply (completeWhenAllArrived false)', timeoutToTheEnd, 0, TIMED_OUT],
  ])('timeout: at the deadline %s', (_case, definition, received, expected) => {
    // Prepare
    const state = aState(received, 5);

    // Act
    const decision = decide(definition, state, DEADLINE);

    // Assess
    expect(decision).toMatchObject(expected);
  });
});

describe('decide: override', () => {
  const below = anOverrideDefinition({ threshold: 5, direction: 'below' });
  const above = anOverrideDefinition({ threshold: 5, direction: 'above' });

  it.each([
    ['below', below, 4, COMPLETED],
    ['below', below, 5, COMPLETED],
    ['below', below, 5.0001, WAIT],
    ['below', below, -10, COMPLETED],
    ['above', above, 6, COMPLETED],
    ['above', above, 5, COMPLETED],
    ['above', above, 4.9999, WAIT],
  ])(
    'override: direction %s, threshold 5, score %d decides %o',
    (_direction, definition, score, expected) => {
      // Prepare
      const state = aState(1, 4, { threshold: 5 });

      // Act
      const decision = decide(definition, state, scored(score));

      // Assess
      expect(decision).toMatchObject(expected);
    },
  );

  it("override: a score exactly at the threshold completes (the seed's 'reaches the threshold')", () => {
    // Prepare
    const loan = anOverrideDefinition({ threshold: 3.25, direction: 'below' });
    const state = aState(1, 4, { threshold: 3.25 });

    // Act
    const decision = decide(loan, state, scored(3.25));

    // Assess
    expect(decision).toMatchObject(COMPLETED);
  });

  it.each([
    ["a stricter runtime threshold makes a score that meets the definition's wait", 3, 4, WAIT],
    ['a stricter runtime threshold completes on a score that meets it', 3, 3, COMPLETED],
    ["a looser runtime threshold completes on a score that misses the definition's", 7, 6, COMPLETED],
  ])('override: %s', (_case, runtimeThreshold, score, expected) => {
    // Prepare
    const state = aState(1, 4, { threshold: runtimeThreshold });

    // Act
    const decision = decide(below, state, scored(score));

    // Assess
    expect(decision).toMatchObject(expected);
  });

  it("override: uses the definition's threshold when the parameters carry none", () => {
    // Prepare
    const state = aState(1, 4);

    // Act
    const decision = decide(below, state, scored(5));

    // Assess
    expect(decision).toMatchObject(COMPLETED);
  });

  it('override: a reply without a score waits', () => {
    // Prepare
    const state = aState(1, 4, { threshold: 5 });

    // Act
    const decision = decide(below, state, REPLY);

    // Assess
    expect(decision).toMatchObject(WAIT);
  });

  it('override: completes when every expected reply arrived without a winning score', () => {
    // Prepare
    const state = aState(4, 4, { threshold: 5 });

    // Act
    const decision = decide(below, state, scored(9));

    // Assess
    expect(decision).toMatchObject(COMPLETED);
  });

  it('override: waits when every reply arrived but completeWhenAllArrived is false', () => {
    // Prepare
    const definition = anOverrideDefinition({ threshold: 5, completeWhenAllArrived: false });
    const state = aState(4, 4, { threshold: 5 });

    // Act
    const decision = decide(definition, state, scored(9));

    // Assess
    expect(decision).toMatchObject(WAIT);
  });

  it('override: a winning score still completes when completeWhenAllArrived is false', () => {
    // Prepare
    const definition = anOverrideDefinition({ threshold: 5, completeWhenAllArrived: false });
    const state = aState(2, 4, { threshold: 5 });

    // Act
    const decision = decide(definition, state, scored(1));

    // Assess
    expect(decision).toMatchObject(COMPLETED);
  });

  it.each([
    ['completes with replies', 2, COMPLETED],
    ['times out without replies', 0, TIMED_OUT],
  ])('override: at the deadline %s', (_case, received, expected) => {
    // Prepare
    const state = aState(received, 4, { threshold: 5 });

    // Act
    const decision = decide(below, state, DEADLINE);

    // Assess
    expect(decision).toMatchObject(expected);
  });
});

describe('decide: external', () => {
  it.each([
    ['the first reply', 1],
    ['every expected reply', 3],
    ['more replies than expected', 10],
  ])('external: %s does not complete', (_case, received) => {
    // Prepare
    const state = aState(received, 3);

    // Act
    const decision = decide(external, state, REPLY);

    // Assess
    expect(decision).toMatchObject(WAIT);
  });

  it('external: the external event completes the aggregate', () => {
    // Prepare
    const state = aState(2, 3);

    // Act
    const decision = decide(external, state, EXTERNAL);

    // Assess
    expect(decision).toMatchObject(COMPLETED);
  });

  it('external: the deadline times it out, whatever arrived', () => {
    // Prepare
    const state = aState(3, 3);

    // Act
    const decision = decide(external, state, DEADLINE);

    // Assess
    expect(decision).toMatchObject(TIMED_OUT);
  });
});

describe('decide: every strategy', () => {
  const strategies: [string, Definition][] = [
    ['all', all],
    ['count', count],
    ['first', first],
    ['timeout', timeout],
    ['override', anOverrideDefinition()],
    ['external', external],
  ];

  it.each(strategies)('%s: a purge ends the aggregate as purged', (_strategy, definition) => {
    // Prepare
    const state = aState(2, 3);

    // Act
    const decision = decide(definition, state, PURGE);

    // Assess
    expect(decision).toMatchObject(PURGED);
  });

  it.each(strategies)('%s: an external event completes the aggregate', (_strategy, definition) => {
    // Prepare
    const state = aState(0, 3);

    // Act
    const decision = decide(definition, state, EXTERNAL);

    // Assess
    expect(decision).toMatchObject(COMPLETED);
  });
});

describe('decide: completedBy for every way an aggregate ends', () => {
  it.each([
    ['all, the last expected reply', { strategy: 'all' }, tallied(3, { expected: 3 }), REPLY, 'all-arrived'],
    ['count, the Nth reply', { strategy: 'count', count: 2 }, tallied(2, { expected: 5 }), REPLY, 'count'],
    [
      'count, every expected reply when fewer than N',
      { strategy: 'count', count: 9 },
      tallied(2, { expected: 2 }),
      REPLY,
      'all-arrived',
    ],
    ['first, the first reply', { strategy: 'first' }, tallied(1), REPLY, 'first'],
    [
      'timeout, every expected reply',
      { strategy: 'timeout' },
      tallied(2, { expected: 2 }),
      REPLY,
      'all-arrived',
    ],
    ['timeout, the deadline', { strategy: 'timeout' }, tallied(1), DEADLINE, 'deadline'],
    ['all, the deadline', { strategy: 'all' }, tallied(1, { expected: 2 }), DEADLINE, 'deadline'],
    ['external, a complete command', { strategy: 'external' }, tallied(0), { type: 'external' }, 'external'],
    ['all, a purge', { strategy: 'all' }, tallied(0), { type: 'purge' }, 'purge'],
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
    const decision = decide(definition, tallied(1, { expected: 4 }), { type: 'reply', score: 3 });

    // Assess
    expect(decision).toMatchObject({ outcome: Outcome.COMPLETED, completedBy: 'threshold' });
  });
});

describe('decide: failed replies', () => {
  const tolerant = aDefinition({ completion: { strategy: 'all' }, toleratedFailureCount: 1 });

  it('count toward every expected reply, so the aggregate completes with them in', () => {
    expect(decide(tolerant, tallied(3, { expected: 3, failed: 1 }), REPLY)).toMatchObject({
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
      decide(count, tallied(2, { expected: 9, failed: 1 }), REPLY),
      decide(first, tallied(1, { failed: 1 }), REPLY),
    ];

    // Assess
    expect(decisions).toStrictEqual([{ complete: false }, { complete: false }]);
  });

  it('beyond the tolerance end the aggregate failed at once, before any rule, with the reason', () => {
    expect(decide(tolerant, tallied(2, { expected: 5, failed: 2 }), REPLY)).toStrictEqual({
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
    const decision = decide(timeout, tallied(2, { failed: 2 }), DEADLINE);

    // Assess
    expect(decision).toMatchObject({ outcome: Outcome.TIMED_OUT, completedBy: 'deadline' });
  });
});

describe('the plan: a predicate asked for before the decision', () => {
  const predicate = aDefinition({ completion: { strategy: 'predicate', expression: 'true' } });

  it('asks for its predicate when the caller has not evaluated it', () => {
    expect(decide(predicate, tallied(1, { predicate: 'unevaluated' }), REPLY)).toStrictEqual({
      complete: false,
      evaluate: 'true',
    });
  });

  it('does not ask when failures beyond the tolerance already end the aggregate', () => {
    expect(decide(predicate, tallied(2, { failed: 1, predicate: 'unevaluated' }), REPLY)).toStrictEqual({
      complete: true,
      outcome: Outcome.FAILED,
      completedBy: 'failures',
      reason: '1 reply failed; the definition tolerates none',
    });
  });

  it('asks nothing of a definition without a predicate, nor at the deadline', () => {
    expect(decide(count, tallied(1, { expected: 5, predicate: 'unevaluated' }), REPLY)).toStrictEqual({
      complete: false,
    });
    expect(decide(predicate, tallied(1, { predicate: 'unevaluated' }), DEADLINE)).toMatchObject({
      completedBy: 'deadline',
    });
  });

  it('a predicate that failed ends the aggregate failed, reported as the predicate, with its error', () => {
    expect(
      decide(predicate, tallied(1, { predicate: { error: 'timed out after 250 ms' } }), REPLY),
    ).toStrictEqual({
      complete: true,
      outcome: Outcome.FAILED,
      completedBy: 'predicate',
      reason: 'completion predicate: timed out after 250 ms',
    });
  });

  it('a predicate that failed is judged against the failures so far, not the closing set', () => {
    // Prepare: a tolerated share of the expected replies is unknown without an expected count
    const tolerant = aDefinition({
      mode: 'self-starting',
      correlation: { source: 'path', path: '$.k' },
      completion: { strategy: 'predicate', expression: 'true' },
      toleratedFailurePercentage: 10,
    });

    // Act
    const decision = decide(tolerant, tallied(2, { failed: 1, predicate: { error: 'boom' } }), REPLY);

    // Assess
    expect(decision).toMatchObject({ outcome: Outcome.FAILED, completedBy: 'predicate' });
  });
});

describe('the plan: failures judged on the set an aggregate closes with', () => {
  const shareOnly = aDefinition({
    mode: 'self-starting',
    correlation: { source: 'path', path: '$.k' },
    completion: { strategy: 'count', count: 4 },
    toleratedFailurePercentage: 25,
  });

  it('waits while no expected count makes a share of the failures known', () => {
    expect(decide(shareOnly, tallied(3, { failed: 2 }), REPLY)).toStrictEqual({ complete: false });
  });

  it('fails the closing set whose share of failures is beyond the tolerance', () => {
    expect(decide(shareOnly, tallied(6, { failed: 2 }), REPLY)).toStrictEqual({
      complete: true,
      outcome: Outcome.FAILED,
      completedBy: 'failures',
      reason: '2 of 6 replies failed (33.33%), more than the 25% tolerated (toleratedFailurePercentage)',
    });
  });

  it('completes a closing set within it', () => {
    expect(decide(shareOnly, tallied(8, { failed: 2 }), REPLY)).toMatchObject({ completedBy: 'count' });
  });
});

describe('tallyOf', () => {
  const header = { definition: 'orders', expected: 4, params: {} };
  const replies = [
    { score: 3.2 },
    { score: 2.9 },
    { failure: 'down' },
    { score: 1.0, late: true },
    { score: 0.5, definition: 'other' },
  ];

  it('counts the valid replies and their failures, with the expected count and parameters', () => {
    expect(tallyOf(all, header, replies).tally).toStrictEqual({
      received: 3,
      failed: 1,
      params: {},
      expected: 4,
    });
  });

  it('takes the best score of the valid replies in the threshold’s direction', () => {
    expect(tallyOf(anOverrideDefinition(), header, replies).best).toBe(2.9);
    expect(tallyOf(anOverrideDefinition({ direction: 'above' }), header, replies).best).toBe(3.2);
  });

  it('has no best score without a score threshold', () => {
    expect(tallyOf(all, header, replies).best).toBeUndefined();
  });
});

describe('completionTrigger: when a batch reads the whole set', () => {
  const large = LARGE_FAN_OUT + 1;
  const splitter = { fanOut: { type: 'splitter', itemsPath: '$.items', target: 'q' } } as const;
  const at = (expected: number | undefined, count?: number) => ({
    ...(expected !== undefined ? { expected } : {}),
    params: count !== undefined ? { count } : {},
  });

  it.each([
    ['external: never', { completion: { strategy: 'external' } }, at(large), 'never'],
    [
      'timeout to the end: never',
      { completion: { strategy: 'timeout', completeWhenAllArrived: false }, timeoutSeconds: 60 },
      at(large),
      'never',
    ],
    [
      'all, a large splitter: by blocks',
      { ...splitter, completion: { strategy: 'all' } },
      at(large),
      'blocks',
    ],
    [
      'timeout, a large splitter: by blocks',
      { ...splitter, completion: { strategy: 'timeout' }, timeoutSeconds: 60 },
      at(large),
      'blocks',
    ],
    ['all, large without fan-out: by the counter', { completion: { strategy: 'all' } }, at(large), 'counter'],
    [
      'count, large: by the counter',
      { ...splitter, completion: { strategy: 'count', count: large } },
      at(large + 10),
      'counter',
    ],
    [
      'count, a small N of a large fan-out: every batch',
      { ...splitter, completion: { strategy: 'count', count: 5 } },
      at(large),
      'read-all',
    ],
    [
      'all, small: every batch',
      { ...splitter, completion: { strategy: 'all' } },
      at(LARGE_FAN_OUT),
      'read-all',
    ],
    ['first, large: every batch', { ...splitter, completion: { strategy: 'first' } }, at(large), 'read-all'],
    [
      'any of all-arrived, large: every batch',
      { ...splitter, completion: { strategy: 'any', rules: [{ rule: 'all-arrived' }] } },
      at(large),
      'read-all',
    ],
  ] as const)('%s', (_case, input, header, trigger) => {
    expect(completionTrigger(aDefinition(input as Partial<DefinitionInput>), header)).toBe(trigger);
  });

  it('completionThreshold: the count (the request’s first) capped by the expected count, else the expected count', () => {
    const byCount = aDefinition({ completion: { strategy: 'count', count: 300 } });
    expect(completionThreshold(byCount, at(1000))).toBe(300);
    expect(completionThreshold(byCount, at(1000, 200))).toBe(200);
    expect(completionThreshold(byCount, at(100))).toBe(100);
    expect(completionThreshold(byCount, at(undefined))).toBe(300);
    expect(completionThreshold(all, at(700))).toBe(700);
    expect(completionThreshold(all, at(undefined))).toBe(0);
  });
});

describe('the plan: what a completion declares', () => {
  it('only all needs an expected count from a request without fan-out', () => {
    expect(needsExpected(all.completion)).toBe(true);
    expect(needsExpected(count.completion)).toBe(false);
    expect(needsExpected(timeout.completion)).toBe(false);
  });

  it('says its count, threshold and predicate where it has them', () => {
    expect(countRuleOf(count.completion)).toBe(3);
    expect(countRuleOf(all.completion)).toBeUndefined();
    expect(thresholdRuleOf(anOverrideDefinition().completion)).toMatchObject({ threshold: 3 });
    expect(thresholdRuleOf(first.completion)).toBeUndefined();
    expect(predicateOf({ strategy: 'predicate', expression: 'true' })).toBe('true');
    expect(predicateOf(external.completion)).toBeUndefined();
  });
});

describe('decide: recipients settled by their own deadlines', () => {
  const settledTally = (received: number, failed: number, timedOut: number): ReplyTally =>
    tallied(received, { expected: received + timedOut, failed, timedOut });
  const override = anOverrideDefinition();

  it.each([
    ['all', all],
    ['count', count],
    ['timeout', timeout],
    ['override', override],
  ])(
    '%s: every recipient settled with a success completes as all-settled, with what arrived',
    (_name, definition) => {
      expect(decide(definition, settledTally(1, 0, 2), REPLY)).toMatchObject({
        ...COMPLETED,
        completedBy: 'all-settled',
      });
    },
  );

  it.each([
    ['all', all],
    ['count', count],
    ['timeout', timeout],
    ['override', override],
  ])('%s: every recipient settled with no success times out, as its deadline would', (_name, definition) => {
    // (mutant killed: all settled with no success completes with nothing)
    expect(decide(definition, settledTally(0, 0, 3), REPLY)).toMatchObject({
      ...TIMED_OUT,
      completedBy: 'responders-settled',
    });
  });

  it('all: every recipient settled with only tolerated failures times out too', () => {
    const tolerant = aDefinition({
      completion: { strategy: 'all' },
      timeoutSeconds: 60,
      toleratedFailureCount: 1,
    });
    expect(decide(tolerant, settledTally(1, 1, 2), REPLY)).toMatchObject({
      ...TIMED_OUT,
      completedBy: 'responders-settled',
    });
  });
});
