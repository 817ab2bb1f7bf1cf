import type { DrainReport, ReplyDrainEvent } from '../functions/handlers.ts';

/**
 * What stands in for a drained reply partition's schedule in the local runtime: every interval,
 * one drain through the same handler the Lambda entry point calls. Unlike the schedule, a tick that
 * finds the previous drain still running is skipped rather than run beside it (on AWS two would
 * overlap, which is as safe and only splits packs).
 */
export class QueueDrainer {
  private readonly drain: (event: ReplyDrainEvent) => Promise<DrainReport>;
  private readonly event: ReplyDrainEvent;
  private readonly intervalMs: number;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> | undefined;
  /** Drains and messages, as a poller counts invocations and records (the dashboard, the tests). */
  public readonly stats = { invocations: 0, records: 0, failures: 0, errors: 0 };

  /**
   * @param options.drain the reply function's drain handler (`makeReplyDrainHandler`)
   * @param options.partition the partition's index; @param options.batchSize its batch size
   * @param options.intervalMs how often, in milliseconds (the topology's interval, in seconds × 1,000)
   */
  public constructor(options: {
    readonly drain: (event: ReplyDrainEvent) => Promise<DrainReport>;
    readonly partition: number;
    readonly batchSize: number;
    readonly intervalMs: number;
  }) {
    this.drain = options.drain;
    this.event = { drain: { partition: options.partition, batchSize: options.batchSize } };
    this.intervalMs = options.intervalMs;
  }

  /** Drains every interval, the first one interval from now. */
  public start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      if (this.running === undefined) void this.drainOnce().catch(() => undefined);
    }, this.intervalMs);
  }

  /** Stops the schedule and waits for the drain in flight. */
  public async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }

  /** One drain now, as one scheduled invocation; @returns what it did. */
  public async drainOnce(): Promise<DrainReport> {
    const run = this.drain(this.event);
    this.running = run.catch(() => undefined);
    this.stats.invocations += 1;
    try {
      const report = await run;
      this.stats.records += report.received;
      this.stats.failures += report.failed;
      return report;
    } catch (error) {
      this.stats.errors += 1;
      throw error;
    } finally {
      this.running = undefined;
    }
  }
}
