import { SendMessageBatchCommand } from '@aws-sdk/client-sqs';
import { KEY_SEPARATOR } from '../../shared/adapters/state-keys.ts';
import { type Counters, diff, total } from '../measure/counters.ts';
import type { Meter } from '../measure/meter.ts';
import type { Rig } from '../rig/rig.ts';
import { sleep } from './sleep.ts';

/** One aggregate receiving replies as fast as they come. */

/** What the hot-aggregate measurement found, for one layout (the definition's `writeShards`). */
export type HotMeasurement = Awaited<ReturnType<typeof runHotAggregate>>;

/**
 * Opens one aggregate (fan-out `none`, `expected` = `replies`) and sends it `replies` replies as fast as
 * `senders` concurrent batch senders can, to the reply partition fanin routes it to.
 */
export async function runHotAggregate(
  rig: Rig,
  options: {
    readonly definition: string;
    readonly replies: number;
    readonly senders: number;
    readonly timeoutMs: number;
  },
) {
  const definition = rig.ctx.definitions.get(options.definition);
  if (!definition) throw new Error(`hot aggregate: no definition ${options.definition}`);
  const id = `hot-${definition.writeShards}-${Date.now().toString(36)}`;
  const replyTo = await openHot(rig, id, options);
  await rig.idle();
  const meter = rig.meter;
  meter.keyUnits.clear();
  meter.keyReadUnits.clear();
  meter.trackKeys = true;
  const before = meter.snapshot();
  const started = performance.now();
  try {
    await sendReplies(rig, id, replyTo, options);
    await rig.collector.waitFor([id], options.timeoutMs);
  } catch (error) {
    meter.trackKeys = false;
    const what = `writeShards ${definition.writeShards}, ${options.replies} replies`;
    throw new Error(`hot aggregate ${id} (${what}): ${String(error)}`);
  }
  const result = rig.collector.results.get(id);
  const elapsedMs = (result?.at ?? performance.now()) - started;
  await rig.idle();
  meter.trackKeys = false;
  return {
    definition: options.definition,
    writeShards: definition.writeShards,
    replies: options.replies,
    batchingWindowSeconds: rig.replyBatching.windowSeconds,
    /** First reply sent → result visible. */
    elapsedMs,
    /** On the emulator, which enforces no per-partition limit. */
    repliesPerSecond: (options.replies * 1000) / elapsedMs,
    ...hotFigures(diff(meter.snapshot(), before), byKey(meter, id), options.replies),
    outcome: result?.type ?? 'none',
  };
}

/** Opens the aggregate `id` and returns the reply partition fanin routes it to. */
async function openHot(
  rig: Rig,
  id: string,
  options: { definition: string; replies: number },
): Promise<string> {
  const request = {
    definition: options.definition,
    aggregateId: id,
    requestId: id,
    expected: options.replies,
  };
  await rig.sendRequest(request);
  const opened = Date.now() + 30_000;
  // Fan-out `none`: the aggregate is open, with nothing to dispatch, once its header is written.
  while (!(await rig.ctx.store.getHeader(id))) {
    if (Date.now() > opened) throw new Error(`hot aggregate ${id} was not opened within 30 s`);
    await sleep(50);
  }
  return rig.ctx.replies.replyTo(id);
}

/** Sends the replies in batches of ten from `senders` concurrent senders, as fast as they go. */
async function sendReplies(
  rig: Rig,
  id: string,
  queueUrl: string,
  options: { definition: string; replies: number; senders: number },
): Promise<void> {
  const attribute = (value: string) => ({ DataType: 'String', StringValue: value });
  let next = 0;
  const sender = async (): Promise<void> => {
    while (next < options.replies) {
      const first = next;
      next = Math.min(options.replies, next + 10);
      const entries = Array.from({ length: next - first }, (_, i) => ({
        Id: String(i),
        MessageBody: `{"v":${(first + i) % 997},"i":"${first + i}"}`,
        MessageAttributes: {
          'fanin-aggregate-id': attribute(id),
          'fanin-reply-id': attribute(String(first + i)),
          'fanin-definition': attribute(options.definition),
        },
      }));
      await rig.clientSqs.send(new SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: entries }));
    }
  };
  await Promise.all(Array.from({ length: options.senders }, sender));
}

/** Table write and read units per partition key of the aggregate `id`. */
export function byKey(
  meter: Meter,
  id: string,
): { writes: Record<string, number>; reads: Record<string, number> } {
  const own = `table:A#${id}`;
  const labelled = (units: Map<string, number>) => {
    const out: Record<string, number> = {};
    for (const [key, n] of units) {
      if (key === own) out['shard 0'] = n;
      else if (key.startsWith(`${own}${KEY_SEPARATOR}`)) out[keyLabel(key.slice(own.length + 1))] = n;
    }
    return out;
  };
  return { writes: labelled(meter.keyUnits), reads: labelled(meter.keyReadUnits) };
}

/** The measurement's per-reply and per-key figures. */
export function hotFigures(
  counters: Counters,
  keys: { writes: Record<string, number>; reads: Record<string, number> },
  replies: number,
) {
  const replyHandler = (who: string) => who === 'fanin:reply';
  const units = total(counters, 'ddb.wcu', (who) => who.startsWith('fanin'));
  const recording = total(counters, 'ddb.wcu', (who, op) => replyHandler(who) && op === 'PutItem');
  const invocations = total(counters, 'lambda.invocations', (who) => who === 'reply');
  const records = total(counters, 'lambda.records', (who) => who === 'reply');
  const perInvocation = (n: number) => n / Math.max(1, invocations);
  const callsPerInvocation: Record<string, number> = {};
  for (const op of ['GetItem', 'PutItem', 'UpdateItem', 'Query', 'TransactWriteItems']) {
    const calls = total(counters, 'ddb.calls', (who, detail) => replyHandler(who) && detail === op);
    callsPerInvocation[op] = Math.round((1000 * calls) / Math.max(1, invocations)) / 1000;
  }
  const unitsByKey = keys.writes;
  const keyTotal = Object.values(unitsByKey).reduce((sum, n) => sum + n, 0);
  const [busiestKey, busiest] = Object.entries(unitsByKey).reduce<[string, number]>(
    (max, entry) => (entry[1] > max[1] ? entry : max),
    ['none', 0],
  );
  // Besides the reply puts: the counters on their own keys, the rest (seal, close) on the header's.
  const counterUnits = Object.entries(unitsByKey)
    .filter(([key]) => key.startsWith('counter'))
    .reduce((sum, [, n]) => sum + n, 0);
  const other = Math.max(0, keyTotal - recording - counterUnits);
  const replyUnitsByKey = Object.entries(unitsByKey)
    .filter(([key]) => key.startsWith('shard'))
    .map(([key, n]) => (key === 'shard 0' ? n - other : n));
  const readOf = (op?: string) =>
    total(counters, 'ddb.rcu', (who, detail) => who.startsWith('fanin') && (!op || detail === op)) / replies;
  return {
    /** All-in (recording, the completion trigger, seal, close). */
    writeUnitsPerReply: units / replies,
    /** The reply `PutItem`s only. */
    recordingWriteUnitsPerReply: recording / replies,
    /** Other table writes on the header's key `A#<id>` (the seal, the close). */
    headerKeyOtherWriteUnitsPerReply: other / replies,
    readUnitsPerReply: readOf(),
    headerReadUnitsPerReply: readOf('GetItem'),
    setReadUnitsPerReply: readOf('Query'),
    transactions: total(counters, 'ddb.calls', (who, op) => replyHandler(who) && op === 'TransactWriteItems'),
    invocations,
    repliesPerInvocation: perInvocation(records),
    /** DynamoDB calls of the reply handler per invocation, by operation. */
    callsPerInvocation,
    /** Table write units per partition key of the aggregate (`shard 0` is `A#<id>`, the header's key). */
    unitsByKey,
    busiestKey,
    busiestKeyShare: busiest / Math.max(1e-9, keyTotal),
    /** What 1,000 units/s per key divides (3,000 for the reads on the key read most). */
    busiestKeyWriteUnitsPerReply: busiest / replies,
    readUnitsByKey: keys.reads,
    busiestKeyReadUnitsPerReply: Math.max(0, ...Object.values(keys.reads)) / replies,
    /** Sequential DynamoDB round trips per reply handler invocation (parallel calls count once). */
    roundTripsPerInvocation: perInvocation(total(counters, 'ddb.round_trips', (who) => who === 'reply')),
    /** Share of the reply puts' units on the key that got most of them (1/S when even). */
    busiestKeyReplyShare: Math.max(0, ...replyUnitsByKey) / Math.max(1e-9, recording),
    counters,
  };
}

/** The suffix after the key separator: `s3` → `shard 3`; `c3`. */
function keyLabel(suffix: string): string {
  return suffix.startsWith('c') ? `counter ${suffix.slice(1)}` : `shard ${suffix.slice(1)}`;
}
