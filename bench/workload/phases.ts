import { PutItemCommand } from '@aws-sdk/client-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { aggregateKey } from '../../shared/adapters/dynamo-state-store.ts';
import { encodePayload } from '../../shared/adapters/payload-codec.ts';
import { packItem } from '../../shared/adapters/state-packs.ts';
import { itemSize, writeUnits } from '../measure/capacity.ts';
import { type Counters, diff } from '../measure/counters.ts';
import type { ArrivalPattern, ReleasePlan } from '../rig/responders.ts';
import type { Rig } from '../rig/rig.ts';
import { seededBy } from './random.ts';
import { sleep } from './sleep.ts';

/** Reply bodies of the benchmark. */
export const Bodies = {
  /** 1 KB: the size the cost figure is quoted for. */
  kilobyte(aggregateId: string, replyId: string): string {
    const random = seededBy(`${aggregateId}/${replyId}`);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
    const hex = (n: number) => Array.from({ length: n }, () => pick([...'0123456789abcdef'])).join('');
    const money = (max: number) => Math.round(random() * max * 100) / 100;
    const sentence = () =>
      Array.from({ length: 8 + Math.floor(random() * 6) }, () => pick(QUOTE_WORDS)).join(' ');
    const quote = {
      v: scoreOf(aggregateId, replyId),
      bank: `bank-${1 + Math.floor(random() * 5)}`,
      quoteId: hex(32),
      rate: Math.round(random() * 80_000) / 10_000,
      apr: Math.round(random() * 80_000) / 10_000,
      termMonths: pick([120, 180, 240, 360]),
      currency: 'USD',
      fees: ['origination', 'appraisal', 'underwriting'].map((type) => ({ type, amount: money(2_000) })),
      conditions: [sentence(), sentence(), sentence(), sentence()],
      validUntil: new Date(Date.UTC(2026, 11, 1 + Math.floor(random() * 30))).toISOString(),
      officer: { name: pick(['J. Doe', 'A. Smith', 'M. Garcia']), phone: `+1-555-0${hex(3)}` },
      ref: '',
    };
    const unpadded = JSON.stringify(quote);
    return JSON.stringify({ ...quote, ref: hex(Math.max(0, 1024 - Buffer.byteLength(unpadded))) });
  },
  /** A small reply (a score and an id, ~20 bytes): what the scale curve and the hot aggregate use. */
  small(aggregateId: string, replyId: string): string {
    return `{"v":${scoreOf(aggregateId, replyId)},"i":${JSON.stringify(replyId)}}`;
  },
} as const;

/** The words a quote's conditions are drawn from. */
const QUOTE_WORDS: readonly string[] = (
  'subject to credit approval rate lock valid for days after issue fixed term no prepayment penalty ' +
  'escrow required closing costs included in the offer appraisal of property insurance taxes borrower'
).split(' ');

/** Mean bytes a headline body takes in its reply item, stored as fanin stores it (200 samples). */
export function storedPayloadBytes(): number {
  let total = 0;
  for (let i = 0; i < 200; i += 1) {
    const stored = encodePayload(Bodies.kilobyte(`sample-${Math.floor(i / 10)}`, String(i % 10)));
    total += 'payloadBr' in stored ? stored.payloadBr.byteLength : Buffer.byteLength(stored.payload);
  }
  return Math.round(total / 200);
}

/** Write units per reply of ten kilobyte replies of one aggregate recorded as one pack. */
export function packedWriteUnitsPerReply(): number {
  let units = 0;
  for (let a = 0; a < 20; a += 1) {
    const aggregateId = `sample-${a}`;
    const replies = Array.from({ length: 10 }, (_, i) => ({
      replyId: String(i),
      payload: Bodies.kilobyte(aggregateId, String(i)),
      receivedAt: 1_790_000_000_000 + i,
      expiresAt: 1_800_000_000,
      messageId: `00000000-0000-4000-8000-00000000000${i}`,
    }));
    const item = packItem(aggregateKey(aggregateId), replies);
    units += writeUnits(itemSize(marshall(item, { convertClassInstanceToMap: false })));
  }
  return units / 20 / 10;
}

/** A deterministic value per reply, so condensed results are reproducible. */
function scoreOf(aggregateId: string, replyId: string): number {
  let hash = 7;
  for (const ch of `${aggregateId}/${replyId}`) hash = (hash * 31 + ch.charCodeAt(0)) % 1000;
  return hash;
}

/** A batch of aggregates driven end to end through fanin. */
export interface FaninWorkload {
  /** Definition name (a splitter to the responders queue). */
  readonly definition: string;
  /** Aggregate id prefix, unique per phase. */
  readonly idPrefix: string;
  readonly aggregates: number;
  readonly fanOut: number;
  readonly body: (aggregateId: string, replyId: string) => string;
  /** Requests per second (open loop); all at once when absent. */
  readonly requestsPerSecond?: number;
  /** Give up after this long. */
  readonly timeoutMs: number;
}

/** What one fanin phase measured. */
export type FaninPhaseResult = Awaited<ReturnType<typeof runFanin>>;

/** Aggregate ids of a workload. */
export function aggregateIds(workload: Pick<FaninWorkload, 'idPrefix' | 'aggregates'>): string[] {
  return Array.from(
    { length: workload.aggregates },
    (_, i) => `${workload.idPrefix}-${String(i).padStart(5, '0')}`,
  );
}

/** Runs aggregates end to end: requests to the ingress queue, the fan-out handler sends the sub-requests. */
export async function runFanin(rig: Rig, workload: FaninWorkload) {
  const { ids, requests } = prepare(rig, workload);
  await rig.idle();
  const before = rig.meter.snapshot();
  const started = performance.now();
  if (workload.requestsPerSecond === undefined) {
    await rig.sendRequests(requests);
  } else {
    const interval = 1000 / workload.requestsPerSecond;
    for (const [i, request] of requests.entries()) {
      const due = started + i * interval;
      const wait = due - performance.now();
      if (wait > 0) await sleep(wait);
      await rig.sendRequest(request);
    }
  }
  return (await collect(rig, workload, ids, { before, started })).result;
}

/** The workload's aggregate ids and requests, the responders told what to expect and answer. */
function prepare(rig: Rig, workload: Omit<FaninWorkload, 'requestsPerSecond'>) {
  const ids = aggregateIds(workload);
  for (const id of ids) rig.responders.expected.set(id, workload.fanOut);
  rig.responders.body = workload.body;
  const items = Array.from({ length: workload.fanOut }, (_, i) => i);
  const requests = ids.map((id) => ({
    definition: workload.definition,
    aggregateId: id,
    requestId: id,
    items,
  }));
  return { ids, requests };
}

/** Waits for every result, then for the handlers to be idle: what the phase counted and found. */
async function collect(
  rig: Rig,
  workload: Pick<FaninWorkload, 'fanOut' | 'timeoutMs'>,
  ids: readonly string[],
  from: { readonly before: Counters; readonly started: number },
) {
  await rig.collector.waitFor(ids, workload.timeoutMs);
  const finished = Math.max(...ids.map((id) => rig.collector.results.get(id)?.at ?? 0));
  await rig.idle();
  const counters = diff(rig.meter.snapshot(), from.before);
  const latenciesMs: number[] = [];
  const outcomes: Record<string, number> = {};
  for (const id of ids) {
    const result = rig.collector.results.get(id);
    const sent = rig.responders.lastSentAt.get(id);
    if (result) outcomes[result.type] = (outcomes[result.type] ?? 0) + 1;
    if (result && sent !== undefined) latenciesMs.push(result.at - sent);
  }
  const replies = ids.length * workload.fanOut;
  const elapsedMs = finished - from.started;
  const result = {
    aggregates: ids.length,
    replies,
    /** From the first request sent to the last result visible on an output queue. */
    elapsedMs,
    /** Last reply sent → result visible, per aggregate. */
    latenciesMs,
    /** Results by output type. */
    outcomes,
    /** Everything the meter counted during the phase (until the handlers were idle again). */
    counters,
  };
  return { result, finished };
}

/** A batch of aggregates whose replies the responders hold, then send in an arrival pattern. */
export interface ArrivalWorkload extends Omit<FaninWorkload, 'requestsPerSecond'> {
  readonly release: Omit<ReleasePlan, 'ids' | 'pattern'>;
  readonly pattern: ArrivalPattern;
  /** With the reply partitions drained. */
  readonly straddleDrain?: boolean;
}

/** How a drained phase's sending lies against the drains: `aligned` or `straddled`. */
export type DrainPhase = 'aligned' | 'straddled';

/** What one arrival phase measured: what a fanin phase measures, and how its replies arrived. */
export type ArrivalPhaseResult = Awaited<ReturnType<typeof runArrival>>;

/** Runs aggregates end to end with the replies in an arrival pattern: every request is sent at once. */
export async function runArrival(rig: Rig, workload: ArrivalWorkload) {
  const { ids, requests } = prepare(rig, workload);
  await rig.idle();
  const before = rig.meter.snapshot();
  const started = performance.now();
  rig.responders.holding = true;
  let released: number;
  let sendingEnded: number;
  try {
    await rig.sendRequests(requests);
    await rig.responders.waitHeld(ids.length * workload.fanOut, workload.timeoutMs);
    if (workload.straddleDrain) {
      await untilStraddling(rig, (ids.length * workload.fanOut * 1000) / workload.release.repliesPerSecond);
    }
    released = performance.now();
    await rig.responders.release({ ...workload.release, ids, pattern: workload.pattern });
    sendingEnded = performance.now();
  } finally {
    rig.responders.holding = false;
  }
  const { result, finished } = await collect(rig, workload, ids, { before, started });
  const drainIntervalSeconds = rig.replyBatching.drainIntervalSeconds ?? 0;
  const drainsDuringSending = rig.drains.startsBetween(released, sendingEnded);
  const firstDrain = drainsDuringSending[0];
  const drainPhase: DrainPhase = workload.straddleDrain ? 'straddled' : 'aligned';
  return {
    pattern: workload.pattern,
    /** The reply consumers' setting during the phase (batch size: most replies per invocation or batch). */
    batchingWindowSeconds: rig.replyBatching.windowSeconds,
    batchSize: rig.replyBatching.batchSize,
    /** 0: event sources. */
    drainIntervalSeconds,
    /** Drained partitions only: how the sending lay against the drains. */
    drainPhase: drainIntervalSeconds > 0 ? drainPhase : undefined,
    /** Drains (one per partition and interval) that started while the replies were being sent. */
    drainsDuringSending: drainsDuringSending.length,
    /** Drained partitions only: aggregates whose replies more than one drain took. */
    aggregatesSplitAcrossDrains: drainIntervalSeconds > 0 ? rig.drains.splitAcrossDrains(ids) : undefined,
    /** From the first reply released to the last sent. */
    sendingMs: sendingEnded - released,
    firstDrainAfterReleaseMs: firstDrain === undefined ? undefined : firstDrain - released,
    /** Per aggregate, its first reply's send to its last's, as the reply consumer received them. */
    replySpansMs: rig.drains.replySpansMs(ids),
    /** `Infinity`: as fast as the responders could send. */
    offeredRepliesPerSecond: workload.release.repliesPerSecond,
    ...result,
    releaseToLastResultMs: finished - released,
  };
}

/** Waits until half of `sendingMs` before the drainers' next drain that is at least that far off. */
async function untilStraddling(rig: Rig, sendingMs: number): Promise<void> {
  if (!Number.isFinite(sendingMs)) throw new Error('a straddled phase needs a paced release');
  const lead = sendingMs / 2;
  const drain = rig.drains.nextDrainAt(performance.now() + lead);
  if (drain === undefined) throw new Error('a straddled phase needs drained reply partitions');
  await sleep(drain - lead - performance.now());
}

/** The raw store capacity over one window: its mean and the rate in each second of it. */
export type CapacitySample = Awaited<ReturnType<typeof storeCapacity>>;

/**
 * The raw write capacity of the emulated store: plain `PutItem`s of reply-shaped items (same keys,
 * same body) by `concurrency` writers for `durationMs`, with an unmetered client.
 */
export async function storeCapacity(
  rig: Rig,
  options: {
    readonly concurrency: number;
    readonly durationMs: number;
    readonly body: string;
    /** Distinguishes the items of one measurement from another's, so each writes new items. */
    readonly label: string;
  },
) {
  const { dynamo } = rig.fanin.setup;
  const slices: number[] = [];
  const table = rig.fanin.provisioned.tableName;
  let writes = 0;
  let sequence = 0;
  const started = performance.now();
  const writer = async (): Promise<void> => {
    while (performance.now() - started < options.durationMs) {
      const n = sequence;
      sequence += 1;
      await dynamo.send(
        new PutItemCommand({
          TableName: table,
          Item: {
            pk: { S: `A#capacity-${options.label}-${Math.floor(n / 10)}` },
            sk: { S: `R#${n % 10}` },
            replyId: { S: String(n % 10) },
            payload: { S: options.body },
            receivedAt: { N: String(Date.now()) },
          },
        }),
      );
      writes += 1;
      const second = Math.floor((performance.now() - started) / 1000);
      slices[second] = (slices[second] ?? 0) + 1;
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, writer));
  const elapsedMs = performance.now() - started;
  // The last second is partial: left out of the per-second rates.
  const whole = Math.floor(options.durationMs / 1000);
  const perSecond = Array.from({ length: whole }, (_, i) => slices[i] ?? 0);
  // perSecond: writes in each whole second of the window.
  return { writes, elapsedMs, writesPerSecond: (writes * 1000) / elapsedMs, perSecond };
}

/** The p-th percentile (0–100) of a list, nearest rank. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank] ?? Number.NaN;
}
