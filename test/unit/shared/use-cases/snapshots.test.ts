import { describe, expect, it } from 'vitest';
import { nextSnapshotPeriod, snapshotDueAt } from '../../../../shared/use-cases/snapshots.ts';

/** When an aggregate's periodic snapshots are due: snapshot n at n intervals after the opening. */

const OPENED = 1_000_000;

describe('snapshot periods', () => {
  it('snapshot n is due n intervals after the opening', () => {
    expect(snapshotDueAt(OPENED, 10, 3)).toBe(OPENED + 30_000);
  });

  it('the next period follows the one just taken', () => {
    expect(nextSnapshotPeriod(OPENED, 10, 1, OPENED + 10_500)).toBe(2);
  });

  it('a timer that fired late skips the periods it missed instead of publishing them all at once', () => {
    // Act: period 1 handled 45 s in (periods 2, 3 and 4 have passed)
    const next = nextSnapshotPeriod(OPENED, 10, 1, OPENED + 45_000);

    // Assess
    expect(next).toBe(5);
  });
});
