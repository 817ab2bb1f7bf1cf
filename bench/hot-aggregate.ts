import {
  BatchGetItemCommand,
  CreateTableCommand,
  DeleteTableCommand,
  type DynamoDBClient,
  TransactWriteItemsCommand,
  waitUntilTableExists,
} from '@aws-sdk/client-dynamodb';
import { SendMessageBatchCommand } from '@aws-sdk/client-sqs';
import type { TableShape } from './capacity.ts';
import { type Counters, diff, type Meter, type TransactionRecord, total } from './meter.ts';
import { mulberry32 } from './random.ts';
import { type Rig, sleep } from './rig.ts';

/**
 * One aggregate receiving replies as fast as they come: what DynamoDB's per-partition limits
 * (1,000 write units per second per partition, and per item) mean for it.
 *
 * Every write of an aggregate shares one partition key, `A#<id>`: each reply is its own item
 * (distinct sort keys) and each recording transaction also adds to the header's counter. That is a
 * hot key by construction. This file holds
 * - {@link runHotAggregate}: the measurement through the real handlers on the emulator;
 * - {@link ShardedRecorder}: a prototype of the write-sharded layout (replies and counters spread
 *   over `A#<id>#<shard>`), measured on the same emulator — fanin's own code is not changed;
 * - {@link hotBounds} and {@link simulateHot}: the arithmetic and a small discrete-event model of
 *   the AWS limits, which the emulator does not enforce.
 */

/** What the hot-aggregate measurement found. */
export interface HotMeasurement {
  readonly replies: number;
  /** First reply sent → result visible. */
  readonly elapsedMs: number;
  readonly repliesPerSecond: number;
  /** Write units per reply, all-in (recording, completion, close) and recording only. */
  readonly writeUnitsPerReply: number;
  readonly recordingWriteUnitsPerReply: number;
  /** Recording write units per reply in each tenth of the replies, in arrival order: flat or not. */
  readonly recordingUnitsPerReplyByDecile: readonly number[];
  /** Recording transactions and the replies per transaction. */
  readonly transactions: number;
  readonly meanRepliesPerTransaction: number;
  readonly transactionSizes: Readonly<Record<string, number>>;
  /** Transactions cancelled because another writer held the header (each retried by fanin). */
  readonly conflicts: number;
  /** Peak write units per second on the aggregate's one partition key, as the emulator absorbed them. */
  readonly peakUnitsPerSecondOnKey: number;
  /** Share of all write units that landed on the aggregate's partition key. */
  readonly shareOnAggregateKey: number;
  /** Write units that landed on the `open` index's keys for the definition (keys only: at open and close, not per transaction). */
  readonly indexUnitsOnDefinitionKey: number;
  readonly outcome: string;
  readonly counters: Counters;
}

/**
 * Opens one aggregate (fan-out `none`, `expected` = `replies`) and sends it `replies` replies as
 * fast as `senders` concurrent batch senders can, to the reply partition fanin routes it to.
 */
export async function runHotAggregate(
  rig: Rig,
  options: {
    readonly definition: string;
    readonly replies: number;
    readonly senders: number;
    readonly timeoutMs: number;
  },
): Promise<HotMeasurement> {
  const id = `hot-${Date.now().toString(36)}`;
  await rig.sendRequest({
    definition: options.definition,
    aggregateId: id,
    requestId: id,
    expected: options.replies,
  });
  const opened = Date.now() + 30_000;
  // Fan-out `none`: the aggregate is open, with nothing to dispatch, once its header is written.
  while (!(await rig.ctx.store.getHeader(id))) {
    if (Date.now() > opened) throw new Error(`hot aggregate ${id} was not opened`);
    await sleep(50);
  }
  const replyTo = await rig.ctx.replies.replyTo(id);
  await rig.idle();
  const meter = rig.meter;
  meter.transactions.length = 0;
  meter.keyUnits.clear();
  meter.recordTransactions = true;
  meter.trackKeys = true;
  const before = meter.snapshot();
  const started = performance.now();
  let next = 0;
  const sender = async (): Promise<void> => {
    while (next < options.replies) {
      const first = next;
      next = Math.min(options.replies, next + 10);
      await rig.clientSqs.send(
        new SendMessageBatchCommand({
          QueueUrl: replyTo,
          Entries: Array.from({ length: next - first }, (_, i) => {
            const replyId = String(first + i);
            return {
              Id: String(i),
              MessageBody: `{"v":${(first + i) % 997},"i":"${replyId}"}`,
              MessageAttributes: {
                'fanin-aggregate-id': { DataType: 'String', StringValue: id },
                'fanin-reply-id': { DataType: 'String', StringValue: replyId },
                'fanin-definition': { DataType: 'String', StringValue: options.definition },
              },
            };
          }),
        }),
      );
    }
  };
  await Promise.all(Array.from({ length: options.senders }, sender));
  await rig.collector.waitFor([id], options.timeoutMs);
  const result = rig.collector.results.get(id);
  const elapsedMs = (result?.at ?? performance.now()) - started;
  await rig.idle();
  meter.recordTransactions = false;
  meter.trackKeys = false;
  const counters = diff(meter.snapshot(), before);
  const key = `A#${id}`;
  const recording = meter.transactions.filter(
    (t) => t.who === 'fanin:reply' && t.partitionKey === key && t.puts > 0,
  );
  const units = total(counters, 'ddb.wcu', (who) => who.startsWith('fanin'));
  const recordingUnits = recording.reduce((sum, t) => sum + t.units, 0);
  const allKeys = [...meter.keyUnits.values()].reduce((sum, n) => sum + n, 0);
  return {
    replies: options.replies,
    elapsedMs,
    repliesPerSecond: (options.replies * 1000) / elapsedMs,
    writeUnitsPerReply: units / options.replies,
    recordingWriteUnitsPerReply: recordingUnits / options.replies,
    recordingUnitsPerReplyByDecile: deciles(recording, options.replies),
    transactions: recording.length,
    meanRepliesPerTransaction: options.replies / Math.max(1, recording.length),
    transactionSizes: histogram(recording.map((t) => t.puts)),
    conflicts: total(
      counters,
      'ddb.tx_cancelled',
      (who, reason) => who === 'fanin:reply' && reason.includes('TransactionConflict'),
    ),
    peakUnitsPerSecondOnKey: peakPerSecond(recording),
    shareOnAggregateKey: (meter.keyUnits.get(`table:${key}`) ?? 0) / Math.max(1, allKeys),
    // The definition's keys in the `open` index (`<definition>#<shard>`).
    indexUnitsOnDefinitionKey: [...meter.keyUnits.entries()]
      .filter(([k]) => k.startsWith(`open:${options.definition}#`))
      .reduce((sum, [, units]) => sum + units, 0),
    outcome: result?.type ?? 'none',
    counters,
  };
}

/** Recording units per reply in each tenth of the replies, by the order the transactions returned. */
function deciles(transactions: readonly TransactionRecord[], replies: number): number[] {
  const sorted = [...transactions].sort((a, b) => a.at - b.at);
  const buckets = Array.from({ length: 10 }, () => ({ units: 0, replies: 0 }));
  let seen = 0;
  for (const t of sorted) {
    const bucket = buckets[Math.min(9, Math.floor((seen * 10) / Math.max(1, replies)))];
    if (bucket) {
      bucket.units += t.units;
      bucket.replies += t.puts;
    }
    seen += t.puts;
  }
  return buckets.map((b) => (b.replies === 0 ? 0 : b.units / b.replies));
}

function histogram(values: readonly number[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const value of values) counts[String(value)] = (counts[String(value)] ?? 0) + 1;
  return counts;
}

/** The busiest one-second window of a list of transactions, in write units. */
function peakPerSecond(transactions: readonly TransactionRecord[]): number {
  if (transactions.length === 0) return 0;
  const sorted = [...transactions].sort((a, b) => a.at - b.at);
  let peak = 0;
  let windowUnits = 0;
  let start = 0;
  for (const t of sorted) {
    windowUnits += t.units;
    while ((sorted[start]?.at ?? t.at) < t.at - 1000) {
      windowUnits -= sorted[start]?.units ?? 0;
      start += 1;
    }
    peak = Math.max(peak, windowUnits);
  }
  return peak;
}

/**
 * A prototype of write sharding for one hot aggregate, NOT fanin's code: reply `r` is stored under
 * `A#<id>#<hash(r) mod S>` with a counter item `C` per shard, each shard's replies and counter
 * written in one transaction (exactly once, as fanin does); completion sums the S counters with
 * one consistent `BatchGetItem`. With S = 1 it is fanin's layout without the `open` index.
 */
export class ShardedRecorder {
  private readonly client: DynamoDBClient;
  public readonly tableName: string;
  public readonly shards: number;

  public constructor(options: {
    readonly client: DynamoDBClient;
    readonly tableName: string;
    readonly shards: number;
  }) {
    this.client = options.client;
    this.tableName = options.tableName;
    this.shards = options.shards;
  }

  /** The table shape for the meter. */
  public get shape(): TableShape {
    return { name: this.tableName, partitionKey: 'pk', sortKey: 'sk', indexes: [] };
  }

  /** Creates the prototype's table (keys only). */
  public async createTable(): Promise<void> {
    await this.client
      .send(
        new CreateTableCommand({
          TableName: this.tableName,
          BillingMode: 'PAY_PER_REQUEST',
          AttributeDefinitions: [
            { AttributeName: 'pk', AttributeType: 'S' },
            { AttributeName: 'sk', AttributeType: 'S' },
          ],
          KeySchema: [
            { AttributeName: 'pk', KeyType: 'HASH' },
            { AttributeName: 'sk', KeyType: 'RANGE' },
          ],
        }),
      )
      .catch((error: Error) => {
        if (error.name !== 'ResourceInUseException') throw error;
      });
    await waitUntilTableExists({ client: this.client, maxWaitTime: 60 }, { TableName: this.tableName });
  }

  /** Deletes the table. */
  public async deleteTable(): Promise<void> {
    await this.client.send(new DeleteTableCommand({ TableName: this.tableName })).catch(() => undefined);
  }

  /** The shard of a reply: a stable hash, so a redelivered reply meets its first copy. */
  public shardOf(replyId: string): number {
    let hash = 0;
    for (let i = 0; i < replyId.length; i += 1) hash = (hash * 31 + replyId.charCodeAt(i)) | 0;
    return Math.abs(hash) % this.shards;
  }

  /** Records one consumer batch: one transaction per shard touched. @returns replies counted so far. */
  public async record(
    aggregateId: string,
    replies: readonly { id: string; body: string }[],
  ): Promise<number> {
    const groups = new Map<number, { id: string; body: string }[]>();
    for (const reply of replies) {
      const shard = this.shardOf(reply.id);
      groups.set(shard, [...(groups.get(shard) ?? []), reply]);
    }
    await Promise.all(
      [...groups.entries()].map(([shard, group]) => {
        const pk = { S: `A#${aggregateId}#${shard}` };
        return this.client.send(
          new TransactWriteItemsCommand({
            TransactItems: [
              ...group.map((reply) => ({
                Put: {
                  TableName: this.tableName,
                  Item: {
                    pk,
                    sk: { S: `R#${reply.id}` },
                    replyId: { S: reply.id },
                    payload: { S: reply.body },
                  },
                  ConditionExpression: 'attribute_not_exists(sk)',
                },
              })),
              {
                Update: {
                  TableName: this.tableName,
                  Key: { pk, sk: { S: 'C' } },
                  UpdateExpression: 'ADD received :n',
                  ExpressionAttributeValues: { ':n': { N: String(group.length) } },
                },
              },
            ],
          }),
        );
      }),
    );
    return this.count(aggregateId);
  }

  /** Sums the shard counters (what a completion check reads). */
  public async count(aggregateId: string): Promise<number> {
    const keys = Array.from({ length: this.shards }, (_, shard) => ({
      pk: { S: `A#${aggregateId}#${shard}` },
      sk: { S: 'C' },
    }));
    let sum = 0;
    for (let i = 0; i < keys.length; i += 100) {
      const { Responses } = await this.client.send(
        new BatchGetItemCommand({
          RequestItems: { [this.tableName]: { Keys: keys.slice(i, i + 100), ConsistentRead: true } },
        }),
      );
      for (const item of Responses?.[this.tableName] ?? []) sum += Number(item.received?.N ?? '0');
    }
    return sum;
  }
}

/** What one sharded-prototype run measured on the emulator. */
export interface ShardedMeasurement {
  readonly shards: number;
  readonly batch: number;
  readonly replies: number;
  readonly writeUnitsPerReply: number;
  readonly readUnitsPerReply: number;
  readonly transactionsPerReply: number;
  /** Share of the write units on the busiest partition key (1 / shards when even). */
  readonly busiestKeyShare: number;
  readonly repliesPerSecondOnEmulator: number;
}

/**
 * Drives the sharded prototype with `replies` replies in consumer batches of `batch`, `consumers`
 * at a time (as the reply partition's Lambda concurrency would), metered under `role`.
 */
export async function measureSharded(
  meter: Meter,
  recorder: ShardedRecorder,
  options: {
    readonly replies: number;
    readonly batch: number;
    readonly consumers: number;
    readonly role: string;
  },
): Promise<ShardedMeasurement> {
  const aggregateId = `proto-${recorder.shards}-${options.batch}-${Date.now().toString(36)}`;
  meter.keyUnits.clear();
  meter.trackKeys = true;
  const before = meter.snapshot();
  const started = performance.now();
  let next = 0;
  const consumer = async (): Promise<void> => {
    while (next < options.replies) {
      const first = next;
      next = Math.min(options.replies, next + options.batch);
      const batch = Array.from({ length: next - first }, (_, i) => ({
        id: String(first + i),
        body: `{"v":${(first + i) % 997},"i":"${first + i}"}`,
      }));
      await recorder.record(aggregateId, batch);
    }
  };
  await Promise.all(Array.from({ length: options.consumers }, consumer));
  const elapsedMs = performance.now() - started;
  meter.trackKeys = false;
  const counters = diff(meter.snapshot(), before);
  const ours = (who: string) => who === options.role;
  const keyTotals = [...meter.keyUnits.values()];
  const allUnits = keyTotals.reduce((sum, n) => sum + n, 0);
  return {
    shards: recorder.shards,
    batch: options.batch,
    replies: options.replies,
    writeUnitsPerReply: total(counters, 'ddb.wcu', ours) / options.replies,
    readUnitsPerReply: total(counters, 'ddb.rcu', ours) / options.replies,
    transactionsPerReply:
      total(counters, 'ddb.calls', (who, op) => ours(who) && op === 'TransactWriteItems') / options.replies,
    busiestKeyShare: Math.max(0, ...keyTotals) / Math.max(1, allUnits),
    repliesPerSecondOnEmulator: (options.replies * 1000) / elapsedMs,
  };
}

/** A layout and consumer setting for one hot aggregate, in DynamoDB units. */
export interface HotDesign {
  readonly name: string;
  /** Write shards of the aggregate (1 = fanin today). */
  readonly shards: number;
  /** Replies a consumer takes per invocation (Lambda batch size; fanin's reply topology uses 10). */
  readonly batch: number;
  /** Concurrent consumers on the aggregate's partition (fanin: 5 per reply partition). */
  readonly consumers: number;
  /** Standard write units of one reply item (1 up to 1 KB). */
  readonly replyUnits: number;
  /** Standard write units of the counter (header) item. */
  readonly headerUnits: number;
  /** Index write units per recording transaction on ONE key for the whole definition (fanin's `open` index). */
  readonly indexUnitsPerTransaction: number;
  /** Whether DynamoDB has split the aggregate's item collection by sort key ("split for heat"). */
  readonly splitForHeat: boolean;
  /** What a throttled transaction does: fail the batch back to SQS (fanin as first built) or back off and retry (fanin now). */
  readonly onThrottle: 'redeliver' | 'backoff';
}

/** The per-key limits of DynamoDB and the latencies assumed for AWS. */
export interface AwsLimits {
  /** Write units per second one partition (and one item) sustains. */
  readonly keyUnitsPerSecond: number;
  /** TransactWriteItems latency, ms (the header is held this long). */
  readonly transactionMs: number;
  /** Per-invocation time besides the transaction: receive, read the header, decide, delete. */
  readonly overheadMs: number;
  /** The reply queue's visibility timeout: when a failed batch comes back. */
  readonly visibilityTimeoutSeconds: number;
}

/** The bounds one design meets, in replies per second for one aggregate. */
export interface HotBounds {
  /** Write units per reply on the aggregate's keys (transactional: 2 per KB per item). */
  readonly unitsPerReply: number;
  /** Replies per recording transaction. */
  readonly repliesPerTransaction: number;
  /** The counter item(s): 1,000 units/s per item, 2 units per transactional update. */
  readonly counterItemBound: number;
  /** The partition key(s) when DynamoDB has not split them. */
  readonly partitionBound: number;
  /** The definition's key in the `open` index, shared by every aggregate of the definition. */
  readonly indexKeyBound: number;
  /** Conflicts: one transaction at a time holds a counter item. */
  readonly conflictBound: number;
  /** What the consumers could do if nothing else stopped them. */
  readonly consumerBound: number;
  /** The smallest of the above. */
  readonly bound: number;
  readonly bindingConstraint: string;
}

/** The arithmetic: each limit of {@link HotBounds} for a design. */
export function hotBounds(design: HotDesign, limits: AwsLimits): HotBounds {
  const perTransaction = Math.max(1, design.batch / design.shards);
  const transactionsPerSecondPerCounter = limits.keyUnitsPerSecond / (2 * design.headerUnits);
  const unitsPerReply = 2 * design.replyUnits + (2 * design.headerUnits) / perTransaction;
  const counterItemBound = design.shards * transactionsPerSecondPerCounter * perTransaction;
  const partitionBound = design.splitForHeat
    ? Number.POSITIVE_INFINITY
    : (design.shards * limits.keyUnitsPerSecond) / unitsPerReply;
  const indexKeyBound =
    design.indexUnitsPerTransaction > 0
      ? (limits.keyUnitsPerSecond / design.indexUnitsPerTransaction) * perTransaction
      : Number.POSITIVE_INFINITY;
  const conflictBound = design.shards * (1000 / limits.transactionMs) * perTransaction;
  const consumerBound = (design.consumers * design.batch * 1000) / (limits.transactionMs + limits.overheadMs);
  const all = { counterItemBound, partitionBound, indexKeyBound, conflictBound, consumerBound };
  const [bindingConstraint, bound] = Object.entries(all).reduce((min, entry) =>
    entry[1] < min[1] ? entry : min,
  );
  return { unitsPerReply, repliesPerTransaction: perTransaction, ...all, bound, bindingConstraint };
}

/** What {@link simulateHot} found. */
export interface HotSimulation {
  readonly design: string;
  readonly replies: number;
  /** Until the last reply was recorded (a group failed back to SQS returns a visibility timeout later). */
  readonly seconds: number;
  /** 95 % of the replies over the time they took: the rate the aggregate sustains. */
  readonly sustainedRepliesPerSecond: number;
  readonly transactions: number;
  readonly conflicts: number;
  readonly throttles: number;
  /** Groups failed back to SQS (redelivered after the visibility timeout). */
  readonly redeliveries: number;
}

/**
 * A discrete-event model of one hot aggregate on AWS: `consumers` invocations each take `batch`
 * replies, write each shard's group in one transaction, and take the next batch `overheadMs` after
 * the last one returns. Keys have token buckets of `keyUnitsPerSecond` (empty at the start, at most one
 * second full, so the result is the steady state and not a first-second burst): the
 * counter item always, the aggregate's partition unless split for heat, and the definition's key in
 * the `open` index. A transaction meeting a counter held by another is cancelled and retried after
 * fanin's jitter (20·2^attempt ms, at most 10 times, then the group fails back to SQS); a throttled
 * one either fails back to SQS (fanin as first built) or backs off the same way (fanin now).
 */
export function simulateHot(design: HotDesign, limits: AwsLimits, replies: number, seed = 1): HotSimulation {
  const random = mulberry32(seed);
  const rate = limits.keyUnitsPerSecond / 1000;
  const buckets = new Map<string, { tokens: number; at: number }>();
  const bucketAt = (key: string, now: number): { tokens: number; at: number } => {
    // Buckets start empty: no burst credit, so the figure is the steady state, not the first second.
    const bucket = buckets.get(key) ?? { tokens: 0, at: 0 };
    bucket.tokens = Math.min(limits.keyUnitsPerSecond, bucket.tokens + (now - bucket.at) * rate);
    bucket.at = now;
    buckets.set(key, bucket);
    return bucket;
  };
  /** Takes units from every key, or from none when one of them lacks them (the write is throttled). */
  const take = (charges: readonly (readonly [string, number])[], now: number): boolean => {
    // A bucket holds at most a second of capacity: a larger write would be retried forever.
    if (charges.some(([, units]) => units > limits.keyUnitsPerSecond))
      throw new Error(
        `${design.name}: one write needs more than a key's ${limits.keyUnitsPerSecond} units/s`,
      );
    if (charges.some(([key, units]) => bucketAt(key, now).tokens < units)) return false;
    for (const [key, units] of charges) bucketAt(key, now).tokens -= units;
    return true;
  };
  const heldUntil = new Map<number, number>();
  const queue = new EventQueue();
  const backlog: number[] = [];
  for (let i = 0; i < replies; i += 1) backlog.push(i);
  const stats = {
    transactions: 0,
    conflicts: 0,
    throttles: 0,
    redeliveries: 0,
    recorded: 0,
    finishedAt: 0,
    at95: 0,
  };
  const consumerPending = new Map<number, number>();

  const startBatch = (consumer: number, now: number): void => {
    const batch = backlog.splice(0, design.batch);
    if (batch.length === 0) {
      // Replies failed back to SQS come back later: look again then.
      if (stats.recorded < replies) queue.push(now + 100, () => startBatch(consumer, now + 100));
      return;
    }
    const groups = new Map<number, number[]>();
    for (const reply of batch) {
      const shard = reply % design.shards;
      groups.set(shard, [...(groups.get(shard) ?? []), reply]);
    }
    consumerPending.set(consumer, groups.size);
    for (const [shard, group] of groups) queue.push(now, () => attempt(consumer, shard, group, 0, now));
  };
  const groupDone = (consumer: number, now: number): void => {
    const left = (consumerPending.get(consumer) ?? 1) - 1;
    consumerPending.set(consumer, left);
    if (left === 0) queue.push(now + limits.overheadMs, () => startBatch(consumer, now + limits.overheadMs));
  };
  const failBack = (consumer: number, group: number[], now: number): void => {
    stats.redeliveries += 1;
    const back = now + limits.visibilityTimeoutSeconds * 1000;
    queue.push(back, () => backlog.push(...group));
    groupDone(consumer, now);
  };
  const attempt = (consumer: number, shard: number, group: number[], tries: number, now: number): void => {
    const retry = (): void => {
      if (tries >= 10) {
        failBack(consumer, group, now);
        return;
      }
      const at = now + random() * Math.min(1000, 20 * 2 ** tries);
      queue.push(at, () => attempt(consumer, shard, group, tries + 1, at));
    };
    if ((heldUntil.get(shard) ?? 0) > now) {
      stats.conflicts += 1;
      retry();
      return;
    }
    const itemUnits = 2 * design.headerUnits;
    const partitionUnits = 2 * design.replyUnits * group.length + itemUnits;
    const charges: [string, number][] = [[`counter#${shard}`, itemUnits]];
    if (!design.splitForHeat) charges.push([`partition#${shard}`, partitionUnits]);
    if (design.indexUnitsPerTransaction > 0) charges.push(['index', design.indexUnitsPerTransaction]);
    const admitted = take(charges, now);
    if (!admitted) {
      stats.throttles += 1;
      if (design.onThrottle === 'redeliver') failBack(consumer, group, now);
      else retry();
      return;
    }
    stats.transactions += 1;
    heldUntil.set(shard, now + limits.transactionMs);
    const done = now + limits.transactionMs;
    queue.push(done, () => {
      stats.recorded += group.length;
      if (stats.at95 === 0 && stats.recorded >= 0.95 * replies) stats.at95 = done;
      if (stats.recorded >= replies) stats.finishedAt = done;
      groupDone(consumer, done);
    });
  };

  for (let consumer = 0; consumer < design.consumers; consumer += 1)
    queue.push(0, () => startBatch(consumer, 0));
  while (stats.recorded < replies) {
    const event = queue.pop();
    if (!event) break;
    event();
  }
  const seconds = stats.finishedAt / 1000;
  return {
    design: design.name,
    replies,
    seconds,
    sustainedRepliesPerSecond: (0.95 * replies * 1000) / Math.max(stats.at95, 1e-9),
    transactions: stats.transactions,
    conflicts: stats.conflicts,
    throttles: stats.throttles,
    redeliveries: stats.redeliveries,
  };
}

/** A min-heap of timed callbacks (ties in insertion order). */
class EventQueue {
  private readonly heap: { at: number; seq: number; run: () => void }[] = [];
  private seq = 0;

  public push(at: number, run: () => void): void {
    this.heap.push({ at, seq: this.seq++, run });
    let i = this.heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.before(i, parent)) break;
      this.swap(i, parent);
      i = parent;
    }
  }

  public pop(): (() => void) | undefined {
    const top = this.heap[0];
    const last = this.heap.pop();
    if (!top || !last) return undefined;
    if (this.heap.length > 0) {
      this.heap[0] = last;
      let i = 0;
      for (;;) {
        const left = 2 * i + 1;
        const right = left + 1;
        let smallest = i;
        if (left < this.heap.length && this.before(left, smallest)) smallest = left;
        if (right < this.heap.length && this.before(right, smallest)) smallest = right;
        if (smallest === i) break;
        this.swap(i, smallest);
        i = smallest;
      }
    }
    return top.run;
  }

  private before(a: number, b: number): boolean {
    const x = this.heap[a];
    const y = this.heap[b];
    if (!x || !y) return false;
    return x.at < y.at || (x.at === y.at && x.seq < y.seq);
  }

  private swap(a: number, b: number): void {
    const x = this.heap[a];
    const y = this.heap[b];
    if (!x || !y) return;
    this.heap[a] = y;
    this.heap[b] = x;
  }
}
