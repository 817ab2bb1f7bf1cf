/**
 * The rig's loops (the output collector's and the responders'): each step repeats until stopped, a
 * step that throws is counted and retried, and stopping waits for the step in progress.
 */
import { describe, expect, it } from 'vitest';
import { Loops } from '../../../../bench/rig/loops.ts';

/** Loops over the given steps, started on request. */
class Steps extends Loops {
  public run(steps: readonly (() => Promise<void>)[]): void {
    this.startLoops(steps);
  }
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 1));

describe("the rig's loops", () => {
  it('repeats every step until stopped, and stops only after the step in progress', async () => {
    const runs = [0, 0];
    let inStep = false;
    const loops = new Steps();
    const step = (i: number) => async () => {
      inStep = true;
      await tick();
      runs[i] = (runs[i] ?? 0) + 1;
      inStep = false;
    };
    loops.run([step(0), step(1)]);
    while ((runs[0] ?? 0) < 3 || (runs[1] ?? 0) < 3) await tick();
    await loops.stop();
    expect(inStep).toBe(false);
    const after = [...runs];
    await tick();
    await tick();
    expect(runs).toEqual(after);
    expect(loops.errors).toBe(0);
  });

  it('counts a step that threw as an error and runs it again', async () => {
    let calls = 0;
    const loops = new Steps();
    loops.run([
      async () => {
        calls += 1;
        if (calls <= 2) throw new Error('unavailable');
        await tick();
      },
    ]);
    while (calls < 3) await new Promise((resolve) => setTimeout(resolve, 20));
    await loops.stop();
    expect(loops.errors).toBe(2);
    expect(calls).toBeGreaterThanOrEqual(3);
  });

  it('starts its loops once: a second start adds none', async () => {
    let active = 0;
    let most = 0;
    let calls = 0;
    const step = async () => {
      active += 1;
      most = Math.max(most, active);
      calls += 1;
      await tick();
      active -= 1;
    };
    const loops = new Steps();
    loops.run([step]);
    loops.run([step, step, step]);
    while (calls < 5) await tick();
    await loops.stop();
    expect(most).toBe(1);
    // Three steps given at the first start run side by side.
    const three = new Steps();
    most = 0;
    calls = 0;
    three.run([step, step, step]);
    while (calls < 5) await tick();
    await three.stop();
    expect(most).toBe(3);
  });
});
