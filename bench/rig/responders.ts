import {
  DeleteMessageBatchCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { seededBy } from '../workload/random.ts';
import { sleep } from '../workload/sleep.ts';
import { Loops } from './loops.ts';

/** How responders answer the sub-requests of an aggregate. */
export type ArrivalPattern = 'together' | 'independent' | 'spread';
export const ARRIVAL_PATTERNS: readonly ArrivalPattern[] = ['together', 'independent', 'spread'];

/** When and how held replies are released (see {@link Responders.release}). */
export interface ReleasePlan {
  readonly pattern: ArrivalPattern;
  /** The aggregates, in the order they are taken up. */
  readonly ids: readonly string[];
  /** Replies offered per second; `Infinity`: as fast as the senders go. */
  readonly repliesPerSecond: number;
  /** `independent`: aggregates answered in turn, one reply each per turn. */
  readonly rotation: number;
  /** `spread`: each reply's delay after its aggregate is taken up, lognormal, seeded by its ids. */
  readonly spread: { readonly medianMs: number; readonly sigma: number; readonly maxMs: number };
  /** Concurrent senders. */
  readonly senders: number;
}

export interface HeldReply {
  readonly aggregateId: string;
  readonly replyTo: string;
  readonly body: string;
  readonly attributes: Record<string, string>;
}

/**
 * The responders: they take sub-requests from the fan-out target and answer each following the wire contract
 * (every `fanin-*` attribute copied, the reply sent to `fanin-reply-to`).
 */
export class Responders extends Loops {
  /** Reply body by aggregate and reply id. */
  public body: (aggregateId: string, replyId: string) => string = () => '{}';
  /** Replies expected per aggregate (its fan-out). */
  public readonly expected = new Map<string, number>();
  /** `performance.now()` just before the send holding an aggregate's last reply was made. */
  public readonly lastSentAt = new Map<string, number>();
  /** Keep answers for {@link release} instead of sending them at once. */
  public holding = false;
  private readonly held = new Map<string, HeldReply[]>();
  private heldCount = 0;
  private readonly sent = new Map<string, number>();
  private readonly sqs: SQSClient;
  private readonly queueUrl: string;

  public constructor(sqs: SQSClient, queueUrl: string) {
    super();
    this.sqs = sqs;
    this.queueUrl = queueUrl;
  }

  /** Starts `concurrency` responder loops. */
  public start(concurrency = 4): void {
    this.startLoops(Array.from({ length: concurrency }, () => () => this.answerOnce()));
  }

  /** Resolves when `count` answers are held; throws after `timeoutMs`. */
  public async waitHeld(count: number, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (this.heldCount < count) {
      if (Date.now() > deadline)
        throw new Error(`${this.heldCount} of ${count} sub-requests held after ${timeoutMs} ms`);
      await sleep(20);
    }
  }

  /**
   * Sends the held answers of `plan.ids` in an arrival pattern, one SQS call per send:
   * - `together`: all replies of an aggregate in one `SendMessageBatch`, aggregates taken up at
   *   `repliesPerSecond / fan-out` per second;
   * - `independent`: one `SendMessage` per reply, round-robin over `rotation` aggregates (an
   *   aggregate that has answered everything is replaced by the next), `repliesPerSecond` in all;
   * - `spread`: aggregates taken up as for `together`, each reply sent on its own after a
   *   lognormal delay drawn from a generator seeded by its aggregate and reply ids.
   *
   * @returns when everything is sent.
   */
  public async release(plan: ReleasePlan): Promise<void> {
    const queues = plan.ids.map((id) => [...(this.held.get(id) ?? [])]);
    const rate = plan.repliesPerSecond;
    const sends = SCHEDULES[plan.pattern](
      queues,
      (seq) => (Number.isFinite(rate) ? (seq * 1000) / rate : 0),
      plan,
    );
    for (const id of plan.ids) {
      this.heldCount -= this.held.get(id)?.length ?? 0;
      this.held.delete(id);
    }
    const started = performance.now();
    let next = 0;
    const sender = async (): Promise<void> => {
      while (next < sends.length) {
        const send = sends[next] as (typeof sends)[number];
        next += 1;
        const wait = started + send.due - performance.now();
        if (wait > 0) await sleep(wait);
        for (;;) {
          try {
            await this.send(send.replies);
            break;
          } catch {
            this.errors += 1;
            await sleep(100);
          }
        }
      }
    };
    await Promise.all(Array.from({ length: Math.max(1, plan.senders) }, sender));
  }

  private async send(replies: readonly HeldReply[]): Promise<void> {
    const now = performance.now();
    for (const reply of replies) {
      const count = (this.sent.get(reply.aggregateId) ?? 0) + 1;
      this.sent.set(reply.aggregateId, count);
      // Concurrent senders may finish an aggregate out of order: its last send is the latest one.
      if (count >= (this.expected.get(reply.aggregateId) ?? Number.POSITIVE_INFINITY))
        this.lastSentAt.set(reply.aggregateId, Math.max(now, this.lastSentAt.get(reply.aggregateId) ?? 0));
    }
    const attributesOf = (reply: HeldReply) =>
      Object.fromEntries(
        Object.entries(reply.attributes).map(([name, value]) => [
          name,
          { DataType: 'String', StringValue: value },
        ]),
      );
    const [first] = replies;
    if (replies.length === 1 && first) {
      await this.sqs.send(
        new SendMessageCommand({
          QueueUrl: first.replyTo,
          MessageBody: first.body,
          MessageAttributes: attributesOf(first),
        }),
      );
      return;
    }
    await this.sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: first?.replyTo ?? '',
        Entries: replies.map((reply, i) => ({
          Id: String(i),
          MessageBody: reply.body,
          MessageAttributes: attributesOf(reply),
        })),
      }),
    );
  }

  private async answerOnce(): Promise<void> {
    const { Messages = [] } = await this.sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: this.queueUrl,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: 1,
        MessageAttributeNames: ['All'],
      }),
    );
    if (Messages.length === 0) return;
    const byReplyTo = new Map<string, HeldReply[]>();
    for (const message of Messages) {
      const attributes: Record<string, string> = {};
      for (const [name, value] of Object.entries(message.MessageAttributes ?? {})) {
        if (name.startsWith('fanin-') && value.StringValue !== undefined)
          attributes[name] = value.StringValue;
      }
      const replyTo = attributes['fanin-reply-to'] ?? '';
      const aggregateId = attributes['fanin-aggregate-id'] ?? '';
      const replyId = attributes['fanin-reply-id'] ?? '';
      const reply = { aggregateId, replyTo, body: this.body(aggregateId, replyId), attributes };
      if (this.holding) {
        const list = this.held.get(aggregateId) ?? [];
        list.push(reply);
        this.held.set(aggregateId, list);
        this.heldCount += 1;
        continue;
      }
      const list = byReplyTo.get(replyTo) ?? [];
      list.push(reply);
      byReplyTo.set(replyTo, list);
    }
    for (const replies of byReplyTo.values()) await this.send(replies);
    await this.sqs.send(
      new DeleteMessageBatchCommand({
        QueueUrl: this.queueUrl,
        Entries: Messages.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle })),
      }),
    );
  }
}

/** One send of a release: when it is due (ms from the release) and the replies it carries. */
export interface Send {
  readonly due: number;
  readonly replies: HeldReply[];
}

/** When each reply of `queues` (one per aggregate, in order) is sent under a pattern; `at(n)`: the n-th's slot. */
type Schedule = (queues: HeldReply[][], at: (seq: number) => number, plan: ReleasePlan) => Send[];

/** The send schedule of each arrival pattern. */
export const SCHEDULES: Record<ArrivalPattern, Schedule> = {
  together: (queues, at) => {
    const sends: Send[] = [];
    let seq = 0;
    for (const replies of queues) {
      for (let i = 0; i < replies.length; i += 10)
        sends.push({ due: at(seq), replies: replies.slice(i, i + 10) });
      seq += replies.length;
    }
    return sends;
  },
  independent: (queues, at, plan) => {
    const sends: Send[] = [];
    const waiting = queues.map((q) => [...q]);
    const turn = waiting.splice(0, Math.max(1, plan.rotation));
    let cursor = 0;
    while (turn.length > 0) {
      cursor %= turn.length;
      const replies = turn[cursor] as HeldReply[];
      const reply = replies.shift();
      if (reply) sends.push({ due: at(sends.length), replies: [reply] });
      if (replies.length > 0) cursor += 1;
      else {
        const next = waiting.shift();
        if (next) turn[cursor] = next;
        else turn.splice(cursor, 1);
      }
    }
    return sends;
  },
  spread: (queues, at, plan) => {
    const sends: Send[] = [];
    let seq = 0;
    for (const replies of queues) {
      const start = at(seq);
      for (const reply of replies) {
        const random = seededBy(`spread/${reply.aggregateId}/${reply.attributes['fanin-reply-id'] ?? ''}`);
        // Box–Muller: a standard normal from two uniforms.
        const z = Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
        const delay = Math.min(plan.spread.maxMs, plan.spread.medianMs * Math.exp(plan.spread.sigma * z));
        sends.push({ due: start + delay, replies: [reply] });
      }
      seq += replies.length;
    }
    return sends.sort((a, b) => a.due - b.due);
  },
};
