import { replyShard } from '../../shared/engine/members.ts';
import { mulberry32 } from '../workload/random.ts';

/**
 * One hot aggregate on AWS under DynamoDB's per-partition limits (1,000 write and 3,000 read units per
 * second per key), which the emulator enforces none of: {@link hotBounds} and {@link simulateHot}.
 */

/** One layout of a hot aggregate on AWS, in the measured figures: what each reply writes. */
export interface HotDesign {
  readonly name: string;
  /** `writeShards`: partition keys the reply items are spread over (shard 0 is the header's key). */
  readonly shards: number;
  /** Write units of one reply put (1 for a stored form up to 1 KB). */
  readonly replyUnits: number;
  /** Other write units per reply on the busiest key (a per-batch completion trigger, the seal, the close). */
  readonly headerKeyWriteUnitsPerReply: number;
  /** Read units per reply on the key read most, as measured per key. */
  readonly headerKeyReadUnitsPerReply: number;
  /** Replies per invocation (Lambda batch; fanin's reply topology uses 10). */
  readonly batch: number;
  /** Concurrent invocations on the aggregate's reply partition (fanin's topology: 5). */
  readonly consumers: number;
  /** Sequential DynamoDB round trips per invocation (the puts of a batch go in parallel: one). */
  readonly roundTrips: number;
}

/** DynamoDB's per-key limits and the latencies assumed for AWS. */
export interface AwsLimits {
  /** Write units per second one partition key sustains. */
  readonly keyWriteUnitsPerSecond: number;
  /** Read units per second one partition key sustains. */
  readonly keyReadUnitsPerSecond: number;
  /** One DynamoDB call, ms. */
  readonly callMs: number;
  /** Per invocation besides the DynamoDB calls, ms. */
  readonly overheadMs: number;
  /** The state store's in-place retries of a throttled put. */
  readonly throttleRetries: number;
  /** The reply queue's visibility timeout: when a record failed back to SQS comes back. */
  readonly visibilityTimeoutSeconds: number;
}

/**
 * The bounds one design meets, in replies per second for one aggregate: each limit over what one reply
 * takes of it.
 */
export function hotBounds(design: HotDesign, limits: AwsLimits) {
  const busiestKeyWriteUnitsPerReply = design.replyUnits / design.shards + design.headerKeyWriteUnitsPerReply;
  const writeBound = limits.keyWriteUnitsPerSecond / busiestKeyWriteUnitsPerReply;
  const readBound =
    design.headerKeyReadUnitsPerReply > 0
      ? limits.keyReadUnitsPerSecond / design.headerKeyReadUnitsPerReply
      : Number.POSITIVE_INFINITY;
  const invocationMs = design.roundTrips * limits.callMs + limits.overheadMs;
  const consumerBound = (design.consumers * design.batch * 1000) / invocationMs;
  const all = { writeBound, readBound, consumerBound };
  const [bindingConstraint, bound] = Object.entries(all).reduce((min, entry) =>
    entry[1] < min[1] ? entry : min,
  );
  return {
    /** Shard 0 holds 1/S of the replies and the header. */
    busiestKeyWriteUnitsPerReply,
    /** 1,000 write units/s on the busiest key, 3,000 read units/s on the header's, consumers × batch. */
    ...all,
    dynamoBound: Math.min(writeBound, readBound),
    bound,
    bindingConstraint,
  };
}

/** A discrete-event model of one hot aggregate on AWS, with the protocol as it is. */
export function simulateHot(design: HotDesign, limits: AwsLimits, replies: number, seed = 1) {
  const sim = new HotSimulator(design, limits, replies, mulberry32(seed));
  for (let consumer = 0; consumer < design.consumers; consumer += 1)
    sim.queue.push(0, () => sim.startBatch(0));
  // Every event either records, retries a bounded number of times, or waits for a redelivery: bounded.
  let events = 0;
  const maxEvents = 200 * replies + 1_000_000;
  while (sim.stats.recorded < replies) {
    const event = sim.queue.pop();
    if (!event) break;
    event();
    events += 1;
    if (events > maxEvents)
      throw new Error(`${design.name}: simulation did not finish in ${maxEvents} events`);
  }
  return {
    design: design.name,
    replies,
    /** Until the last reply was recorded. */
    seconds: sim.stats.finishedAt / 1000,
    /** 95 % of the replies over the time they took: the rate the aggregate sustains. */
    sustainedRepliesPerSecond: (0.95 * replies * 1000) / Math.max(sim.stats.at95, 1e-9),
    /** Put attempts refused by a key's limit (each retried in place after a jittered back-off). */
    throttles: sim.stats.throttles,
    /** Replies whose put exhausted its retries: failed back to SQS. */
    redeliveries: sim.stats.redeliveries,
  };
}

/** The state of {@link simulateHot}: the keys' buckets, the replies waiting, the events due. */
class HotSimulator {
  public readonly queue = new EventQueue();
  public readonly stats = { throttles: 0, redeliveries: 0, recorded: 0, finishedAt: 0, at95: 0 };
  private readonly buckets = new Map<number, { tokens: number; at: number }>();
  private readonly backlog: number[];
  private readonly batchUnits: number;

  public constructor(
    private readonly design: HotDesign,
    private readonly limits: AwsLimits,
    private readonly replies: number,
    private readonly random: () => number,
  ) {
    this.backlog = Array.from({ length: replies }, (_, i) => i);
    this.batchUnits = design.headerKeyWriteUnitsPerReply * design.batch;
  }

  /** Takes `units` from a key's bucket, or nothing when it lacks them (the write is throttled). */
  private take(key: number, units: number, now: number): boolean {
    const max = this.limits.keyWriteUnitsPerSecond;
    const bucket = this.buckets.get(key) ?? { tokens: 0, at: 0 };
    bucket.tokens = Math.min(max, bucket.tokens + (now - bucket.at) * (max / 1000));
    bucket.at = now;
    this.buckets.set(key, bucket);
    if (bucket.tokens < units) return false;
    bucket.tokens -= units;
    return true;
  }

  /** One write with the adapter's back-off: `done(true)` once written, `done(false)` after the last retry. */
  private write(key: number, units: number, now: number, done: (ok: boolean, at: number) => void): void {
    const { callMs, throttleRetries } = this.limits;
    const attempt = (tries: number, at: number): void => {
      if (this.take(key, units, at)) {
        this.queue.push(at + callMs, () => done(true, at + callMs));
        return;
      }
      this.stats.throttles += 1;
      if (tries >= throttleRetries) {
        this.queue.push(at + callMs, () => done(false, at + callMs));
        return;
      }
      const next = at + callMs + this.random() * Math.min(1000, 20 * 2 ** tries);
      this.queue.push(next, () => attempt(tries + 1, next));
    };
    attempt(0, now);
  }

  /** An invocation takes the next batch: the header read, then every reply's put in parallel. */
  public startBatch(now: number): void {
    const batch = this.backlog.splice(0, this.design.batch);
    if (batch.length === 0) {
      // Replies failed back to SQS come back later: look again then.
      if (this.stats.recorded < this.replies) this.queue.push(now + 100, () => this.startBatch(now + 100));
      return;
    }
    // Reading the header before the puts.
    const putsAt = now + this.limits.callMs;
    let pending = batch.length;
    let recorded = 0;
    let last = putsAt;
    for (const reply of batch) {
      const key = replyShard(String(reply), this.design.shards);
      this.queue.push(putsAt, () =>
        this.write(key, this.design.replyUnits, putsAt, (ok, at) => {
          if (ok) recorded += 1;
          else {
            this.stats.redeliveries += 1;
            this.queue.push(at + this.limits.visibilityTimeoutSeconds * 1000, () => this.backlog.push(reply));
          }
          last = Math.max(last, at);
          pending -= 1;
          if (pending === 0) this.afterPuts(batch.length, recorded, last);
        }),
      );
    }
  }

  /** The batch's puts are done: its per-batch write on the header's key, the rest of its round trips. */
  private afterPuts(size: number, recorded: number, now: number): void {
    const { stats, design, limits } = this;
    stats.recorded += recorded;
    if (stats.at95 === 0 && stats.recorded >= 0.95 * this.replies) stats.at95 = now;
    if (stats.recorded >= this.replies) stats.finishedAt = now;
    // The rest of the invocation's round trips (the header read before the puts and the puts are
    // done); the per-batch write on the header's key is one of them, timed by `write`.
    const units = (this.batchUnits * size) / design.batch;
    const rest = Math.max(0, design.roundTrips - 2 - (units > 0 ? 1 : 0)) * limits.callMs + limits.overheadMs;
    if (units <= 0) {
      this.queue.push(now + rest, () => this.startBatch(now + rest));
      return;
    }
    // Throttled past its retries, it fails the batch's records back to SQS: already recorded, they are
    // duplicates then.
    this.write(0, units, now, (_ok, at) => this.queue.push(at + rest, () => this.startBatch(at + rest)));
  }
}

/** Timed callbacks, earliest first (ties in insertion order); a sorted list, as few are ever due at once. */
class EventQueue {
  private readonly due: { at: number; run: () => void }[] = [];

  public push(at: number, run: () => void): void {
    // After every callback due at or before `at`: a binary search for the first one due later.
    let low = 0;
    let high = this.due.length;
    while (low < high) {
      const mid = (low + high) >> 1;
      if ((this.due[mid]?.at ?? 0) <= at) low = mid + 1;
      else high = mid;
    }
    this.due.splice(low, 0, { at, run });
  }

  public pop(): (() => void) | undefined {
    return this.due.shift()?.run;
  }
}
