import { describe, expect, it } from 'vitest';
import {
  type CyclePlan,
  type PartitionSample,
  planCycle,
} from '../../../../shared/partitions/distributor.ts';

/**
 * The distributor's watermark decisions, `planCycle()`, as tables: what counts as progress, when
 * a partition is stalled and how much of it goes back to the backlog, which partitions are fed
 * and with how much. High watermark 100, low 20, stall 30 s; now is 100 s.
 */

const NOW = 100_000;
const STALL_MS = 30_000;

function plan(partitions: readonly PartitionSample[], low = 20): CyclePlan {
  return planCycle({ now: NOW, partitions, highWatermark: 100, lowWatermark: low, stallMs: STALL_MS });
}

/** A readable, enabled partition 0 holding `depth` visible messages. */
function aSample(depth: number, extra: Partial<PartitionSample> = {}): PartitionSample {
  return { index: 0, enabled: true, depth, visible: depth, inFlight: 0, ...extra };
}

/** Its state as the last cycle left it: `lastDepth`, progress last seen `sinceMs` ago. */
const seen = (lastDepth: number, sinceMs: number) => ({
  state: { lastDepth, lastProgressAt: NOW - sinceMs },
});

describe('planCycle: progress and stalls', () => {
  it.each<{
    name: string;
    sample: PartitionSample;
    progressAt: number;
    stalled: boolean;
    evacuate?: number;
  }>([
    { name: 'seen for the first time: progress', sample: aSample(50), progressAt: NOW, stalled: false },
    { name: 'empty: progress', sample: aSample(0, seen(0, 60_000)), progressAt: NOW, stalled: false },
    {
      name: 'below the depth the last cycle left: progress',
      sample: aSample(90, seen(100, 60_000)),
      progressAt: NOW,
      stalled: false,
    },
    {
      name: 'messages in flight, depth unchanged: progress (a consumer holds them)',
      sample: aSample(100, { visible: 90, inFlight: 10, ...seen(100, 60_000) }),
      progressAt: NOW,
      stalled: false,
    },
    {
      name: 'unchanged, last progress within the stall time: not stalled yet',
      sample: aSample(100, seen(100, 20_000)),
      progressAt: NOW - 20_000,
      stalled: false,
    },
    {
      name: 'above the depth the last cycle left: no progress',
      sample: aSample(110, seen(100, 20_000)),
      progressAt: NOW - 20_000,
      stalled: false,
    },
    {
      name: 'unchanged for exactly the stall time: stalled, all but the low watermark go back',
      sample: aSample(100, seen(100, STALL_MS)),
      progressAt: NOW - STALL_MS,
      stalled: true,
      evacuate: 80,
    },
    {
      name: 'stalled at or below the low watermark: stalled, nothing goes back',
      sample: aSample(15, seen(15, 60_000)),
      progressAt: NOW - 60_000,
      stalled: true,
    },
  ])('$name', ({ sample, progressAt, stalled, evacuate }) => {
    // Act
    const planned = plan([sample]);

    // Assess
    expect(planned.progressAt.get(0)).toBe(progressAt);
    expect(planned.stalled).toEqual(stalled ? [0] : []);
    expect(planned.evacuate).toEqual(evacuate === undefined ? [] : [{ index: 0, count: evacuate }]);
  });

  it('a stalled partition keeps at least one message, even with a low watermark of 0', () => {
    // Act
    const planned = plan([aSample(5, seen(5, 60_000))], 0);

    // Assess
    expect(planned.evacuate).toEqual([{ index: 0, count: 4 }]);
  });

  it('a partition that could not be read is left alone: no progress recorded, never stalled or fed', () => {
    // Act
    const planned = plan([{ index: 0, enabled: true, state: { lastDepth: 100, lastProgressAt: 0 } }]);

    // Assess
    expect(planned).toEqual({ progressAt: new Map(), stalled: [], evacuate: [], feed: [] });
  });
});

describe('planCycle: feeding', () => {
  it.each<{ name: string; sample: PartitionSample; want?: number }>([
    { name: 'empty: filled to the high watermark', sample: aSample(0), want: 100 },
    { name: 'at the low watermark: refilled', sample: aSample(20), want: 80 },
    { name: 'above the low watermark: not fed', sample: aSample(21) },
    { name: 'send-disabled: not fed', sample: aSample(0, { enabled: false }) },
    { name: 'stalled: not fed', sample: aSample(10, seen(10, 60_000)) },
  ])('$name', ({ sample, want }) => {
    // Act
    const planned = plan([sample]);

    // Assess
    expect(planned.feed).toEqual(want === undefined ? [] : [{ index: 0, want }]);
  });

  it('feeds the emptiest partitions first', () => {
    // Prepare
    const partitions = [
      aSample(15),
      { ...aSample(0), index: 1 },
      { ...aSample(50), index: 2 },
      { ...aSample(5), index: 3 },
    ];

    // Act
    const planned = plan(partitions);

    // Assess
    expect(planned.feed).toEqual([
      { index: 1, want: 100 },
      { index: 3, want: 95 },
      { index: 0, want: 85 },
    ]);
  });
});

describe('planCycle: partitions drained on a schedule', () => {
  it('never judges a drained partition stalled, since between two drains only its depth grows', () => {
    // Prepare: partition 0 drained, partition 1 an event source; both unchanged past the stall time
    const partitions = [aSample(100, seen(100, 90_000)), { ...aSample(100, seen(100, 90_000)), index: 1 }];

    // Act
    const planned = planCycle({
      now: NOW,
      partitions,
      highWatermark: 100,
      lowWatermark: 20,
      stallMs: STALL_MS,
      drained: [0],
    });

    // Assess (mutant killed: a drained partition evacuated to the backlog before every drain)
    expect(planned.stalled).toEqual([1]);
    expect(planned.evacuate.map((e) => e.index)).toEqual([1]);
  });
});
