import { describe, expect, it, vi } from 'vitest';
import type { DrainReport, ReplyDrainEvent } from '../../../functions/handlers.ts';
import { QueueDrainer } from '../../../local/drainer.ts';

/**
 * The local stand-in for a drained reply partition's schedule, on fake timers: one drain per
 * interval with the partition's event, a tick skipped while a drain still runs, its counters, and
 * nothing after stop. The runtime's integration tests drain real partitions on the emulators.
 */

function report(received: number, failed = 0): DrainReport {
  return { partition: 1, received, failed } as unknown as DrainReport;
}

describe('QueueDrainer', () => {
  it('drains once with the partition and batch size it was given, counting what the drain did', async () => {
    const events: ReplyDrainEvent[] = [];
    const drainer = new QueueDrainer({
      drain: async (event) => {
        events.push(event);
        return report(7, 2);
      },
      partition: 1,
      batchSize: 50,
      intervalMs: 1000,
    });

    expect(await drainer.drainOnce()).toMatchObject({ received: 7, failed: 2 });

    expect(events).toEqual([{ drain: { partition: 1, batchSize: 50 } }]);
    expect(drainer.stats).toEqual({ invocations: 1, records: 7, failures: 2, errors: 0 });
  });

  it('counts a drain that throws as an error and rethrows it', async () => {
    const drainer = new QueueDrainer({
      drain: async () => {
        throw new Error('no partition');
      },
      partition: 0,
      batchSize: 1,
      intervalMs: 1000,
    });

    await expect(drainer.drainOnce()).rejects.toThrow('no partition');
    expect(drainer.stats.errors).toBe(1);
  });

  it('drains every interval from one interval after start, skips a tick while a drain runs, stops on stop', async () => {
    vi.useFakeTimers();
    try {
      let finish: (() => void) | undefined;
      let drains = 0;
      const drainer = new QueueDrainer({
        drain: () => {
          drains += 1;
          return new Promise<DrainReport>((resolve) => {
            finish = () => resolve(report(1));
          });
        },
        partition: 0,
        batchSize: 10,
        intervalMs: 1000,
      });
      drainer.start();

      await vi.advanceTimersByTimeAsync(999);
      expect(drains).toBe(0);
      await vi.advanceTimersByTimeAsync(1);
      expect(drains).toBe(1);
      await vi.advanceTimersByTimeAsync(3000);
      expect(drains).toBe(1);
      finish?.();
      await vi.advanceTimersByTimeAsync(1000);
      expect(drains).toBe(2);
      finish?.();
      await drainer.stop();
      await vi.advanceTimersByTimeAsync(5000);
      expect(drains).toBe(2);
    } finally {
      vi.useRealTimers();
    }
  });
});
