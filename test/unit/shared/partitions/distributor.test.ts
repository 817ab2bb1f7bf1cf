import { describe, expect, it } from 'vitest';
import { WireAttribute } from '../../../../shared/engine/correlation.ts';
import {
  type CyclePlan,
  Distributor,
  type PartitionSample,
  planCycle,
} from '../../../../shared/partitions/distributor.ts';
import { BACKLOG_URL, memoryPartitions, partitionUrl } from '../../../support/memory-partitions.ts';

/**
 * The distributor's cycle over the in-memory ports (test/support/memory-partitions.ts): what it
 * moves where, what it records and reports, given what the queues say. The move itself on SQS
 * (identity, long polls, delete retries, aborts) is proven against the emulator in
 * test/integration/features/distributor.test.ts.
 */
describe('watermark distributor over in-memory queues', () => {
  it('feeds every partition at or below the low watermark up to the high one, emptiest first, and says when the backlog is empty', async () => {
    // Prepare: 150 in the backlog; partition 0 holds 10, partition 1 none
    const { distributor, queues, registry, now } = memoryPartitions(2);
    queues.put(BACKLOG_URL, 150);
    queues.put(partitionUrl(0), 10);

    // Act
    const report = await distributor.cycle();

    // Assess: partition 1 first, to 100; partition 0 gets the 50 left
    expect(report).toMatchObject({ fed: { 1: 100, 0: 50 }, evacuated: {}, stalled: [], backlogEmpty: true });
    expect([queues.depthOf(partitionUrl(0)), queues.depthOf(partitionUrl(1))]).toEqual([60, 100]);
    expect(queues.depthOf(BACKLOG_URL)).toBe(0);
    const states = await registry.load('replies');
    expect(states.get(0)).toMatchObject({ lastDepth: 60, lastProgressAt: now.at });
    expect(states.get(1)).toMatchObject({ lastDepth: 100, lastProgressAt: now.at });
  });

  it('leaves a partition above the low watermark and a send-disabled one unfed', async () => {
    // Prepare
    const { destination, distributor, queues } = memoryPartitions(3);
    queues.put(BACKLOG_URL, 500);
    queues.put(partitionUrl(0), 21);
    await destination.setEnabled(2, false);

    // Act
    const report = await distributor.cycle();

    // Assess
    expect(report.fed).toEqual({ 1: 100 });
    expect(report.backlogEmpty).toBe(false);
    expect(queues.depthOf(partitionUrl(2))).toBe(0);
  });

  it('moves at most maxMovesPerCycle messages in one cycle', async () => {
    // Prepare
    const { distributor, queues } = memoryPartitions(3, { watermarks: { maxMovesPerCycle: 150 } });
    queues.put(BACKLOG_URL, 500);

    // Act
    const report = await distributor.cycle();

    // Assess
    expect(report.fed).toEqual({ 0: 100, 1: 50 });
    expect(queues.depthOf(BACKLOG_URL)).toBe(350);
  });

  it('a stalled partition keeps its low watermark; its excess goes back to the backlog and feeds the healthy one', async () => {
    // Prepare: the first cycle fills both partitions; only partition 0's consumer works
    const { distributor, queues, now } = memoryPartitions(2);
    queues.put(BACKLOG_URL, 300);
    expect((await distributor.cycle()).fed).toEqual({ 0: 100, 1: 100 });
    queues.consume(partitionUrl(0), 100);
    now.at += 31_000;

    // Act
    const report = await distributor.cycle();

    // Assess: 80 of partition 1 went back; partition 0 was refilled from the backlog
    expect(report.stalled).toEqual([1]);
    expect(report.evacuated).toEqual({ 1: 80 });
    expect(report.fed).toEqual({ 0: 100 });
    expect(queues.depthOf(partitionUrl(1))).toBe(20);
    expect(queues.depthOf(BACKLOG_URL)).toBe(80);
  });

  it('a partition whose consumer holds messages in flight is not stalled, whatever its depth says', async () => {
    // Prepare: 30 on partition 1 (partition 0 disabled); its consumer holds 10 of them
    const { destination, distributor, queues, now } = memoryPartitions(2);
    queues.put(BACKLOG_URL, 30);
    await destination.setEnabled(0, false);
    expect((await distributor.cycle()).fed).toEqual({ 1: 30 });
    queues.hold(partitionUrl(1), 10);

    // Act: two stall periods with the depth unchanged
    now.at += 31_000;
    const second = await distributor.cycle();
    now.at += 31_000;
    const third = await distributor.cycle();

    // Assess
    expect([second.stalled, third.stalled]).toEqual([[], []]);
    expect([second.evacuated, third.evacuated]).toEqual([{}, {}]);
    expect(queues.depthOf(partitionUrl(1))).toBe(30);
  });

  it('a partition whose depth cannot be read is left alone: not fed, not stalled, nothing recorded', async () => {
    // Prepare
    const { distributor, queues, registry } = memoryPartitions(2);
    queues.put(BACKLOG_URL, 300);
    queues.unreachable.add(partitionUrl(1));

    // Act
    const report = await distributor.cycle();

    // Assess
    expect(report.fed).toEqual({ 0: 100 });
    expect(queues.calls.filter((c) => c.startsWith('move'))).toEqual([
      `move ${BACKLOG_URL} -> ${partitionUrl(0)}`,
    ]);
    expect([...(await registry.load('replies')).keys()]).toEqual([0]);
  });

  it('reports and logs moved messages whose delete from the backlog kept failing, with their identity', async () => {
    // Prepare
    const { distributor, queues, logged } = memoryPartitions(1);
    const [first] = queues.put(BACKLOG_URL, 3);
    queues.undeletable.add(BACKLOG_URL);

    // Act
    const report = await distributor.cycle();

    // Assess: each is at both queues, its copy carrying its identity
    expect(report.fed).toEqual({ 0: 3 });
    expect(report.undeleted).toHaveLength(3);
    expect(report.undeleted[0]).toMatchObject({
      messageId: first?.messageId,
      originMessageId: first?.messageId,
    });
    expect(queues.visible(partitionUrl(0))[0]?.attributes[WireAttribute.ORIGIN_MESSAGE_ID]?.StringValue).toBe(
      first?.messageId,
    );
    expect(logged).toEqual([
      expect.objectContaining({
        level: 'warn',
        destination: 'replies',
        undeleted: 3,
        messageIds: report.undeleted.map((u) => u.messageId),
        codes: ['InternalError'],
      }),
    ]);
  });

  it('reports and logs a send a partition refused; the messages stay in the backlog and the next partition is fed', async () => {
    // Prepare
    const { distributor, queues, logged } = memoryPartitions(2);
    queues.put(BACKLOG_URL, 150);
    queues.refusing.add(partitionUrl(0));

    // Act
    const report = await distributor.cycle();

    // Assess
    expect(report.fed).toEqual({ 0: 0, 1: 100 });
    expect(report.refused).toEqual([
      { from: BACKLOG_URL, to: partitionUrl(0), code: 'AccessDenied', message: expect.any(String) },
    ]);
    expect(queues.depthOf(BACKLOG_URL)).toBe(50);
    expect(logged).toEqual([
      expect.objectContaining({
        level: 'warn',
        from: BACKLOG_URL,
        to: partitionUrl(0),
        code: 'AccessDenied',
      }),
    ]);
  });

  it('records the settings it runs with when given the deployment ones', async () => {
    // Prepare
    const { distributor, registry, now } = memoryPartitions(2, {
      settings: { highThreshold: 5_000, distributorIntervalSeconds: 30 },
    });

    // Act
    await distributor.cycle();

    // Assess
    expect(await registry.loadSettings('replies')).toEqual({
      highThreshold: 5_000,
      distributorIntervalSeconds: 30,
      highWatermark: 100,
      lowWatermark: 20,
      stallSeconds: 30,
      recordedAt: now.at,
    });
  });

  it('an aborted cycle ends with the signal reason: at once when aborted before, after the move in progress when aborted during one', async () => {
    // Prepare
    const { distributor, queues } = memoryPartitions(2);
    queues.put(BACKLOG_URL, 300);
    const before = AbortSignal.abort(new Error('aborted before'));
    const during = new AbortController();
    const move = queues.move.bind(queues);
    queues.move = async (request) => {
      during.abort(new Error('aborted during'));
      return move(request);
    };

    // Act
    const first = await distributor.cycle({ signal: before }).catch((e: unknown) => e);
    const calls = queues.calls.length;
    const second = await distributor.cycle({ signal: during.signal }).catch((e: unknown) => e);

    // Assess: no call before the abort; one move (cut short at once), no other
    expect(first).toEqual(new Error('aborted before'));
    expect(calls).toBe(0);
    expect(second).toEqual(new Error('aborted during'));
    expect(queues.calls.filter((c) => c.startsWith('move'))).toHaveLength(1);
    expect(queues.depthOf(BACKLOG_URL)).toBe(300);
  });

  it('evacuate moves every visible message of a partition to the backlog and leaves those in flight', async () => {
    // Prepare
    const { destination, distributor, queues } = memoryPartitions(2);
    queues.put(partitionUrl(1), 35);
    queues.hold(partitionUrl(1), 5);
    await destination.setEnabled(1, false);
    const batches: number[] = [];

    // Act
    const moved = await distributor.evacuate(1, { onBatch: (n) => batches.push(n) });

    // Assess
    expect(moved).toBe(30);
    expect(batches).toEqual([10, 20, 30]);
    expect(queues.depthOf(BACKLOG_URL)).toBe(30);
    expect(queues.depthOf(partitionUrl(1))).toBe(5);
  });

  it('evacuate fails when the backlog refuses a send, or the partition does not exist', async () => {
    // Prepare
    const { distributor, queues } = memoryPartitions(2);
    queues.put(partitionUrl(1), 5);
    queues.refusing.add(BACKLOG_URL);

    // Act
    const refused = await distributor.evacuate(1).catch((e: unknown) => e);
    const missing = await distributor.evacuate(7).catch((e: unknown) => e);

    // Assess
    expect((refused as Error).message).toBe(
      `evacuating partition 1: the backlog refused a send after 0 moved (AccessDenied: ${BACKLOG_URL} refused the send)`,
    );
    expect(queues.depthOf(partitionUrl(1))).toBe(5);
    expect((missing as Error).message).toBe('destination replies has no partition 7');
  });

  it.each([
    [{ lowWatermark: 100 }, 'lowWatermark must be >= 0 and below highWatermark (given 100 and 100)'],
    [{ lowWatermark: -1 }, 'lowWatermark must be >= 0 and below highWatermark (given -1 and 100)'],
    [{ moveWaitSeconds: 0 }, 'moveWaitSeconds must be an integer from 1 to 20 (given 0)'],
    [{ moveWaitSeconds: 21 }, 'moveWaitSeconds must be an integer from 1 to 20 (given 21)'],
    [{ emptyReceives: 1 }, 'emptyReceives must be an integer of at least 2 (given 1)'],
  ])('refuses %o', (watermarks, message) => {
    // Prepare
    const { destination, queues, registry } = memoryPartitions(1);

    // Act
    const build = () =>
      new Distributor({
        destination,
        backlogUrl: BACKLOG_URL,
        queues,
        registry,
        highWatermark: 100,
        ...watermarks,
      });

    // Assess
    expect(build).toThrow(message);
  });
});

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
