import { describe, expect, it } from 'vitest';
import {
  TIMEOUT_WITHIN_DRAIN_INTERVAL,
  timeoutsWithinDrains,
} from '../../../../shared/topology/drain-warnings.ts';
import { aDefinition } from '../engine/factories.ts';

/**
 * The drain warning (docs/configuration.md, `replyDrainIntervalSeconds`): every definition whose
 * deadline, inactivity timeout or shortest request deadline is under twice the longest drain
 * interval, since the router may place any aggregate on a drained partition.
 */
const all = { strategy: 'all' } as const;

describe('definitions that may time out within a drain interval', () => {
  it('is the warning id the construct and the local runtime give', () => {
    expect(TIMEOUT_WITHIN_DRAIN_INTERVAL).toBe('fanin:timeoutWithinDrainInterval');
  });

  it('warns of nothing without a drained partition', () => {
    expect(timeoutsWithinDrains([aDefinition({ timeoutSeconds: 5 })], [0, 0])).toBeUndefined();
    expect(timeoutsWithinDrains([aDefinition({ timeoutSeconds: 5 })], [])).toBeUndefined();
  });

  it('names, in their order, each definition whose shortest deadline is under twice the longest interval', () => {
    const definitions = [
      aDefinition({ name: 'quick-quote', completion: all, timeoutSeconds: 90 }),
      aDefinition({ name: 'idle-bids', completion: all, timeoutSeconds: 3600, inactivityTimeoutSeconds: 30 }),
      aDefinition({
        name: 'asks-short',
        completion: all,
        timeoutSeconds: 3600,
        requestParameters: { timeoutSeconds: { min: 10, max: 3600 } },
      }),
      aDefinition({ name: 'slow-survey', completion: all, timeoutSeconds: 600 }),
    ];
    const found = timeoutsWithinDrains(definitions, [0, 60]);
    expect(found?.definitions).toEqual(['quick-quote', 'idle-bids', 'asks-short']);
    expect(found?.longestDrainSeconds).toBe(60);
    expect(found?.message).toContain(
      '["quick-quote","idle-bids","asks-short"] may time out in less than twice the longest reply drain interval (60 s)',
    );
  });

  it('checks against the longest interval, and a deadline of exactly twice it is enough', () => {
    const definitions = [
      aDefinition({ name: 'at-twice', timeoutSeconds: 240 }),
      aDefinition({ name: 'under', timeoutSeconds: 239 }),
    ];
    expect(timeoutsWithinDrains(definitions, [60, 120, 0])?.definitions).toEqual(['under']);
  });

  it('warns of nothing when every deadline is long enough, or when none is set', () => {
    expect(timeoutsWithinDrains([aDefinition({ name: 'long', timeoutSeconds: 600 })], [300])).toBeUndefined();
    expect(timeoutsWithinDrains([aDefinition({ name: 'no-deadline' })], [3600])).toBeUndefined();
  });
});
