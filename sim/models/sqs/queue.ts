/**
 * One queue of the SQS model: its attributes and its messages, each with its delivery state
 * (delayed, visible, in flight until a time), receive count, receipt handles, and, on FIFO
 * queues, its group, deduplication id and sequence number.
 */
import type { AttributeValue } from './messages.ts';

/** A message as the model keeps it. */
export interface StoredMessage {
  readonly messageId: string;
  readonly body: string;
  readonly md5OfBody: string;
  readonly attributes: Readonly<Record<string, AttributeValue>>;
  readonly systemAttributes: Readonly<Record<string, AttributeValue>>;
  /** When it was first sent (epoch ms); retention counts from it, also in a DLQ. */
  readonly sentAt: number;
  /** When it may next be received. */
  visibleAt: number;
  /** Whether a receive took it and its visibility timeout has not passed. */
  receiveCount: number;
  firstReceiveAt?: number;
  /** The handle of its latest receive. */
  latestHandle?: string;
  /** Every handle it was ever received with. */
  readonly handles: Set<string>;
  readonly groupId?: string;
  readonly deduplicationId?: string;
  readonly sequenceNumber?: string;
  /** The queue it was moved from by a redrive policy. */
  deadLetterSourceArn?: string;
  /** In flight (received, visibility not passed) as opposed to delayed. */
  received: boolean;
}

/** A queue's configurable attributes, as numbers and flags. */
export interface QueueSettings {
  visibilityTimeoutSeconds: number;
  retentionSeconds: number;
  delaySeconds: number;
  maximumMessageSize: number;
  receiveWaitSeconds: number;
  redrive?: { readonly deadLetterTargetArn: string; readonly maxReceiveCount: number };
  contentBasedDeduplication: boolean;
}

/** A queue of the model. */
export class Queue {
  public readonly messages: StoredMessage[] = [];
  /** FIFO deduplication: key → when first sent and the answer given. */
  public readonly deduplication = new Map<
    string,
    { at: number; messageId: string; sequenceNumber: string }
  >();
  public lastPurgeAt: number | undefined;

  public constructor(
    public readonly name: string,
    public readonly url: string,
    public readonly arn: string,
    public readonly fifo: boolean,
    public readonly settings: QueueSettings,
    /** The attributes given at creation, as strings, for CreateQueue's idempotence. */
    public readonly given: Readonly<Record<string, string>>,
    public readonly createdAt: number,
  ) {}

  /** Drops the messages past their retention. */
  public expire(now: number): void {
    const limit = this.settings.retentionSeconds * 1000;
    for (let i = this.messages.length - 1; i >= 0; i -= 1) {
      const message = this.messages[i] as StoredMessage;
      if (now >= message.sentAt + limit) this.messages.splice(i, 1);
    }
  }

  /** Messages that a receive may return now. */
  public visible(now: number): StoredMessage[] {
    return this.messages.filter((m) => m.visibleAt <= now);
  }

  /** Removes a message. */
  public remove(message: StoredMessage): void {
    const i = this.messages.indexOf(message);
    if (i >= 0) this.messages.splice(i, 1);
  }

  /** The approximate counts GetQueueAttributes reports (exact here). */
  public counts(now: number): { visible: number; inFlight: number; delayed: number } {
    let visible = 0;
    let inFlight = 0;
    let delayed = 0;
    for (const m of this.messages) {
      if (m.visibleAt <= now) visible += 1;
      else if (m.received) inFlight += 1;
      else delayed += 1;
    }
    return { visible, inFlight, delayed };
  }
}
