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
import { QueuePoller } from '../shared/local/poller.ts';
import { deprovisionTopology, type Provisioned, provisionTopology } from '../shared/local/provision.ts';
import { describeTopology, OUTPUT_ROLES, QueueRole, type Topology } from '../shared/topology/topology.ts';
import type { FaninContext } from '../shared/use-cases/context.ts';
import type { TableShape } from './capacity.ts';
import type { Meter } from './meter.ts';

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
    readonly replies: QueuePoller[];
    readonly timer: QueuePoller;
  };
  private readonly targetUrl: string;
  private inFlight = 0;
  private lastInvocationEnd = 0;

  private constructor(
    init: Pick<Rig, 'topology' | 'provisioned' | 'meter' | 'targetName' | 'tableShape'> & {
      targetUrl: string;
      setup: Rig['setup'];
    },
  ) {
    this.topology = init.topology;
    this.provisioned = init.provisioned;
    this.meter = init.meter;
    this.targetName = init.targetName;
    this.targetUrl = init.targetUrl;
    this.tableShape = init.tableShape;
    this.setup = init.setup;
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
        // As the CDK stack configures the event sources: the reply queues gather for up to a second.
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
      replies: this.provisioned.replyQueueUrls.map((url) =>
        poller('reply', url, makeReplyHandler(context), consumers.reply),
      ),
      timer: poller('timer', this.provisioned.queueUrls.timer, makeTimerHandler(context), consumers.timer),
    };
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
    const topology = describeTopology({ prefix, definitions: resolved });
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
    return new Rig({ topology, provisioned, meter, targetName, targetUrl: QueueUrl, tableShape, setup });
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

  /** Starts the timer consumer (kept off otherwise: the timers of most phases are not due during the run). */
  public startTimers(): void {
    this.pollers.timer.start();
  }

  /** Failed records and poller errors so far, for the report's sanity section. */
  public failures(): { failedRecords: number; pollerErrors: number } {
    const all = [this.pollers.ingress, ...this.pollers.replies, this.pollers.timer];
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

/**
 * The responders: they take sub-requests from the fan-out target and answer each following the
 * wire contract (every `fanin-*` attribute copied, the reply sent to `fanin-reply-to`), in batches
 * of ten. They note when the last reply of each aggregate goes out.
 */
export class Responders {
  /** Reply body by aggregate and reply id. */
  public body: (aggregateId: string, replyId: string) => string = () => '{}';
  /** Replies expected per aggregate (its fan-out). */
  public readonly expected = new Map<string, number>();
  /** `performance.now()` just before the batch holding an aggregate's last reply was sent. */
  public readonly lastSentAt = new Map<string, number>();
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

  /** Errors of the responder loops (each retried after a pause). */
  public errors = 0;

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
    const byReplyTo = new Map<string, { body: string; attributes: Record<string, string> }[]>();
    for (const message of Messages) {
      const attributes: Record<string, string> = {};
      for (const [name, value] of Object.entries(message.MessageAttributes ?? {})) {
        if (name.startsWith('fanin-') && value.StringValue !== undefined)
          attributes[name] = value.StringValue;
      }
      const replyTo = attributes['fanin-reply-to'] ?? '';
      const aggregateId = attributes['fanin-aggregate-id'] ?? '';
      const replyId = attributes['fanin-reply-id'] ?? '';
      const list = byReplyTo.get(replyTo) ?? [];
      list.push({ body: this.body(aggregateId, replyId), attributes });
      byReplyTo.set(replyTo, list);
    }
    for (const [replyTo, replies] of byReplyTo) {
      const now = performance.now();
      for (const reply of replies) {
        const aggregateId = reply.attributes['fanin-aggregate-id'] ?? '';
        const count = (this.sent.get(aggregateId) ?? 0) + 1;
        this.sent.set(aggregateId, count);
        if (count === this.expected.get(aggregateId)) this.lastSentAt.set(aggregateId, now);
      }
      await this.sqs.send(
        new SendMessageBatchCommand({
          QueueUrl: replyTo,
          Entries: replies.map((reply, i) => ({
            Id: String(i),
            MessageBody: reply.body,
            MessageAttributes: Object.fromEntries(
              Object.entries(reply.attributes).map(([name, value]) => [
                name,
                { DataType: 'String', StringValue: value },
              ]),
            ),
          })),
        }),
      );
    }
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
