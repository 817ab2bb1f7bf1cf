import { describe, expect, it } from 'vitest';
import {
  type CompletionEvent,
  type Decision,
  deadlineOf,
  decide,
  meetsThreshold,
  scoreOf,
} from '../../../../shared/engine/completion.ts';
import { Outcome } from '../../../../shared/engine/constants.ts';
import type { Definition } from '../../../../shared/engine/definition.ts';
import { aDefinition, aMessage, anOverrideDefinition, aState } from './factories.ts';

const WAIT: Decision = { complete: false };
const COMPLETED = { complete: true, outcome: Outcome.COMPLETED };
const TIMED_OUT = { complete: true, outcome: Outcome.TIMED_OUT };
const PURGED = { complete: true, outcome: Outcome.PURGED };

const REPLY: CompletionEvent = { type: 'reply' };
const DEADLINE: CompletionEvent = { type: 'deadline' };
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

describe('meetsThreshold', () => {
  it.each([
    ['below', 2, 3, true],
    ['below', 3, 3, true],
    ['below', 4, 3, false],
    ['above', 4, 3, true],
    ['above', 3, 3, true],
    ['above', 2, 3, false],
  ] as const)('%s: score %d against threshold %d is %s', (direction, score, threshold, expected) => {
    // Prepare
    // (values from the table)

    // Act
    const met = meetsThreshold(direction, score, threshold);

    // Assess
    expect(met).toBe(expected);
  });
});

describe('deadlineOf', () => {
  it('is the opening time plus the timeout, in epoch milliseconds', () => {
    // Prepare
    const openedAt = Date.UTC(2024, 0, 1);

    // Act
    const deadline = deadlineOf({ timeoutSeconds: 90 }, openedAt);

    // Assess
    expect(deadline).toBe(openedAt + 90_000);
  });

  it('is undefined without a timeout', () => {
    // Prepare
    const params = { count: 3 };

    // Act
    const deadline = deadlineOf(params, 1_000);

    // Assess
    expect(deadline).toBeUndefined();
  });
});

describe('scoreOf', () => {
  const loan = anOverrideDefinition();

  it.each([
    ['a number', { rate: 2.75 }, 2.75],
    ['zero', { rate: 0 }, 0],
    ['a negative number', { rate: -1.5 }, -1.5],
    ['a numeric string', { rate: '2.75' }, 2.75],
    ['a numeric string with spaces', { rate: ' 4 ' }, 4],
    ['a non-numeric string', { rate: 'low' }, undefined],
    ['an empty string', { rate: '' }, undefined],
    ['a blank string', { rate: '   ' }, undefined],
    ['a boolean', { rate: true }, undefined],
    ['null', { rate: null }, undefined],
    ['an object', { rate: { value: 3 } }, undefined],
    ['nothing', {}, undefined],
  ])('reads %s', async (_case, body, expected) => {
    // Prepare
    const message = aMessage(body);

    // Act
    const score = await scoreOf(loan, message);

    // Assess
    expect(score).toBe(expected);
  });

  it('reads a score from a JSONata expression', async () => {
    // Prepare
    const definition = anOverrideDefinition({
      score: { source: 'jsonata', expression: 'body.quote.rate + body.quote.fees' },
    });

    // Act
    const score = await scoreOf(definition, aMessage({ quote: { rate: 2.5, fees: 0.25 } }));

    // Assess
    expect(score).toBe(2.75);
  });

  it('reads a score from an attribute', async () => {
    // Prepare
    const definition = anOverrideDefinition({ score: { source: 'attribute', name: 'score' } });

    // Act
    const score = await scoreOf(definition, aMessage({}, { score: '3.5' }));

    // Assess
    expect(score).toBe(3.5);
  });

  it('is undefined under a definition that is not override', async () => {
    // Prepare
    const message = aMessage({ rate: 2.75 });

    // Act
    const score = await scoreOf(timeout, message);

    // Assess
    expect(score).toBeUndefined();
  });
});
