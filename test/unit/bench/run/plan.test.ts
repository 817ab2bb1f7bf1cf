import { describe, expect, it } from 'vitest';
import { DEFINITIONS, FULL, parseArgs, QUICK, REPLAY_UP_TO } from '../../../../bench/run/plan.ts';
import { parseDefinitions } from '../../../../shared/engine/definition.ts';

describe('the bench plan', () => {
  it('runs the full plan by default and the quick one with --quick', () => {
    expect(parseArgs([])).toEqual({ quick: false, plan: FULL, replayUpTo: REPLAY_UP_TO });
    expect(parseArgs(['--quick'])).toMatchObject({ quick: true, plan: QUICK });
  });

  it('replays the naive baseline at every fan-out only when asked with --replay-baseline', () => {
    expect(parseArgs(['--quick']).replayUpTo).toBe(1_000);
    expect(parseArgs(['--replay-baseline']).replayUpTo).toBe(Number.POSITIVE_INFINITY);
  });

  it('measures only definitions fanin itself accepts, each under its own name', () => {
    const parsed = parseDefinitions(DEFINITIONS);
    expect([...parsed.keys()]).toEqual([
      'bench-collect',
      'bench-condense',
      'bench-timer',
      'bench-timer-batched',
      'bench-hot',
      'bench-hot-sharded',
    ]);
    // Every definition completes on all replies; only the sharded hot one spreads its writes.
    for (const d of parsed.values()) expect(d.completion.strategy).toBe('all');
    expect(parsed.get('bench-hot-sharded')?.writeShards).toBe(8);
    expect(parsed.get('bench-hot')?.writeShards ?? 1).toBe(1);
  });

  it('gives the batched timer variant a longer deadline than the paced one, so it fires after completion', () => {
    const parsed = parseDefinitions(DEFINITIONS);
    expect(parsed.get('bench-timer')?.timeoutSeconds).toBe(3);
    expect(parsed.get('bench-timer-batched')?.timeoutSeconds).toBe(10);
  });

  it('makes the quick run smaller than the full one: no drained phase (a minute each), fewer aggregates', () => {
    expect(QUICK.comparedBatching.some((b) => b.drainIntervalSeconds !== undefined)).toBe(false);
    expect(FULL.comparedBatching.some((b) => b.drainIntervalSeconds === 60)).toBe(true);
    expect(QUICK.arrivalAggregates).toBeLessThan(FULL.arrivalAggregates);
    expect(QUICK.timerAggregates).toBeLessThanOrEqual(FULL.timerAggregates);
  });
});
