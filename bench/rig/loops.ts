import { sleep } from '../workload/sleep.ts';

/** Loops that each repeat a step until stopped, a step that threw counted and retried after a pause. */
export class Loops {
  /** Steps that threw (and anything else the subclass counts as an error). */
  public errors = 0;
  private running = false;
  private loops: Promise<void>[] = [];

  /** Starts one loop per step (no more once started). */
  protected startLoops(steps: readonly (() => Promise<void>)[]): void {
    if (this.running) return;
    this.running = true;
    this.loops = steps.map(async (step) => {
      while (this.running) {
        try {
          await step();
        } catch {
          this.errors += 1;
          await sleep(100);
        }
      }
    });
  }

  /** Stops the loops, each after its step in progress. */
  public async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.loops);
  }
}
