import type { Message, ReceiveMessageCommandInput, SQSClient } from '@aws-sdk/client-sqs';

/** A message one of a drain's batches held: its aggregate (`fanin-aggregate-id`) and when it was sent. */
export interface DrainedMessage {
  readonly messageId: string;
  readonly aggregateId: string | undefined;
  /** Its `SentTimestamp` (ms). */
  readonly sentAt: number | undefined;
}

/**
 * What the rig learns of the replies its consumers took: a drain's batches, from the calls the drain makes
 * with fanin's SQS client, which drains took each aggregate's replies, and when those replies were sent.
 */
export class DrainBatches {
  /** The drains in progress, by queue URL (one drain per queue at a time, as `QueueDrainer` runs them). */
  private readonly drains = new Map<
    string,
    { readonly number: number; batches: DrainedMessage[][]; current: DrainedMessage[] }
  >();
  /** When each drain started (`performance.now()`), in order: drain n (from 1) at `starts[n - 1]`. */
  private readonly starts: number[] = [];
  /** Per aggregate, the drains whose batches held its replies. */
  private readonly drainsOf = new Map<string, Set<number>>();
  /** First and last `SentTimestamp` (ms) of the replies of each aggregate taken. */
  private readonly replySent = new Map<string, { first: number; last: number }>();
  /** When the drainers in force were started (`performance.now()`), and their interval (ms). */
  private schedule: { readonly startedAt: number; readonly intervalMs: number } | undefined;

  /** Observes `client`'s receives from and deletes on the queue of each drain in progress. */
  public instrument(client: SQSClient): void {
    client.middlewareStack.add(
      (next, context) => async (args) => {
        const input = args.input as { QueueUrl?: string };
        const drain = this.drains.get(String(input.QueueUrl ?? ''));
        if (!drain) return next(args);
        if (context.commandName === 'DeleteMessageBatchCommand' && drain.current.length > 0) {
          drain.batches.push(drain.current);
          drain.current = [];
        }
        if (context.commandName !== 'ReceiveMessageCommand') return next(args);
        const receive = args.input as ReceiveMessageCommandInput;
        const names = receive.MessageSystemAttributeNames ?? [];
        const asked =
          names.includes('SentTimestamp') || names.includes('All')
            ? args
            : { ...args, input: { ...receive, MessageSystemAttributeNames: [...names, 'SentTimestamp'] } };
        const result = await next(asked);
        const messages = ((result.output as { Messages?: Message[] }).Messages ?? []).map(drained);
        drain.current.push(...messages);
        return result;
      },
      { step: 'initialize', name: 'benchDrainBatches' },
    );
  }

  /** A drain of `queueUrl` starts at `at`: its receives and deletes are observed until {@link end}. */
  public begin(queueUrl: string, at = performance.now()): void {
    this.starts.push(at);
    this.drains.set(queueUrl, { number: this.starts.length, batches: [], current: [] });
  }

  /** The drain of `queueUrl` is over: notes whose replies it took, and @returns its batches, in order. */
  public end(queueUrl: string): DrainedMessage[][] {
    const drain = this.drains.get(queueUrl);
    this.drains.delete(queueUrl);
    if (!drain) return [];
    const batches = drain.current.length > 0 ? [...drain.batches, drain.current] : drain.batches;
    for (const { aggregateId, sentAt } of batches.flat()) {
      this.noteSent(aggregateId, sentAt);
      if (aggregateId === undefined) continue;
      const drains = this.drainsOf.get(aggregateId) ?? new Set<number>();
      this.drainsOf.set(aggregateId, drains.add(drain.number));
    }
    return batches;
  }

  /** A reply of `aggregateId` sent at `sentAt` (ms) was taken. */
  public noteSent(aggregateId: string | undefined, sentAt: number | undefined): void {
    if (aggregateId === undefined || sentAt === undefined || !Number.isFinite(sentAt)) return;
    const seen = this.replySent.get(aggregateId);
    if (seen) {
      seen.first = Math.min(seen.first, sentAt);
      seen.last = Math.max(seen.last, sentAt);
    } else this.replySent.set(aggregateId, { first: sentAt, last: sentAt });
  }

  /** Drainers every `intervalSeconds` were started at `at` (0: event sources, no schedule). */
  public scheduled(intervalSeconds: number, at = performance.now()): void {
    this.schedule = intervalSeconds > 0 ? { startedAt: at, intervalMs: intervalSeconds * 1000 } : undefined;
  }

  /** When the drainers in force will next drain after `after` (`performance.now()` time). */
  public nextDrainAt(after = performance.now()): number | undefined {
    const schedule = this.schedule;
    if (!schedule) return undefined;
    const intervals = Math.max(0, Math.floor((after - schedule.startedAt) / schedule.intervalMs)) + 1;
    return schedule.startedAt + intervals * schedule.intervalMs;
  }

  /** When the drains that started from `from` to `to` did. */
  public startsBetween(from: number, to: number): number[] {
    return this.starts.filter((t) => t >= from && t <= to);
  }

  /** How many of `aggregateIds` had their replies taken by more than one drain. */
  public splitAcrossDrains(aggregateIds: readonly string[]): number {
    return aggregateIds.filter((id) => (this.drainsOf.get(id)?.size ?? 0) > 1).length;
  }

  /** How long each of `aggregateIds`' replies took to arrive, first to last. */
  public replySpansMs(aggregateIds: readonly string[]): number[] {
    return aggregateIds.flatMap((id) => {
      const sent = this.replySent.get(id);
      return sent ? [sent.last - sent.first] : [];
    });
  }
}

function drained(message: Message): DrainedMessage {
  const sent = Number(message.Attributes?.SentTimestamp);
  return {
    messageId: message.MessageId ?? '',
    aggregateId: message.MessageAttributes?.['fanin-aggregate-id']?.StringValue,
    sentAt: Number.isFinite(sent) ? sent : undefined,
  };
}
