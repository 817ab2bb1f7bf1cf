import type { TimerMessage, TimerScheduler } from '../ports.ts';

/**
 * The timers one batch of messages arms, sent together when the batch is done (one
 * `SendMessageBatch` for up to 10, where each record would make a `SendMessage`): a fan-out batch
 * of ten requests arms its ten deadlines in one request, and they fire together, in one receive
 * and one invocation of the timer handler.
 *
 * A timer is armed after the record's other steps instead of in their midst, which changes
 * nothing a crash could observe: every step before the arm is idempotent and a lost timer is
 * already covered (the `due` index). A record whose timer is not armed is failed, so SQS
 * redelivers it and the use case arms it again.
 */
export class TimerBatch {
  private readonly timers: TimerScheduler;
  private readonly pending: { readonly record: string; readonly timer: TimerMessage }[] = [];

  public constructor(timers: TimerScheduler) {
    this.timers = timers;
  }

  /** The scheduler one record's use case arms through: it only collects. */
  public for(record: string): TimerScheduler {
    const { horizonMs } = this.timers;
    // A timer beyond the horizon is left to the sweep (its item is in the `due` index): it is not
    // collected, so a failed flush never fails a record that had nothing to send.
    const collect = (timer: TimerMessage, now: number) => {
      if (horizonMs !== undefined && timer.dueAt - now > horizonMs) return;
      this.pending.push({ record, timer });
    };
    return {
      // Its use cases see the scheduler's horizon (a snapshot beyond it is indexed, not armed).
      ...(horizonMs !== undefined ? { horizonMs } : {}),
      arm: async (timer, now) => {
        collect(timer, now);
      },
      armAll: async (timers, now) => {
        for (const timer of timers) collect(timer, now);
        return [];
      },
    };
  }

  /**
   * Arms what the records collected.
   * @returns the records whose timers were not all armed (to be failed and redelivered), and the
   *   error when the whole call failed
   */
  public async flush(
    now: number,
  ): Promise<{ readonly unarmed: ReadonlySet<string>; readonly error?: unknown }> {
    const pending = this.pending.splice(0);
    if (pending.length === 0) return { unarmed: new Set() };
    let failed: ReadonlySet<number>;
    try {
      failed = new Set(
        await this.timers.armAll(
          pending.map((p) => p.timer),
          now,
        ),
      );
    } catch (error) {
      return { unarmed: new Set(pending.map((p) => p.record)), error };
    }
    return { unarmed: new Set(pending.filter((_, i) => failed.has(i)).map((p) => p.record)) };
  }
}
