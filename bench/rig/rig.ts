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
import { deprovisionTopology, provisionTopology } from '../../local/provision.ts';
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
import { tableShapeOf } from '../measure/capacity.ts';
import type { Meter } from '../measure/meter.ts';
import { sleep } from '../workload/sleep.ts';
import { OutputCollector } from './collector.ts';
import { DrainBatches } from './drain-batches.ts';
import { Responders } from './responders.ts';

/** The benchmark's own fanin: a fresh topology on the emulators. */
export class Rig {
  public readonly topology: Topology;
  public readonly meter: Meter;
  public readonly ctx: FaninContext;
  public readonly responders: Responders;
  public readonly collector: OutputCollector;
  /** The client producers and responders use (metered as `clients`). */
  public readonly clientSqs: SQSClient;
  /** The replies taken and the drains that took them. */
  public readonly drains = new DrainBatches();
  private readonly sqs: { readonly fanin: SQSClient; readonly esm: SQSClient };
  private readonly pollers: {
    readonly ingress: QueuePoller;
    replies: ReplyConsumer[];
    readonly timer: QueuePoller;
  };
  /** Reply consumers replaced by {@link setReplyBatching}, kept for {@link failures}. */
  private readonly retired: ReplyConsumer[] = [];
  /** The reply partitions' consumer settings in force (the topology's until {@link setReplyBatching}). */
  private replyConsumers: readonly ConsumerSpec[];
  private readonly makeReplyConsumer: (partition: number) => ReplyConsumer;
  private inFlight = 0;
  private lastInvocationEnd = 0;

  /** `fanin`: the topology provisioned, its table and fanin's metered clients. */
  private constructor(
    public readonly fanin: MeteredFanin,
    connection: Connection,
  ) {
    this.topology = fanin.topology;
    this.meter = fanin.meter;
    // One client per caller, so the meter can tell whose calls they are.
    this.sqs = { fanin: fanin.sqs, esm: createClients(connection).sqs };
    this.clientSqs = createClients(connection).sqs;
    this.meter.instrumentSqs(this.sqs.esm, 'esm', fanin.label);
    this.meter.instrumentSqs(this.clientSqs, 'clients', fanin.label);
    this.drains.instrument(this.sqs.fanin);
    this.ctx = createContext(fanin.config, { sqs: this.sqs.fanin, dynamo: fanin.dynamo });
    const context = () => this.ctx;
    const { queueUrls, replyQueueUrls } = fanin.provisioned;
    const consumers = this.topology.consumers;
    this.pollers = {
      ingress: this.poller('fan-out', queueUrls.ingress, makeFanOutHandler(context), consumers.fanOut),
      replies: [],
      timer: this.poller('timer', queueUrls.timer, makeTimerHandler(context), consumers.timer),
    };
    this.replyConsumers = this.topology.replyConsumers;
    this.makeReplyConsumer = this.replyConsumerFactory(context);
    this.pollers.replies = replyQueueUrls.map((_, i) => this.makeReplyConsumer(i));
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
      replyQueueUrls: this.fanin.provisioned.replyQueueUrls,
      timeoutMs: this.topology.functionTimeoutSeconds * 1000,
    }));
    return (partition) => {
      const consumer = this.replyConsumerOf(partition);
      const url = this.fanin.provisioned.replyQueueUrls[partition] ?? '';
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
    return new Rig(fanin, connection);
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
    if (batchingInForce(this.replyConsumers, batching)) return;
    const { windowSeconds, batchSize, drainIntervalSeconds = 0 } = batching;
    const described = describeTopology({
      ...this.fanin.options,
      replyBatchingWindowSeconds: windowSeconds,
      replyBatchSize: batchSize,
      replyDrainIntervalSeconds: drainIntervalSeconds,
    });
    await this.idle();
    // A drainer stops after the drain in flight; what it left on the queue goes to the next consumer.
    await Promise.all(this.pollers.replies.map((p) => p.stop()));
    this.retired.push(...this.pollers.replies);
    this.replyConsumers = described.replyConsumers;
    this.pollers.replies = this.fanin.provisioned.replyQueueUrls.map((_, i) => this.makeReplyConsumer(i));
    // A drainer's first drain is one interval from now, as a new schedule's first run.
    this.startReplyConsumers();
  }

  /** Starts the reply consumers in force, noting when a drain schedule starts (see {@link nextDrainAt}). */
  private startReplyConsumers(): void {
    for (const consumer of this.pollers.replies) consumer.start();
    // Every partition takes the same setting here (`setReplyBatching`): partition 0's interval is theirs.
    this.drains.scheduled(this.replyConsumerOf(0).drainIntervalSeconds ?? 0);
  }

  private replyConsumerOf(partition: number): ConsumerSpec {
    return this.replyConsumers[partition] ?? this.topology.consumers.reply;
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
          QueueUrl: this.fanin.provisioned.queueUrls.ingress,
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
        QueueUrl: this.fanin.provisioned.queueUrls.ingress,
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
    await this.fanin.teardown();
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
      if (name === 'reply') {
        for (const { messageAttributes, attributes } of event.Records)
          this.drains.noteSent(
            messageAttributes['fanin-aggregate-id']?.stringValue,
            Number(attributes.SentTimestamp),
          );
      }
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
      this.inFlight += 1;
      this.drains.begin(queueUrl);
      try {
        return await metered(event);
      } finally {
        const batches = this.drains.end(queueUrl);
        for (const batch of batches) {
          const aggregates = new Set(batch.map((m) => m.aggregateId ?? m.messageId));
          this.meter.add(`lambda.aggregates|${name}`, aggregates.size);
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

/** True when every reply partition's consumer already takes `batching` (nothing to redeploy). */
export function batchingInForce(consumers: readonly ConsumerSpec[], batching: ReplyBatching): boolean {
  const { windowSeconds, batchSize, drainIntervalSeconds = 0 } = batching;
  return consumers.every(
    (c) =>
      c.maxBatchingWindowSeconds === windowSeconds &&
      c.batchSize === batchSize &&
      (c.drainIntervalSeconds ?? 0) === drainIntervalSeconds,
  );
}

/**
 * What each queue is for, as the meter labels its calls: an output role's queue is `output`, a
 * reply partition `reply`, the fan-out target `target`, any other provisioned queue its role
 * (`ingress`, `timer`, …), and a URL of none of them `other`.
 */
export function queueLabeller(
  provisioned: {
    readonly queueUrls: Readonly<Record<string, string>>;
    readonly replyQueueUrls: readonly string[];
  },
  targetUrl?: string,
): (url: string) => string {
  const labels = new Map<string, string>(targetUrl ? [[targetUrl, 'target']] : []);
  for (const [role, url] of Object.entries(provisioned.queueUrls))
    labels.set(url, (OUTPUT_ROLES as readonly string[]).includes(role) ? 'output' : role);
  for (const url of provisioned.replyQueueUrls) labels.set(url, 'reply');
  return (url) => labels.get(url) ?? 'other';
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
  const label = queueLabeller(provisioned, targetUrl);
  const tableShape = tableShapeOf(topology.table);
  meter.registerTable(tableShape);
  const fanin = createClients(connection);
  meter.instrumentSqs(fanin.sqs, 'fanin', label);
  meter.instrumentDynamo(fanin.dynamoDb, 'fanin');
  return {
    meter,
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
