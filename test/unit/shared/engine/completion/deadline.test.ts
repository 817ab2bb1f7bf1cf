import { describe, expect, it } from 'vitest';
import { deadlineOf, decisionDueAt, openDueAt } from '../../../../../shared/engine/completion/deadline.ts';
import { effectiveParameters, parseDefinition } from '../../../../../shared/engine/definition.ts';
import { closeByOf } from '../../../../../shared/use-cases/aggregate-life.ts';

/**
 * `deadlineSettleSeconds` (docs/definitions.md): the deadline decides that long after the
 * deadline, so a reply sent before it whose handling crashed is still a member when SQS hands it
 * back; membership still ends at the deadline (openDueAt, late.ts onTimeReplies). The end-to-end
 * behaviour is pinned by test/integration/guarantees/deadline-crash-seal.test.ts.
 */
describe('the settle window after a deadline', () => {
  const base = { name: 'd', fanOut: { type: 'none' }, completion: { strategy: 'all' }, timeoutSeconds: 60 };

  it('moves when the deadline decides, not where membership ends, and never past the allowed life', () => {
    const params = { deadlineSettleSeconds: 200 };
    expect(decisionDueAt({ deadline: 60_000, closeBy: 900_000, params })).toBe(260_000);
    expect(openDueAt({ deadline: 60_000, closeBy: 900_000 })).toBe(60_000);
    expect(decisionDueAt({ deadline: 60_000, closeBy: 100_000, params })).toBe(100_000);
    expect(decisionDueAt({ deadline: 60_000, closeBy: 900_000 })).toBe(60_000);
  });

  it('is fixed at open with the parameters and keeps the allowed life until the decision (kills: settle not carried in the parameters)', () => {
    const definition = parseDefinition({ ...base, deadlineSettleSeconds: 200, maxOpenSeconds: 60 });
    expect(effectiveParameters(definition)).toMatchObject({ deadlineSettleSeconds: 200 });
    expect(effectiveParameters(parseDefinition(base))).not.toHaveProperty('deadlineSettleSeconds');
    expect(closeByOf(definition, 0, 60_000)).toBe(260_000);
  });

  it('is refused with an inactivity timeout, whose deadline moves with the replies', () => {
    expect(() =>
      parseDefinition({ ...base, inactivityTimeoutSeconds: 10, deadlineSettleSeconds: 200 }),
    ).toThrow(/deadlineSettleSeconds/);
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
