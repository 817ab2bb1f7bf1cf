import { randomBytes } from 'node:crypto';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  CreateQueueCommand,
  DeleteMessageBatchCommand,
  DeleteQueueCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { SQSEvent } from 'aws-lambda';
import { makeFanOutHandler, makeReplyHandler, makeTimerHandler } from '../functions/handlers.ts';
import { createContext } from '../shared/app.ts';
import { createDocumentClient, createDynamoClient, createSqsClient } from '../shared/aws/clients.ts';
import type { DefinitionInput } from '../shared/engine/definition.ts';
import { QueuePoller } from '../local/poller.ts';
import { deprovisionTopology, type Provisioned, provisionTopology } from '../local/provision.ts';
import {
  type ConsumerSpec,
  describeTopology,
  OUTPUT_ROLES,
  QueueRole,
  type Topology,
  type TopologyOptions,
} from '../shared/topology/topology.ts';
import type { FaninContext } from '../shared/use-cases/context.ts';
import type { TableShape } from './capacity.ts';
import type { Meter } from './meter.ts';
import { seededBy } from './random.ts';

/**
 * The benchmark's own fanin: a fresh topology on the emulators, the real handlers behind
 * Lambda-style pollers, and the load generator's parts (producer, responders, output collector).
 *
 * Four SQS clients keep the bill apart: `fanin` (the handlers' own calls), `esm` (the pollers:
 * on AWS, Lambda's event source mapping makes these receives and deletes, billed to the account),
 * `clients` (producers, responders and result consumers) and an unmetered one for setup.
 */
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
  private readonly sqs: { readonly fanin: SQSClient; readonly esm: SQSClient; readonly clients: SQSClient };
  private readonly setup: { readonly sqs: SQSClient; readonly dynamo: DynamoDBClient };
  private readonly pollers: {
    readonly ingress: QueuePoller;
    replies: QueuePoller[];
    readonly timer: QueuePoller;
  };
  /** Reply pollers replaced by {@link setReplyBatchingWindow}, kept for {@link failures}. */
  private readonly retired: QueuePoller[] = [];
  /** The reply partitions' consumer settings in force (the topology's until {@link setReplyBatchingWindow}). */
  private replyConsumers: readonly ConsumerSpec[];
  private readonly makeReplyPoller: (url: string, consumer: ConsumerSpec) => QueuePoller;
  /** How the topology was described, to describe it again with another batching window. */
  private readonly topologyOptions: TopologyOptions;
  private readonly targetUrl: string;
  private inFlight = 0;
  private lastInvocationEnd = 0;

  private constructor(
    init: Pick<Rig, 'topology' | 'provisioned' | 'meter' | 'targetName' | 'tableShape'> & {
      targetUrl: string;
      setup: Rig['setup'];
      topologyOptions: TopologyOptions;
    },
  ) {
    this.topology = init.topology;
    this.provisioned = init.provisioned;
    this.meter = init.meter;
    this.targetName = init.targetName;
    this.targetUrl = init.targetUrl;
    this.tableShape = init.tableShape;
    this.setup = init.setup;
    this.topologyOptions = init.topologyOptions;
    this.sqs = { fanin: createSqsClient(), esm: createSqsClient(), clients: createSqsClient() };
    const labels = new Map<string, string>([[this.targetUrl, 'target']]);
    for (const [role, url] of Object.entries(this.provisioned.queueUrls)) {
      labels.set(url, (OUTPUT_ROLES as readonly string[]).includes(role) ? 'output' : role);
    }
    for (const url of this.provisioned.replyQueueUrls) labels.set(url, 'reply');
    const label = (url: string): string => labels.get(url) ?? 'other';
    this.meter.instrumentSqs(this.sqs.fanin, 'fanin', label);
    this.meter.instrumentSqs(this.sqs.esm, 'esm', label);
    this.meter.instrumentSqs(this.sqs.clients, 'clients', label);
    const dynamo = createDynamoClient();
    this.meter.instrumentDynamo(dynamo, 'fanin');
    this.ctx = createContext(
      {
        tableName: this.provisioned.tableName,
        queueUrls: this.provisioned.queueUrls,
        replyQueueUrls: this.provisioned.replyQueueUrls,
        definitions: this.topology.definitions,
      },
      { sqs: this.sqs.fanin, dynamo: createDocumentClient(dynamo) },
    );
    const context = () => this.ctx;
    const consumers = this.topology.consumers;
    const poller = (
      name: string,
      queueUrl: string,
      handler: (event: SQSEvent) => Promise<unknown>,
      spec: { batchSize: number; maxConcurrency: number; maxBatchingWindowSeconds: number },
    ) =>
      new QueuePoller({
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
    this.pollers = {
      ingress: poller(
        'fan-out',
        this.provisioned.queueUrls.ingress,
        makeFanOutHandler(context),
        consumers.fanOut,
      ),
      replies: [],
      timer: poller('timer', this.provisioned.queueUrls.timer, makeTimerHandler(context), consumers.timer),
    };
    this.replyConsumers = this.topology.replyConsumers;
    this.makeReplyPoller = (url, consumer) => poller('reply', url, makeReplyHandler(context), consumer);
    this.pollers.replies = this.provisioned.replyQueueUrls.map((url, i) =>
      this.makeReplyPoller(url, this.replyConsumerOf(i)),
    );
    this.responders = new Responders(this.sqs.clients, this.targetUrl);
    this.collector = new OutputCollector(this.sqs.clients, [
      this.provisioned.queueUrls[QueueRole.COMPLETED],
      this.provisioned.queueUrls[QueueRole.TIMED_OUT],
      this.provisioned.queueUrls[QueueRole.ERROR],
      this.provisioned.queueUrls[QueueRole.LATE],
      this.provisioned.queueUrls[QueueRole.UNKNOWN],
    ]);
  }

  /**
   * Provisions a fresh topology (table, queues, a responders queue) under a unique prefix and
   * wires the handlers. `definitions` may name `target: '<responders>'`, which is replaced by the
   * responders queue's name.
   */
  public static async start(meter: Meter, definitions: readonly DefinitionInput[]): Promise<Rig> {
    const prefix = `bench${randomBytes(3).toString('hex')}`;
    const targetName = `${prefix}-responders`;
    const resolved = definitions.map((definition) =>
      definition.fanOut?.type === 'splitter' && definition.fanOut.target === RESPONDERS
        ? { ...definition, fanOut: { ...definition.fanOut, target: targetName } }
        : definition,
    );
    const topologyOptions: TopologyOptions = { prefix, definitions: resolved };
    const topology = describeTopology(topologyOptions);
    const setup = { sqs: createSqsClient(), dynamo: createDynamoClient() };
    const provisioned = await provisionTopology(topology, setup);
    const { QueueUrl } = await setup.sqs.send(new CreateQueueCommand({ QueueName: targetName }));
    if (!QueueUrl) throw new Error('no URL for the responders queue');
    const tableShape: TableShape = {
      name: topology.table.name,
      partitionKey: topology.table.partitionKey.name,
      sortKey: topology.table.sortKey.name,
      indexes: topology.table.indexes.map((index) => ({
        name: index.name,
        partitionKey: index.partitionKey.name,
        sortKey: index.sortKey.name,
        projection: index.projection,
      })),
    };
    meter.registerTable(tableShape);
    return new Rig({
      topology,
      provisioned,
      meter,
      targetName,
      targetUrl: QueueUrl,
      tableShape,
      setup,
      topologyOptions,
    });
  }

  /** The unmetered clients used for setup and for the raw-capacity measurement. */
  public get setupClients(): { readonly sqs: SQSClient; readonly dynamo: DynamoDBClient } {
    return this.setup;
  }

  /** The client producers and responders use (metered as `clients`). */
  public get clientSqs(): SQSClient {
    return this.sqs.clients;
  }

  /** Starts the fan-out and reply consumers, the responders and the output collector. */
  public start(): void {
    this.pollers.ingress.start();
    for (const poller of this.pollers.replies) poller.start();
    this.responders.start();
    this.collector.start();
  }

  /** The reply consumers' batching window now in force (partition 0's; the topology's unless changed). */
  public get replyBatchingWindowSeconds(): number {
    return this.replyConsumerOf(0).maxBatchingWindowSeconds;
  }

  /**
   * Replaces the reply consumers by those of the same topology described with
   * `replyBatchingWindowSeconds: seconds` (every partition), as redeploying the event sources
   * would. The queues stay; their visibility timeouts differ from a redeployed stack's by the
   * window's difference, which nothing here waits on.
   */
  public async setReplyBatchingWindow(seconds: number): Promise<void> {
    if (this.replyConsumers.every((c) => c.maxBatchingWindowSeconds === seconds)) return;
    const described = describeTopology({ ...this.topologyOptions, replyBatchingWindowSeconds: seconds });
    await this.idle();
    await Promise.all(this.pollers.replies.map((p) => p.stop()));
    this.retired.push(...this.pollers.replies);
    this.replyConsumers = described.replyConsumers;
    this.pollers.replies = this.provisioned.replyQueueUrls.map((url, i) =>
      this.makeReplyPoller(url, this.replyConsumerOf(i)),
    );
    for (const poller of this.pollers.replies) poller.start();
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
      await this.sqs.clients.send(
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
    await this.sqs.clients.send(
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
    await this.setup.sqs.send(new DeleteQueueCommand({ QueueUrl: this.targetUrl })).catch(() => undefined);
    await deprovisionTopology(this.provisioned, this.setup);
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
      this.inFlight += 1;
      try {
        return await metered(event);
      } finally {
        this.inFlight -= 1;
        this.lastInvocationEnd = performance.now();
      }
    };
  }
}

/** Placeholder for the responders queue in a definition's `fanOut.target`. */
export const RESPONDERS = '<responders>';

/** How responders answer the sub-requests of an aggregate (issue 12). */
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

interface HeldReply {
  readonly aggregateId: string;
  readonly replyTo: string;
  readonly body: string;
  readonly attributes: Record<string, string>;
}

/**
 * The responders: they take sub-requests from the fan-out target and answer each following the
 * wire contract (every `fanin-*` attribute copied, the reply sent to `fanin-reply-to`). They note
 * when the last reply of each aggregate goes out.
 *
 * Answering at once (`holding` off), the replies of one receive go out in batches of ten per reply
 * queue, as the first rig did. Holding, they keep the answers until {@link release} sends them in
 * an arrival pattern.
 */
export class Responders {
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
  private running = false;
  private loops: Promise<void>[] = [];

  public constructor(sqs: SQSClient, queueUrl: string) {
    this.sqs = sqs;
    this.queueUrl = queueUrl;
  }

  /** Starts `concurrency` responder loops. */
  public start(concurrency = 4): void {
    if (this.running) return;
    this.running = true;
    this.loops = Array.from({ length: concurrency }, () => this.loop());
  }

  /** Stops the loops. */
  public async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.loops);
  }

  /** Errors of the loops and of releases (each retried after a pause). */
  public errors = 0;

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
    const sends: { due: number; replies: HeldReply[] }[] = [];
    const queues = plan.ids.map((id) => [...(this.held.get(id) ?? [])]);
    const rate = plan.repliesPerSecond;
    const at = (seq: number) => (Number.isFinite(rate) ? (seq * 1000) / rate : 0);
    if (plan.pattern === 'together') {
      let seq = 0;
      for (const replies of queues) {
        for (let i = 0; i < replies.length; i += 10)
          sends.push({ due: at(seq), replies: replies.slice(i, i + 10) });
        seq += replies.length;
      }
    } else if (plan.pattern === 'independent') {
      const waiting = [...queues];
      const turn = waiting.splice(0, Math.max(1, plan.rotation));
      let cursor = 0;
      let seq = 0;
      while (turn.length > 0) {
        cursor %= turn.length;
        const replies = turn[cursor] as HeldReply[];
        const reply = replies.shift();
        if (reply) {
          sends.push({ due: at(seq), replies: [reply] });
          seq += 1;
        }
        if (replies.length > 0) cursor += 1;
        else {
          const next = waiting.shift();
          if (next) turn[cursor] = next;
          else turn.splice(cursor, 1);
        }
      }
    } else {
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
      sends.sort((a, b) => a.due - b.due);
    }
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

  private async loop(): Promise<void> {
    while (this.running) {
      try {
        await this.answerOnce();
      } catch {
        this.errors += 1;
        await sleep(100);
      }
    }
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

/** One output seen by the collector. */
export interface SeenOutput {
  readonly type: string;
  readonly at: number;
  readonly body: Record<string, unknown>;
}

/**
 * Consumes fanin's output queues, as a downstream consumer would, and notes when each aggregate's
 * result became visible (`performance.now()` when the receive returned it).
 */
export class OutputCollector {
  /** Completed or timed-out results, by aggregate id. */
  public readonly results = new Map<string, SeenOutput>();
  /** Outputs by type (errors, late and unknown replies included). */
  public readonly types = new Map<string, number>();
  private readonly sqs: SQSClient;
  private readonly queueUrls: readonly string[];
  private running = false;
  private loops: Promise<void>[] = [];

  public constructor(sqs: SQSClient, queueUrls: readonly string[]) {
    this.sqs = sqs;
    this.queueUrls = queueUrls;
  }

  /** Starts one loop per output queue. */
  public start(): void {
    if (this.running) return;
    this.running = true;
    this.loops = this.queueUrls.map((url) => this.loop(url));
  }

  /** Stops the loops. */
  public async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.loops);
  }

  /** Resolves when every aggregate in `ids` has a result; throws after `timeoutMs`. */
  public async waitFor(ids: readonly string[], timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (ids.some((id) => !this.results.has(id))) {
      if (Date.now() > deadline) {
        const missing = ids.filter((id) => !this.results.has(id));
        throw new Error(
          `${missing.length} of ${ids.length} aggregates have no result after ${timeoutMs} ms (e.g. ${missing.slice(0, 3).join(', ')}); outputs seen: ${JSON.stringify(Object.fromEntries(this.types))}`,
        );
      }
      await sleep(20);
    }
  }

  /** Errors of the collector loops (each retried after a pause). */
  public errors = 0;

  private async loop(queueUrl: string): Promise<void> {
    while (this.running) {
      try {
        await this.collectOnce(queueUrl);
      } catch {
        this.errors += 1;
        await sleep(100);
      }
    }
  }

  private async collectOnce(queueUrl: string): Promise<void> {
    const { Messages = [] } = await this.sqs.send(
      new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }),
    );
    if (Messages.length === 0) return;
    const at = performance.now();
    for (const message of Messages) {
      const body = JSON.parse(message.Body ?? '{}') as Record<string, unknown>;
      const type = String(body.type);
      this.types.set(type, (this.types.get(type) ?? 0) + 1);
      const aggregateId = typeof body.aggregateId === 'string' ? body.aggregateId : undefined;
      if (aggregateId && (type === 'fanin.aggregate.completed' || type === 'fanin.aggregate.timed-out')) {
        if (!this.results.has(aggregateId)) this.results.set(aggregateId, { type, at, body });
      }
    }
    await this.sqs.send(
      new DeleteMessageBatchCommand({
        QueueUrl: queueUrl,
        Entries: Messages.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle })),
      }),
    );
  }
}

/** Waits `ms` milliseconds. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
