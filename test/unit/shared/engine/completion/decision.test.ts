import { describe, expect, it } from 'vitest';
import { CompletedBy, done, WAIT } from '../../../../../shared/engine/completion/decision.ts';

/** A decision: keep waiting, or close with an outcome, what completed it, and a reason when given. */
describe('completion decisions', () => {
  it('keeps waiting without an outcome', () => {
    expect(WAIT).toEqual({ complete: false });
  });

  it('closes with the outcome and what completed it, and no reason field when none is given', () => {
    const decision = done('completed', 'all-arrived');
    expect(decision).toEqual({ complete: true, outcome: 'completed', completedBy: 'all-arrived' });
    expect('reason' in decision).toBe(false);
  });

  it('keeps the reason of a failed aggregate', () => {
    expect(done('failed', 'failures', '2 replies failed')).toEqual({
      complete: true,
      outcome: 'failed',
      completedBy: 'failures',
      reason: '2 replies failed',
    });
  });

  it('names what completed an aggregate as the outputs report it (docs/wire-contract.md)', () => {
    expect(new Set(Object.values(CompletedBy))).toEqual(
      new Set([
        'all-arrived',
        'all-settled',
        'responders-settled',
        'count',
        'first',
        'threshold',
        'predicate',
        'deadline',
        'external',
        'purge',
        'failures',
      ]),
    );
  });
});
