import { describe, expect, it } from 'vitest';
import { effectiveParameters, parseDefinition } from '../../../../shared/engine/definition.ts';
import { inactivityDeadline, lastActivity, openingDeadline } from '../../../../shared/engine/inactivity.ts';
import { InvalidDefinitionError } from '../../../../shared/errors.ts';
import { aDefinition, thrownBy } from './factories.ts';

/**
 * The inactivity timeout's pure parts: the deadline in force at the opening and after each reply,
 * and how its definition fields are validated.
 */

const OPENED = 1_000_000;

/** The message an invalid definition is rejected with. */
function rejection(input: Record<string, unknown>): string {
  const error = thrownBy(() =>
    parseDefinition({ name: 'timing', completion: { strategy: 'all' }, ...input }),
  );
  expect(error).toBeInstanceOf(InvalidDefinitionError);
  return (error as Error).message;
}

describe('openingDeadline', () => {
  it('is the inactivity timeout after the opening when it comes before the absolute deadline', () => {
    // Act
    const deadline = openingDeadline({ timeoutSeconds: 60, inactivityTimeoutSeconds: 10 }, OPENED);

    // Assess
    expect(deadline).toBe(OPENED + 10_000);
  });

  it('is the absolute deadline without an inactivity timeout', () => {
    expect(openingDeadline({ timeoutSeconds: 60 }, OPENED)).toBe(OPENED + 60_000);
  });

  it('is the inactivity timeout alone when there is no absolute deadline', () => {
    expect(openingDeadline({ inactivityTimeoutSeconds: 5 }, OPENED)).toBe(OPENED + 5_000);
  });

  it('is undefined when the aggregate has neither', () => {
    expect(openingDeadline({}, OPENED)).toBeUndefined();
  });
});

describe('lastActivity', () => {
  it('is the latest reply recorded (mutant killed: the first reply instead of the latest)', () => {
    // Act
    const last = lastActivity(OPENED, [{ receivedAt: OPENED + 3_000 }, { receivedAt: OPENED + 7_000 }]);

    // Assess
    expect(last).toBe(OPENED + 7_000);
  });

  it('is the opening when nothing was recorded', () => {
    expect(lastActivity(OPENED, [])).toBe(OPENED);
  });
});

describe('inactivityDeadline', () => {
  const header = {
    params: { timeoutSeconds: 60, inactivityTimeoutSeconds: 10 },
    openedAt: OPENED,
    closeBy: OPENED + 3_600_000,
  };

  it('moves with the last recorded reply', () => {
    // Act
    const due = inactivityDeadline(header, [{ receivedAt: OPENED + 8_000 }]);

    // Assess
    expect(due).toBe(OPENED + 18_000);
  });

  it('never goes past the absolute deadline: whichever comes first', () => {
    // Act
    const due = inactivityDeadline(header, [{ receivedAt: OPENED + 55_000 }]);

    // Assess (mutant killed: the idle deadline alone, past the absolute one)
    expect(due).toBe(OPENED + 60_000);
  });

  it('never goes past the end of the allowed life', () => {
    // Act
    const due = inactivityDeadline(
      { params: { inactivityTimeoutSeconds: 10 }, openedAt: OPENED, closeBy: OPENED + 15_000 },
      [{ receivedAt: OPENED + 9_000 }],
    );

    // Assess
    expect(due).toBe(OPENED + 15_000);
  });

  it('is undefined for an aggregate without an inactivity timeout (its deadline never moves)', () => {
    expect(inactivityDeadline({ ...header, params: { timeoutSeconds: 60 } }, [])).toBeUndefined();
  });
});

describe('definition: timing fields', () => {
  it('the inactivity timeout is fixed at open with the other parameters', () => {
    // Act
    const params = effectiveParameters(aDefinition({ timeoutSeconds: 60, inactivityTimeoutSeconds: 10 }));

    // Assess
    expect(params).toEqual({ timeoutSeconds: 60, inactivityTimeoutSeconds: 10 });
  });

  it("an inactivity timeout alone is enough for strategy 'timeout'", () => {
    // Act
    const definition = parseDefinition({
      name: 'quiet',
      completion: { strategy: 'timeout' },
      inactivityTimeoutSeconds: 30,
    });

    // Assess
    expect(definition.inactivityTimeoutSeconds).toBe(30);
  });

  it("strategy 'timeout' without any timeout names both fields", () => {
    expect(rejection({ completion: { strategy: 'timeout' } })).toContain(
      "timeoutSeconds: is required by completion strategy 'timeout' (or inactivityTimeoutSeconds)",
    );
  });

  it('an inactivity timeout not shorter than the absolute deadline is refused', () => {
    expect(rejection({ timeoutSeconds: 30, inactivityTimeoutSeconds: 30 })).toContain(
      'inactivityTimeoutSeconds: must be shorter than timeoutSeconds (30), or the absolute deadline always comes first; received 30',
    );
  });

  it('an inactivity timeout not shorter than the allowed life is refused', () => {
    expect(rejection({ maxOpenSeconds: 600, inactivityTimeoutSeconds: 600 })).toContain(
      'inactivityTimeoutSeconds: must be shorter than maxOpenSeconds (600)',
    );
  });

  it('a snapshot interval under 10 seconds is refused, so snapshots cannot flood', () => {
    expect(rejection({ snapshotIntervalSeconds: 5 })).toContain(
      'snapshotIntervalSeconds: must be at least 10 seconds, so snapshots cannot flood the status output; received 5',
    );
  });

  it("'discard' is refused where a deadline completes the aggregate (strategy 'timeout')", () => {
    expect(
      rejection({ completion: { strategy: 'timeout' }, timeoutSeconds: 30, onTimeout: 'discard' }),
    ).toContain("onTimeout: 'discard' has no effect with completion strategy 'timeout'");
  });

  it('an unknown onTimeout value is refused with the values allowed', () => {
    expect(rejection({ onTimeout: 'drop' })).toMatch(/onTimeout: .*"release".*"discard"/);
  });
});
