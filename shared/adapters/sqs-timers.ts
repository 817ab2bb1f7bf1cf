import { SendMessageBatchCommand, SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { TimerMessage, TimerScheduler } from '../ports.ts';
import { SQS_BATCH } from './sqs-queues.ts';

/** SQS delays a message by at most 15 minutes. */
export const MAX_DELAY_SECONDS = 900;

/** How far ahead an SQS delay message can fire precisely: its longest delay. */
export const TIMER_HORIZON_MS = MAX_DELAY_SECONDS * 1000;

/**
 * Timers as SQS delay messages. A timer fires at or after its due time, never before it by more
 * than a second's rounding. A timer due beyond the 15-minute horizon is not sent at all: its item
 * is in the `due` index (a deadline's header, a held reply, an aggregate's next snapshot), and the
 * sweep arms it when it enters the horizon (timers.ts, `armEntering`), so a long deadline or
 * snapshot interval costs one timer, not one every 15 minutes. Losing one is harmless: the sweeper
 * finds every due item through the `due` index.
 */
export class SqsTimerScheduler implements TimerScheduler {
  public readonly horizonMs = TIMER_HORIZON_MS;
  private readonly sqs: SQSClient;
  private readonly queueUrl: string;

  public constructor(options: { readonly sqs: SQSClient; readonly queueUrl: string }) {
    this.sqs = options.sqs;
    this.queueUrl = options.queueUrl;
  }

  public async arm(timer: TimerMessage, now: number): Promise<void> {
    if (leftToTheSweep(timer, now)) return;
    await this.sqs.send(
      new SendMessageCommand({
        QueueUrl: this.queueUrl,
        MessageBody: JSON.stringify(timer),
        DelaySeconds: delaySeconds(timer.dueAt, now),
      }),
    );
  }

  public async armAll(timers: readonly TimerMessage[], now: number): Promise<readonly number[]> {
    const failed: number[] = [];
    const sent = timers.flatMap((timer, at) => (leftToTheSweep(timer, now) ? [] : [{ timer, at }]));
    // A standard queue delays each entry of a batch on its own; 10 entries a call, one request
    // billed per 64 KB (a timer is under 200 bytes).
    for (let start = 0; start < sent.length; start += SQS_BATCH) {
      const chunk = sent.slice(start, start + SQS_BATCH);
      const { Failed = [] } = await this.sqs.send(
        new SendMessageBatchCommand({
          QueueUrl: this.queueUrl,
          Entries: chunk.map(({ timer }, i) => ({
            Id: String(i),
            MessageBody: JSON.stringify(timer),
            DelaySeconds: delaySeconds(timer.dueAt, now),
          })),
        }),
      );
      for (const entry of Failed) failed.push(chunk[Number(entry.Id)]?.at ?? -1);
    }
    return failed;
  }
}

/**
 * Whether a timer is left to the sweep instead of sent: one due beyond the horizon (its item is in
 * the `due` index: snapshots.ts writes a snapshot's before it arms one that far).
 */
export function leftToTheSweep(timer: TimerMessage, now: number): boolean {
  return timer.dueAt - now > TIMER_HORIZON_MS;
}

/** Seconds to delay a timer due at `dueAt`, within SQS's 0–900 s. */
export function delaySeconds(dueAt: number, now: number): number {
  return Math.min(MAX_DELAY_SECONDS, Math.max(0, Math.ceil((dueAt - now) / 1000)));
}
