import { describe, expect, it } from 'vitest';
import { AggregateStatus } from '../../../../shared/engine/constants.ts';
import {
  type CompletionStage,
  completionStageOf,
  type LeasedAggregate,
} from '../../../../shared/engine/lifecycle.ts';

const NOW = 1_000_000;

describe('completionStageOf', () => {
  it.each<[string, LeasedAggregate, number | undefined, CompletionStage]>([
    ['an open header is open', { status: AggregateStatus.OPEN }, NOW, 'open'],
    ['a closed header is closed', { status: AggregateStatus.CLOSED }, NOW, 'closed'],
    [
      'a completing header whose lease runs is completing',
      { status: AggregateStatus.COMPLETING, lease: 'l', leaseUntil: NOW + 1 },
      NOW,
      'completing',
    ],
    [
      'a completing header whose lease ran out at now is resumable',
      { status: AggregateStatus.COMPLETING, lease: 'l', leaseUntil: NOW },
      NOW,
      'resumable',
    ],
    [
      'a completing header with a lease and no end of lease is resumable',
      { status: AggregateStatus.COMPLETING, lease: 'l' },
      NOW,
      'resumable',
    ],
    [
      'a completing header without a lease is never resumable',
      { status: AggregateStatus.COMPLETING, leaseUntil: 0 },
      NOW,
      'completing',
    ],
    [
      'a lease that ran out is not reported without a now',
      { status: AggregateStatus.COMPLETING, lease: 'l', leaseUntil: 0 },
      undefined,
      'completing',
    ],
  ])('%s', (_case, header, now, expected) => {
    // Act
    const stage = completionStageOf(header, now);

    // Assess
    expect(stage).toBe(expected);
  });
});
