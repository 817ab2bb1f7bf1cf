import { describe, expect, it } from 'vitest';
import { AggregateStatus, Classification, Outcome } from '../../../../shared/engine/constants.ts';
import {
  classify,
  type LifecycleEvent,
  type LifecycleState,
  requiredStatus,
  type StoredAggregate,
  transition,
} from '../../../../shared/engine/lifecycle.ts';
import { IllegalTransitionError } from '../../../../shared/errors.ts';
import { thrownBy } from './factories.ts';

const open: StoredAggregate = { status: AggregateStatus.OPEN };
const completing: StoredAggregate = { status: AggregateStatus.COMPLETING };
const closed: StoredAggregate = { status: AggregateStatus.CLOSED };

describe('classify', () => {
  it.each<[string, StoredAggregate | undefined, boolean, Classification]>([
    ['no aggregate: unknown', undefined, false, Classification.UNKNOWN],
    ['an open aggregate: accepted', open, false, Classification.ACCEPTED],
    ['a completing aggregate: late', completing, false, Classification.LATE],
    ['a closed aggregate (tombstone): late', closed, false, Classification.LATE],
    ['a reply already recorded on an open aggregate: duplicate', open, true, Classification.DUPLICATE],
    [
      'a reply already recorded on a completing aggregate: duplicate',
      completing,
      true,
      Classification.DUPLICATE,
    ],
    [
      'a reply already recorded on a closed aggregate: duplicate, not late',
      closed,
      true,
      Classification.DUPLICATE,
    ],
    [
      'a reply already recorded with no aggregate left: duplicate, not unknown',
      undefined,
      true,
      Classification.DUPLICATE,
    ],
  ])('%s', (_case, aggregate, alreadyRecorded, expected) => {
    // Prepare
    // (stored state from the table)

    // Act
    const classification = classify(aggregate, alreadyRecorded);

    // Assess
    expect(classification).toBe(expected);
  });
});

describe('transition', () => {
  it('open -> completing keeps the outcome that was won', () => {
    // Prepare
    const state: LifecycleState = { status: AggregateStatus.OPEN };

    // Act
    const next = transition(state, { type: 'begin-completion', outcome: Outcome.TIMED_OUT });

    // Assess
    expect(next).toStrictEqual({ status: AggregateStatus.COMPLETING, outcome: Outcome.TIMED_OUT });
  });

  it.each(Object.values(Outcome))('open -> completing -> closed as %s', (outcome) => {
    // Prepare
    const state: LifecycleState = { status: AggregateStatus.OPEN };

    // Act
    const completingState = transition(state, { type: 'begin-completion', outcome });
    const closedState = transition(completingState, { type: 'close', outcome });

    // Assess
    expect(closedState).toStrictEqual({ status: AggregateStatus.CLOSED, outcome });
  });

  it('does not change the state it is given', () => {
    // Prepare
    const state: LifecycleState = { status: AggregateStatus.OPEN };

    // Act
    transition(state, { type: 'begin-completion', outcome: Outcome.COMPLETED });

    // Assess
    expect(state).toStrictEqual({ status: AggregateStatus.OPEN });
  });

  it.each<[string, LifecycleState, LifecycleEvent, RegExp]>([
    [
      'completing twice',
      { status: AggregateStatus.COMPLETING, outcome: Outcome.COMPLETED },
      { type: 'begin-completion', outcome: Outcome.COMPLETED },
      /cannot begin completion of a completing aggregate/,
    ],
    [
      'completing a closed aggregate (it never reopens)',
      { status: AggregateStatus.CLOSED, outcome: Outcome.COMPLETED },
      { type: 'begin-completion', outcome: Outcome.TIMED_OUT },
      /cannot begin completion of a closed aggregate/,
    ],
    [
      'closing an open aggregate',
      { status: AggregateStatus.OPEN },
      { type: 'close', outcome: Outcome.COMPLETED },
      /cannot close an? open aggregate/,
    ],
    [
      'closing twice',
      { status: AggregateStatus.CLOSED, outcome: Outcome.COMPLETED },
      { type: 'close', outcome: Outcome.COMPLETED },
      /cannot close a closed aggregate/,
    ],
    [
      'closing with another outcome than the one won',
      { status: AggregateStatus.COMPLETING, outcome: Outcome.COMPLETED },
      { type: 'close', outcome: Outcome.TIMED_OUT },
      /cannot close as timed-out an aggregate that is completing as completed/,
    ],
  ])('rejects %s with an IllegalTransitionError', (_case, state, event, message) => {
    // Prepare
    // (state and event from the table)

    // Act
    const error = thrownBy(() => transition(state, event));

    // Assess
    expect(error).toBeInstanceOf(IllegalTransitionError);
    expect((error as Error).message).toMatch(message);
  });
});

describe('requiredStatus', () => {
  it.each<[LifecycleEvent['type'], AggregateStatus]>([
    ['begin-completion', AggregateStatus.OPEN],
    ['close', AggregateStatus.COMPLETING],
  ])('%s must find the aggregate %s', (type, expected) => {
    // Prepare
    const event: LifecycleEvent = { type, outcome: Outcome.COMPLETED };

    // Act
    const status = requiredStatus(event);

    // Assess
    expect(status).toBe(expected);
  });
});
