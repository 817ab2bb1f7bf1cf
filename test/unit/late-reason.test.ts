import { describe, expect, it } from 'vitest';
import { fixedReason } from '../../shared/use-cases/late.ts';

/**
 * The late output's reason for a reply handled after its aggregate's result was fixed
 * (docs/wire-contract.md, "Late replies and the deadline"): a reply SQS accepted before the
 * deadline, whose handling crashed and came back only after the deadline's seal, says when it was
 * sent and when the deadline was, so its producer can tell it from a reply that was simply late.
 * Kills the mutant 'settle: late reason without the send time'.
 */
describe('the late reason of a reply handled after the result was fixed', () => {
  const timedOut = { status: 'closed', outcome: 'timed-out', deadline: 60_000, closeBy: 600_000 } as const;

  it('says it was sent before the deadline, with both times', () => {
    expect(fixedReason(timedOut, 1_000)).toBe(
      'aggregate is closed (timed-out): the reply was sent at 1970-01-01T00:00:01.000Z, before the deadline at 1970-01-01T00:01:00.000Z, and came after its result was fixed',
    );
  });

  it('says only that it came after the result was fixed when it was sent at or after the deadline, or its time is unknown', () => {
    const plain = 'aggregate is closed (timed-out): the reply came after its result was fixed';
    expect(fixedReason(timedOut, 60_000)).toBe(plain);
    expect(fixedReason(timedOut)).toBe(plain);
  });

  it('names no deadline under an inactivity timeout (the deadline in force moved with the replies)', () => {
    expect(fixedReason({ ...timedOut, params: { inactivityTimeoutSeconds: 5 } }, 1_000)).toBe(
      'aggregate is closed (timed-out): the reply came after its result was fixed',
    );
  });
});
