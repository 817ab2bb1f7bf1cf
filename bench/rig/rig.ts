import { randomBytes } from 'node:crypto';
import {
  CreateQueueCommand,
  DeleteQueueCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { SQSEvent } from 'aws-lambda';
import {
  type DrainReport,
  makeFanOutHandler,
  makeReplyDrainHandler,
  makeReplyHandler,
  makeTimerHandler,
  type ReplyDrainEvent,
} from '../../functions/handlers.ts';
import { QueueDrainer } from '../../local/drainer.ts';
import { QueuePoller } from '../../local/poller.ts';
import { deprovisionTopology, type Provisioned, provisionTopology } from '../../local/provision.ts';
import { createContext } from '../../shared/app.ts';
import { type Connection, createClients, createDocumentClient } from '../../shared/aws/clients.ts';
import type { DefinitionInput } from '../../shared/engine/definition.ts';
import {
  type ConsumerSpec,
  describeTopology,
  OUTPUT_ROLES,
  QueueRole,
  type Topology,
  type TopologyOptions,
} from '../../shared/topology/topology.ts';
import type { FaninContext } from '../../shared/use-cases/context.ts';
import { type TableShape, tableShapeOf } from '../measure/capacity.ts';
import type { Meter } from '../measure/meter.ts';
import { sleep } from '../workload/sleep.ts';
import { OutputCollector } from './collector.ts';
import { DrainBatches } from './drain-batches.ts';
import { Responders } from './responders.ts';

/** The benchmark's own fanin: a fresh topology on the emulators. */
export class Rig {
  public readonly topology: Topology;
  public readonly provisioned: Provisioned;
  public readonly meter: Meter;
  public readonly ctx: FaninContext;
  /** The fan-out target the responders read (a queue name, resolved by the sender). */
  public readonly targetName: string;
  public readonly responders: Responders;
  public readonly collector: OutputCollector;
  /** The state table, for capacity accounting. */
  public readonly tableShape: TableShape;
  /** The unmetered clients used for setup and for the raw-capacity measurement. */
  public readonly setupClients: MeteredFanin['setup'];
  /** The client producers and responders use (metered as `clients`). */
  public readonly clientSqs: SQSClient;
  private readonly sqs: { readonly fanin: SQSClient; readonly esm: SQSClient };
  private readonly teardown: () => Promise<void>;
  private readonly pollers: {
    readonly ingress: QueuePoller;
    replies: ReplyConsumer[];
    readonly timer: QueuePoller;
  };
  /** Reply consumers replaced by {@link setReplyBatching}, kept for {@link failures}. */
  private readonly retired: ReplyConsumer[] = [];
  /** The batches of the drains in progress, from the drains' own SQS calls. */
  private readonly drainBatches = new DrainBatches();
  /** First and last `SentTimestamp` (ms) of the replies of each aggregate the reply handler took. */
  private readonly replySent = new Map<string, { first: number; last: number }>();
  /** Per aggregate, the drains (numbered from 1 in the order they started) whose batches held its replies. */
  private readonly drainsOf = new Map<string, Set<number>>();
  /** Drains started so far, so each has a number. */
  private drainsStarted = 0;
  /** When each drain started (`performance.now()`), in order. */
  private readonly drainStarts: number[] = [];
  /** When the drainers in force were started (`performance.now()`), and their interval (ms). */
  private drainSchedule: { readonly startedAt: number; readonly intervalMs: number } | undefined;
  /** The reply partitions' consumer settings in force (the topology's until {@link setReplyBatching}). */
  private replyConsumers: readonly ConsumerSpec[];
  private readonly makeReplyConsumer: (partition: number) => ReplyConsumer;
  /** How the topology was described, to describe it again with other reply batching settings. */
  private readonly topologyOptions: TopologyOptions;
  private inFlight = 0;
  private lastInvocationEnd = 0;

  private constructor(meter: Meter, fanin: MeteredFanin, targetName: string, connection: Connection) {
    this.topology = fanin.topology;
    this.provisioned = fanin.provisioned;
    this.meter = meter;
    this.targetName = targetName;
    this.tableShape = fanin.tableShape;
    this.setupClients = fanin.setup;
    this.topologyOptions = fanin.options;
    this.teardown = fanin.teardown;
    // One client per caller, so the meter can tell whose calls they are.
    this.sqs = { fanin: fanin.sqs, esm: createClients(connection).sqs };
    this.clientSqs = createClients(connection).sqs;
    meter.instrumentSqs(this.sqs.esm, 'esm', fanin.label);
    meter.instrumentSqs(this.clientSqs, 'clients', fanin.label);
    this.drainBatches.instrument(this.sqs.fanin);
    this.ctx = createContext(fanin.config, { sqs: this.sqs.fanin, dynamo: fanin.dynamo });
    const context = () => this.ctx;
    const { queueUrls } = this.provisioned;
    const consumers = this.topology.consumers;
    this.pollers = {
      ingress: this.poller('fan-out', queueUrls.ingress, makeFanOutHandler(context), consumers.fanOut),
      replies: [],
      timer: this.poller('timer', queueUrls.timer, makeTimerHandler(context), consumers.timer),
    };
    this.replyConsumers = this.topology.replyConsumers;
    this.makeReplyConsumer = this.replyConsumerFactory(context);
    this.pollers.replies = this.provisioned.replyQueueUrls.map((_, i) => this.makeReplyConsumer(i));
    this.responders = new Responders(this.clientSqs, fanin.targetUrl ?? '');
    this.collector = new OutputCollector(this.clientSqs, [
      queueUrls[QueueRole.COMPLETED],
      queueUrls[QueueRole.TIMED_OUT],
      queueUrls[QueueRole.ERROR],
      queueUrls[QueueRole.LATE],
      queueUrls[QueueRole.UNKNOWN],
    ]);
  }

  /** A Lambda-style event source on `queueUrl`, configured as the CDK stack configures it. */
  private poller(
    name: string,
    queueUrl: string,
    handler: (event: SQSEvent) => Promise<unknown>,
    spec: { batchSize: number; maxConcurrency: number; maxBatchingWindowSeconds: number },
  ): QueuePoller {
    return new QueuePoller({
      sqs: this.sqs.esm,
      queueUrl,
      handler: this.track(name, handler) as ConstructorParameters<typeof QueuePoller>[0]['handler'],
      batchSize: spec.batchSize,
      // As the CDK stack configures each event source (per reply partition for the replies).
      maxBatchingWindowSeconds: spec.maxBatchingWindowSeconds,
      concurrency: spec.maxConcurrency,
      waitTimeSeconds: 1,
      // A failed batch is retried after a second, not after the queue's 3-minute visibility
      // timeout: the benchmark reports failures, it should not stall on them.
      failedVisibilitySeconds: 1,
    });
  }

  /** A reply partition's consumer by its setting in force: an event source. */
  private replyConsumerFactory(context: () => FaninContext): (partition: number) => ReplyConsumer {
    const drainHandler = makeReplyDrainHandler(context, () => ({
      sqs: this.sqs.fanin,
      replyQueueUrls: this.provisioned.replyQueueUrls,
      timeoutMs: this.topology.functionTimeoutSeconds * 1000,
    }));
    return (partition) => {
      const consumer = this.replyConsumerOf(partition);
      const url = this.provisioned.replyQueueUrls[partition] ?? '';
      const interval = consumer.drainIntervalSeconds ?? 0;
      if (interval === 0) return this.poller('reply', url, makeReplyHandler(context), consumer);
      return new QueueDrainer({
        drain: this.trackDrain('reply', url, drainHandler),
        partition,
        batchSize: consumer.batchSize,
        intervalMs: interval * 1000,
      });
    };
  }

  /** Provisions a fresh topology. */
  public static async start(
    meter: Meter,
    definitions: readonly DefinitionInput[],
    connection: Connection,
  ): Promise<Rig> {
    const prefix = `bench${randomBytes(3).toString('hex')}`;
    const targetName = `${prefix}-responders`;
    const resolved = definitions.map((definition) =>
      definition.fanOut?.type === 'splitter' && definition.fanOut.target === RESPONDERS
        ? { ...definition, fanOut: { ...definition.fanOut, target: targetName } }
        : definition,
    );
    const fanin = await meteredFanin(connection, meter, { prefix, definitions: resolved }, targetName);
    return new Rig(meter, fanin, targetName, connection);
  }

  /** Starts the fan-out and reply consumers, the responders and the output collector. */
  public start(): void {
    this.pollers.ingress.start();
    this.startReplyConsumers();
    this.responders.start();
    this.collector.start();
  }

  /** The reply consumers' setting now in force (partition 0's; the topology's unless changed). */
  public get replyBatching(): ReplyBatching {
    const consumer = this.replyConsumerOf(0);
    return {
      windowSeconds: consumer.maxBatchingWindowSeconds,
      batchSize: consumer.batchSize,
      drainIntervalSeconds: consumer.drainIntervalSeconds ?? 0,
    };
  }

  /**
   * Replaces the reply consumers by those of the same topology described with `replyBatchingWindowSeconds:
   * windowSeconds`, `replyBatchSize: batchSize` and `replyDrainIntervalSeconds: drainIntervalSeconds` (every
   * partition), as a redeploy would: an event source per partition, or with an interval a drainer on it (the
   * topology validates the setting: above 10 replies a batch needs a window of at least 1 s or a drain; a
   * drain has no window and an interval of whole minutes).
   */
  public async setReplyBatching(batching: ReplyBatching): Promise<void> {
    const { windowSeconds, batchSize, drainIntervalSeconds = 0 } = batching;
    if (
      this.replyConsumers.every(
        (c) =>
          c.maxBatchingWindowSeconds === windowSeconds &&
          c.batchSize === batchSize &&
          (c.drainIntervalSeconds ?? 0) === drainIntervalSeconds,
      )
    )
      return;
    const described = describeTopology({
      ...this.topologyOptions,
      replyBatchingWindowSeconds: windowSeconds,
      replyBatchSize: batchSize,
      replyDrainIntervalSeconds: drainIntervalSeconds,
    });
    await this.idle();
    // A drainer stops after the drain in flight; what it left on the queue goes to the next consumer.
    await Promise.all(this.pollers.replies.map((p) => p.stop()));
    this.retired.push(...this.pollers.replies);
    this.replyConsumers = described.replyConsumers;
    this.pollers.replies = this.provisioned.replyQueueUrls.map((_, i) => this.makeReplyConsumer(i));
    // A drainer's first drain is one interval from now, as a new schedule's first run.
    this.startReplyConsumers();
  }

  /** When the drainers in force will next drain after `after` (`performance.now()` time). */
  public nextDrainAt(after = performance.now()): number | undefined {
    const schedule = this.drainSchedule;
    if (!schedule) return undefined;
    const intervals = Math.max(0, Math.floor((after - schedule.startedAt) / schedule.intervalMs)) + 1;
    return schedule.startedAt + intervals * schedule.intervalMs;
  }

  /** When the drains that started from `from` to `to` did. */
  public drainStartsBetween(from: number, to: number): number[] {
    return this.drainStarts.filter((t) => t >= from && t <= to);
  }

  /** How many of `aggregateIds` had their replies taken by more than one drain. */
  public aggregatesSplitAcrossDrains(aggregateIds: readonly string[]): number {
    return aggregateIds.filter((id) => (this.drainsOf.get(id)?.size ?? 0) > 1).length;
  }

  /** How long each of `aggregateIds`' replies took to arrive, first to last. */
  public replySpansMs(aggregateIds: readonly string[]): number[] {
    return aggregateIds.flatMap((id) => {
      const sent = this.replySent.get(id);
      return sent ? [sent.last - sent.first] : [];
    });
  }

  /** Starts the reply consumers in force, noting when a drain schedule starts (see {@link nextDrainAt}). */
  private startReplyConsumers(): void {
    for (const consumer of this.pollers.replies) consumer.start();
    // Every partition takes the same setting here (`setReplyBatching`): partition 0's interval is theirs.
    const interval = this.replyConsumerOf(0).drainIntervalSeconds ?? 0;
    this.drainSchedule =
      interval > 0 ? { startedAt: performance.now(), intervalMs: interval * 1000 } : undefined;
  }

  private replyConsumerOf(partition: number): ConsumerSpec {
    const consumer = this.replyConsumers[partition] ?? this.topology.consumers.reply;
    return consumer;
  }

  /** Starts the timer consumer (kept off otherwise: the timers of most phases are not due during the run). */
  public startTimers(): void {
    this.pollers.timer.start();
  }

  /** Failed records and poller errors so far, for the report's sanity section. */
  public failures(): { failedRecords: number; pollerErrors: number } {
    const all = [this.pollers.ingress, ...this.pollers.replies, ...this.retired, this.pollers.timer];
    return {
      failedRecords: all.reduce((sum, p) => sum + p.stats.failures, 0),
      pollerErrors: all.reduce((sum, p) => sum + p.stats.errors, 0),
    };
  }

  /** Sends requests to the ingress queue in batches of ten, as a producer would. */
  public async sendRequests(bodies: readonly unknown[]): Promise<void> {
    for (let i = 0; i < bodies.length; i += 10) {
      await this.clientSqs.send(
        new SendMessageBatchCommand({
          QueueUrl: this.provisioned.queueUrls.ingress,
          Entries: bodies
            .slice(i, i + 10)
            .map((body, j) => ({ Id: String(j), MessageBody: JSON.stringify(body) })),
        }),
      );
    }
  }

  /** Sends one request (open-loop pacing sends them one at a time). */
  public async sendRequest(body: unknown): Promise<void> {
    await this.clientSqs.send(
      new SendMessageCommand({
        QueueUrl: this.provisioned.queueUrls.ingress,
        MessageBody: JSON.stringify(body),
      }),
    );
  }

  /** Resolves once no handler has run for `quietMs` (completions finish after their result is visible). */
  public async idle(quietMs = 300, timeoutMs = 60_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (this.inFlight > 0 || performance.now() - this.lastInvocationEnd < quietMs) {
      if (Date.now() > deadline) throw new Error(`handlers still busy after ${timeoutMs} ms`);
      await sleep(50);
    }
  }

  /** Stops every loop and deletes the topology. */
  public async stop(): Promise<void> {
    await Promise.all([
      this.pollers.ingress.stop(),
      ...this.pollers.replies.map((p) => p.stop()),
      this.pollers.timer.stop(),
      this.responders.stop(),
      this.collector.stop(),
    ]);
    await this.teardown();
  }

  private noteReplySent(event: SQSEvent): void {
    for (const record of event.Records) {
      this.noteSent(
        record.messageAttributes['fanin-aggregate-id']?.stringValue,
        Number(record.attributes.SentTimestamp),
      );
    }
  }

  private noteSent(id: string | undefined, sent: number | undefined): void {
    if (id === undefined || sent === undefined || !Number.isFinite(sent)) return;
    const seen = this.replySent.get(id);
    if (seen) {
      seen.first = Math.min(seen.first, sent);
      seen.last = Math.max(seen.last, sent);
    } else this.replySent.set(id, { first: sent, last: sent });
  }

  private noteDrained(id: string | undefined, drainNumber: number): void {
    if (id === undefined) return;
    const drains = this.drainsOf.get(id) ?? new Set<number>();
    drains.add(drainNumber);
    this.drainsOf.set(id, drains);
  }

  private track(name: string, handler: (event: SQSEvent) => Promise<unknown>) {
    const metered = this.meter.wrapHandler(name, handler);
    return async (event: SQSEvent) => {
      // How many aggregates a batch spans: replies per aggregate per batch is what the arrival
      // pattern decides, and what the state protocol can share a write across.
      const aggregates = new Set(
        event.Records.map((r) => r.messageAttributes['fanin-aggregate-id']?.stringValue ?? r.messageId),
      );
      this.meter.add(`lambda.aggregates|${name}`, aggregates.size);
      this.meter.add(`lambda.batches|${name}`);
      if (name === 'reply') this.noteReplySent(event);
      this.inFlight += 1;
      try {
        return await metered(event);
      } finally {
        this.inFlight -= 1;
        this.lastInvocationEnd = performance.now();
      }
    };
  }

  /** A drain of `queueUrl` as {@link track} follows a poller's invocation. */
  private trackDrain(
    name: string,
    queueUrl: string,
    drain: (event: ReplyDrainEvent) => Promise<DrainReport>,
  ): (event: ReplyDrainEvent) => Promise<DrainReport> {
    const metered = this.meter.wrapDrain(name, drain);
    return async (event) => {
      this.drainsStarted += 1;
      const drainNumber = this.drainsStarted;
      this.drainStarts.push(performance.now());
      this.inFlight += 1;
      this.drainBatches.begin(queueUrl);
      try {
        return await metered(event);
      } finally {
        const batches = this.drainBatches.end(queueUrl);
        for (const batch of batches) {
          const aggregates = new Set(batch.map((m) => m.aggregateId ?? m.messageId));
          this.meter.add(`lambda.aggregates|${name}`, aggregates.size);
          for (const message of batch) {
            this.noteSent(message.aggregateId, message.sentAt);
            this.noteDrained(message.aggregateId, drainNumber);
          }
        }
        this.meter.add(`lambda.batches|${name}`, batches.length);
        this.inFlight -= 1;
        this.lastInvocationEnd = performance.now();
      }
    };
  }
}

/** A reply partition's consumer: an event source's poller, or the drainer of a drained partition. */
type ReplyConsumer = QueuePoller | QueueDrainer;

/** A reply consumer's setting. */
export interface ReplyBatching {
  readonly windowSeconds: number;
  readonly batchSize: number;
  /** Drained every this many seconds instead of an event source; 0 or absent: an event source. */
  readonly drainIntervalSeconds?: number;
}

/** Placeholder for the responders queue in a definition's `fanOut.target`. */
export const RESPONDERS = '<responders>';

/** A topology provisioned afresh with fanin's metered clients: what the rig and `run/open-time.ts` share. */
type MeteredFanin = Awaited<ReturnType<typeof meteredFanin>>;

/** Provisions the topology of `options` (and a queue named `target`), its table and fanin's clients metered. */
export async function meteredFanin(
  connection: Connection,
  meter: Meter,
  options: TopologyOptions,
  target?: string,
) {
  const topology = describeTopology(options);
  const setupClients = createClients(connection);
  const setup = { sqs: setupClients.sqs, dynamo: setupClients.dynamoDb };
  const provisioned = await provisionTopology(topology, setup);
  const targetUrl =
    target === undefined
      ? undefined
      : (await setup.sqs.send(new CreateQueueCommand({ QueueName: target }))).QueueUrl;
  if (target !== undefined && !targetUrl) throw new Error(`no URL for the queue ${target}`);
  const labels = new Map<string, string>(targetUrl ? [[targetUrl, 'target']] : []);
  for (const [role, url] of Object.entries(provisioned.queueUrls))
    labels.set(url, (OUTPUT_ROLES as readonly string[]).includes(role) ? 'output' : role);
  for (const url of provisioned.replyQueueUrls) labels.set(url, 'reply');
  const label = (url: string) => labels.get(url) ?? 'other';
  const tableShape = tableShapeOf(topology.table);
  meter.registerTable(tableShape);
  const fanin = createClients(connection);
  meter.instrumentSqs(fanin.sqs, 'fanin', label);
  meter.instrumentDynamo(fanin.dynamoDb, 'fanin');
  return {
    options,
    topology,
    provisioned,
    tableShape,
    /** The unmetered clients of the setup. */
    setup,
    /** fanin's own clients, metered as `fanin`. */
    sqs: fanin.sqs,
    dynamo: createDocumentClient(fanin.dynamoDb),
    /** What each queue is for, as the meter labels its calls (`ingress`, `reply`, `output`, `target`). */
    label,
    /** The configuration fanin's handlers take (`createContext`). */
    config: {
      tableName: provisioned.tableName,
      queueUrls: provisioned.queueUrls,
      replyQueueUrls: provisioned.replyQueueUrls,
      definitions: topology.definitions,
    },
    /** The queue named `target` at creation (a fan-out target, not the deployment's). */
    targetUrl,
    /** Deletes that queue and the topology. */
    teardown: async () => {
      if (targetUrl)
        await setup.sqs.send(new DeleteQueueCommand({ QueueUrl: targetUrl })).catch(() => undefined);
      await deprovisionTopology(provisioned, setup);
    },
  };
}
