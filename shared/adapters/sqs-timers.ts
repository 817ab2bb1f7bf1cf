import { SendMessageBatchCommand, SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { TimerMessage, TimerScheduler } from '../ports.ts';
import { SQS_BATCH } from './sqs-queues.ts';

/** SQS delays a message by at most 15 minutes; a longer timer is re-armed when it fires early. */
export const MAX_DELAY_SECONDS = 900;

/**
 * Timers as SQS delay messages. A timer fires at or after its due time, never before it by more
 * than a second's rounding; a timer that fires early (a long deadline) is re-armed by its handler.
 * Losing one is harmless: the sweeper finds every due item through the `due` index.
 */
export class SqsTimerScheduler implements TimerScheduler {
  private readonly sqs: SQSClient;
  private readonly queueUrl: string;

  public constructor(options: { readonly sqs: SQSClient; readonly queueUrl: string }) {
    this.sqs = options.sqs;
    this.queueUrl = options.queueUrl;
  }

  public async arm(timer: TimerMessage, now: number): Promise<void> {
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
    // A standard queue delays each entry of a batch on its own; 10 entries a call, one request
    // billed per 64 KB (a timer is under 200 bytes).
    for (let start = 0; start < timers.length; start += SQS_BATCH) {
      const chunk = timers.slice(start, start + SQS_BATCH);
      const { Failed = [] } = await this.sqs.send(
        new SendMessageBatchCommand({
          QueueUrl: this.queueUrl,
          Entries: chunk.map((timer, i) => ({
            Id: String(i),
            MessageBody: JSON.stringify(timer),
            DelaySeconds: delaySeconds(timer.dueAt, now),
          })),
        }),
      );
      for (const entry of Failed) failed.push(start + Number(entry.Id));
    }
    return failed;
  }
}

/** Seconds to delay a timer due at `dueAt`, within SQS's 0–900 s. */
export function delaySeconds(dueAt: number, now: number): number {
  return Math.min(MAX_DELAY_SECONDS, Math.max(0, Math.ceil((dueAt - now) / 1000)));
}
