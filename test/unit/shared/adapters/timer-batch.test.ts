import { describe, expect, it } from 'vitest';
import { TimerBatch } from '../../../../shared/adapters/timer-batch.ts';
import type { TimerMessage, TimerScheduler } from '../../../../shared/ports.ts';

const deadline = (aggregateId: string): TimerMessage => ({ kind: 'deadline', aggregateId, dueAt: 60_000 });

/** A scheduler port that records each armAll call and refuses the timers it is told to. */
class Transport implements TimerScheduler {
  public readonly calls: TimerMessage[][] = [];
  public constructor(
    private readonly refuse: (timer: TimerMessage) => boolean = () => false,
    public readonly horizonMs?: number,
  ) {}
  public async arm(): Promise<void> {
    throw new Error('a batch arms with armAll only');
  }
  public async armAll(timers: readonly TimerMessage[]): Promise<readonly number[]> {
    this.calls.push([...timers]);
    return timers.flatMap((timer, i) => (this.refuse(timer) ? [i] : []));
  }
}

describe('TimerBatch', () => {
  it("collects the records' timers and arms them in one call when the batch is flushed", async () => {
    // Prepare
    const transport = new Transport();
    const batch = new TimerBatch(transport);

    // Act
    await batch.for('m1').arm(deadline('a'), 0);
    await batch.for('m2').arm(deadline('b'), 0);
    const armedBeforeFlush = transport.calls.length;
    const { unarmed } = await batch.flush(0);

    // Assess
    expect(armedBeforeFlush).toBe(0);
    expect(transport.calls).toEqual([[deadline('a'), deadline('b')]]);
    expect(unarmed.size).toBe(0);
  });

  it('names only the records whose timers the transport refused', async () => {
    // Prepare
    const batch = new TimerBatch(new Transport((t) => t.aggregateId === 'b'));
    await batch.for('m1').arm(deadline('a'), 0);
    await batch.for('m2').armAll([deadline('b'), deadline('c')], 0);

    // Act
    const { unarmed, error } = await batch.flush(0);

    // Assess
    expect([...unarmed]).toEqual(['m2']);
    expect(error).toBeUndefined();
  });

  it('names every record that armed a timer when the whole call fails, with the error', async () => {
    // Prepare
    const failing = new Transport();
    failing.armAll = async () => {
      throw new Error('queue unreachable');
    };
    const batch = new TimerBatch(failing);
    await batch.for('m1').arm(deadline('a'), 0);
    await batch.for('m3').arm(deadline('c'), 0);

    // Act
    const { unarmed, error } = await batch.flush(0);

    // Assess: a record that armed nothing (m2) is not among them.
    expect([...unarmed].sort()).toEqual(['m1', 'm3']);
    expect(error).toBeInstanceOf(Error);
  });

  it('makes no call when no record armed a timer, and flushes each timer once', async () => {
    // Prepare
    const transport = new Transport();
    const batch = new TimerBatch(transport);

    // Act
    await batch.flush(0);
    await batch.for('m1').arm(deadline('a'), 0);
    await batch.flush(0);
    await batch.flush(0);

    // Assess
    expect(transport.calls).toEqual([[deadline('a')]]);
  });

  it('leaves a timer beyond the horizon to the sweep: not sent, and its record not failed when the call fails', async () => {
    // Prepare: a 15-minute horizon; m1's timer is due in a minute, m2's (an aggregate's end of
    // life, 14 days away) beyond it.
    const failing = new Transport(() => false, 900_000);
    failing.armAll = async (timers) => {
      failing.calls.push([...timers]);
      throw new Error('queue unreachable');
    };
    const batch = new TimerBatch(failing);
    await batch.for('m1').arm(deadline('a'), 0);
    await batch.for('m2').arm({ kind: 'deadline', aggregateId: 'b', dueAt: 14 * 86_400_000 }, 0);

    // Act
    const { unarmed } = await batch.flush(0);

    // Assess (mutant "every timer collected": m2 failed and redelivered for a timer it never sends).
    expect(failing.calls).toEqual([[deadline('a')]]);
    expect([...unarmed]).toEqual(['m1']);
  });
});
