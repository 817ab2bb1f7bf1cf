import { randomBytes } from 'node:crypto';
import type { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import type { S3Client } from '@aws-sdk/client-s3';
import {
  CreateQueueCommand,
  DeleteMessageBatchCommand,
  DeleteQueueCommand,
  GetQueueAttributesCommand,
  type Message,
  ReceiveMessageCommand,
  SendMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { BatchWriteCommand, type DynamoDBDocumentClient, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { expect } from 'vitest';
import { makeControlHandler, makeFanOutHandler, makeReplyHandler } from '../../functions/handlers.ts';
import { QueuePoller } from '../../local/poller.ts';
import { deprovisionTopology, type Provisioned, provisionTopology } from '../../local/provision.ts';
import { queueDepth as depthOf } from '../../shared/adapters/sqs-queues.ts';
import { createContext, createDistributor, type FaninClients, replyDestination } from '../../shared/app.ts';
import {
  createDocumentClient,
  createDynamoClient,
  createEventBridgeClient,
  createS3Client,
  createSqsClient,
} from '../../shared/aws/clients.ts';
import type { RuntimeConfig } from '../../shared/config.ts';
import { WireAttribute } from '../../shared/engine/correlation.ts';
import type { DefinitionInput } from '../../shared/engine/definition.ts';
import type { PartitionedDestination } from '../../shared/partitions/destination.ts';
import type { Distributor } from '../../shared/partitions/distributor.ts';
import type { Log } from '../../shared/ports.ts';
import {
  describeTopology,
  type OutputRole,
  type Topology,
  type TopologyOptions,
} from '../../shared/topology/topology.ts';
import type { FaninContext } from '../../shared/use-cases/context.ts';
import { handleTimer, sweep } from '../../shared/use-cases/timers.ts';
import { AwsProbe, type Publication, TERMINAL_ROLES } from './aws-probe.ts';
import { aws } from './clients.ts';

/** The `SenderId` the SQS emulator gives every message, whoever sent it. */
export const EMULATOR_SENDER = '000000000000';

/** A clock the test moves by hand, so timeouts are exercised without waiting for them. */
export class TestClock {
  private current = Date.now();
  private readonly start = this.current;
  /** When (wall clock) each move took effect, and the time it set. */
  private readonly moves: { readonly wall: number; readonly now: number }[] = [];
  public readonly read = (): number => this.current;
  public get now(): number {
    return this.current;
  }
  /** Moves the clock (forward or back), as {@link advance}. */
  public set now(value: number) {
    // Each move starts a wall-clock millisecond of its own, so a message SQS stamped before it
    // is never taken as sent after it (atWall).
    const started = Date.now();
    while (Date.now() === started) {
      // a millisecond at most
    }
    this.current = value;
    this.moves.push({ wall: Date.now(), now: value });
  }
  public advance(ms: number): void {
    this.now = this.current + ms;
  }
  /** What this clock read at a wall-clock time (an SQS `SentTimestamp`): SQS's clock as the test's. */
  public atWall(wall: number): number {
    let at = this.start;
    for (const m of this.moves) if (m.wall <= wall) at = m.now;
    return at;
  }
}

/** A message read from an output queue: its body parsed. */
export type OutputBody = Record<string, unknown> & { id: string; type: string };

/** One line the context logged (captured by the default `log` of a test context). */
export interface LogLine {
  readonly level: 'info' | 'warn' | 'error';
  readonly message: string;
  readonly fields: Record<string, unknown>;
}

/** How strictly {@link FaninUnderTest.expectExactlyOneTerminalOutput} counts publications. */
export type TerminalMode =
  /** Exactly one publication of the result on its queue (and at most one event on the bus). */
  | 'strict'
  /**
   * One distinct content, published any number of times: only for a test that crashed (or
   * paused) a completer between its publication and the record of it, and says so.
   */
  | 'content';

/** The system's clients: the test's own instances, instrumented by the probe. */
interface SystemClients {
  readonly sqs: SQSClient;
  readonly dynamo: DynamoDBDocumentClient;
  readonly s3: S3Client;
  readonly eventBridge: EventBridgeClient;
}

/**
 * fanin, provisioned under a unique prefix on the emulators (or LocalStack), with its real
 * handlers driven by Lambda-style pollers. `drain()` runs every consumer until nothing is left.
 *
 * The context runs on clients of its own, instrumented by an {@link AwsProbe} (`fanin.probe`):
 * every output publication and every message sent to an input queue is recorded below SQS's
 * deduplication, and failpoints, pause points and faults can be set on any AWS call the system
 * makes. The test's own calls (producer, responder, pollers' receive and delete, state reads for
 * assertions) go through other clients and are never crashed.
 */
export class FaninUnderTest {
  public readonly topology: Topology;
  public readonly provisioned: Provisioned;
  public readonly clock: TestClock;
  public ctx: FaninContext;
  /** The SDK-level recorder, failpoints, pause points and faults of this run. */
  public readonly probe: AwsProbe;
  /** What the context logged (unless a test overrode `log`). */
  public readonly logs: LogLine[] = [];
  private readonly pollers: { ingress: QueuePoller; replies: QueuePoller[]; control: QueuePoller };
  private readonly targets = new Map<string, string>();
  private readonly system: SystemClients;
  /** The SQS client of the test's side: producer, responder, pollers (recorded, never crashed). */
  private readonly testSqs: SQSClient;
  private readonly testS3: S3Client;
  /** The EventBridge bus outputs are also published on, when a test sets one. */
  public eventBusName: string | undefined;

  /** Reply partitions whose consumer is running (all by default). */
  public readonly consumers: Set<number>;
  private readonly claimCheckThresholdBytes: number | undefined;

  private constructor(
    topology: Topology,
    provisioned: Provisioned,
    clock: TestClock,
    claimCheckThresholdBytes: number | undefined,
  ) {
    this.topology = topology;
    this.provisioned = provisioned;
    this.clock = clock;
    this.claimCheckThresholdBytes = claimCheckThresholdBytes;
    this.consumers = new Set(provisioned.replyQueueUrls.map((_, i) => i));
    this.testS3 = createS3Client();
    this.probe = new AwsProbe(this.testS3);
    for (const [role, url] of Object.entries(provisioned.queueUrls)) this.probe.setRole(url, role);
    for (const url of provisioned.replyQueueUrls) this.probe.setRole(url, 'reply');
    for (const [name, url] of Object.entries(provisioned.allQueueUrls)) {
      if (/-dlq(\.fifo)?$/.test(name)) this.probe.setRole(url, 'dlq');
    }
    this.system = {
      sqs: createSqsClient(),
      dynamo: createDocumentClient(createDynamoClient()),
      s3: createS3Client(),
      eventBridge: createEventBridgeClient(),
    };
    this.probe.instrumentSystem(this.system);
    this.testSqs = createSqsClient();
    this.probe.instrumentTest(this.testSqs);
    this.ctx = this.buildContext();
    const sqs = this.testSqs;
    const context = () => this.ctx;
    const poller = (
      queueUrl: string,
      visibilitySeconds: number,
      handler: ConstructorParameters<typeof QueuePoller>[0]['handler'],
    ) =>
      new QueuePoller({
        sqs,
        queueUrl,
        handler: this.redeliveredAfterVisibility(visibilitySeconds, handler),
        failedVisibilitySeconds: 0,
      });
    this.pollers = {
      ingress: poller(
        provisioned.queueUrls.ingress,
        topology.queues.ingress.visibilityTimeoutSeconds,
        makeFanOutHandler(context),
      ),
      replies: provisioned.replyQueueUrls.map((url, i) =>
        poller(url, topology.replyPartitions[i]?.visibilityTimeoutSeconds ?? 0, makeReplyHandler(context)),
      ),
      control: poller(
        provisioned.queueUrls.control,
        topology.queues.control.visibilityTimeoutSeconds,
        makeControlHandler(context),
      ),
    };
  }

  /** When each failed message may be seen again, in {@link clock} time. */
  private readonly visibleAgainAt = new Map<string, number>();

  /**
   * SQS redelivers a message its handler failed (or crashed on) once the queue's visibility
   * timeout has passed. The pollers hand it back at once, to keep tests fast, and this wrapper
   * moves the test clock to when SQS would have: a redelivery never comes earlier than it can.
   */
  private redeliveredAfterVisibility(
    visibilitySeconds: number,
    handler: ConstructorParameters<typeof QueuePoller>[0]['handler'],
  ): ConstructorParameters<typeof QueuePoller>[0]['handler'] {
    return async (given) => {
      // SQS stamps a message by the wall clock, and a move carries that stamp; the handlers read
      // the test's clock (TestClock.atWall).
      const asTest = (wall: string | undefined) => String(this.clock.atWall(Number(wall)));
      const event = {
        ...given,
        Records: given.Records.map((r) => {
          const carried = r.messageAttributes[WireAttribute.ORIGIN_SENT_AT];
          return {
            ...r,
            attributes: { ...r.attributes, SentTimestamp: asTest(r.attributes.SentTimestamp) },
            messageAttributes: carried?.stringValue
              ? {
                  ...r.messageAttributes,
                  [WireAttribute.ORIGIN_SENT_AT]: { ...carried, stringValue: asTest(carried.stringValue) },
                }
              : r.messageAttributes,
          };
        }),
      };
      for (const record of event.Records) {
        const at = this.visibleAgainAt.get(record.messageId);
        if (at !== undefined && this.clock.now < at) this.clock.advance(at - this.clock.now);
        this.visibleAgainAt.delete(record.messageId);
      }
      const failedAt = (ids: readonly string[]) => {
        for (const id of ids) this.visibleAgainAt.set(id, this.clock.now + visibilitySeconds * 1000);
      };
      try {
        const response = await handler(event);
        failedAt((response?.batchItemFailures ?? []).map((f) => f.itemIdentifier));
        return response;
      } catch (error) {
        failedAt(event.Records.map((r) => r.messageId));
        throw error;
      }
    };
  }

  /** Provisions a fresh topology for these definitions. */
  public static async start(
    definitions: readonly DefinitionInput[],
    options: Omit<TopologyOptions, 'definitions' | 'prefix'> & {
      overrides?: Partial<FaninContext>;
      /** Provision the claim-check bucket, with this threshold. */
      claimCheckThresholdBytes?: number;
    } = {},
  ): Promise<FaninUnderTest> {
    const prefix = `t${Date.now().toString(36).slice(-5)}${randomBytes(3).toString('hex')}`;
    const topology = describeTopology({ ...options, prefix, definitions });
    const withBucket = options.claimCheckThresholdBytes !== undefined;
    const provisioned = await provisionTopology(topology, {
      sqs: aws.sqs,
      dynamo: aws.dynamoDb,
      ...(withBucket ? { s3: aws.s3 } : {}),
    });
    const fanin = new FaninUnderTest(
      topology,
      provisioned,
      new TestClock(),
      options.claimCheckThresholdBytes,
    );
    fanin.overrides = options.overrides ?? {};
    fanin.buildContext(fanin.overrides);
    return fanin;
  }

  /** The runtime configuration of this run, as the handlers' environment would give it. */
  public get config(): RuntimeConfig {
    return {
      tableName: this.provisioned.tableName,
      queueUrls: this.provisioned.queueUrls,
      replyQueueUrls: this.provisioned.replyQueueUrls,
      definitions: this.topology.definitions,
      partitioning: this.topology.partitioning,
      ...(this.eventBusName ? { eventBusName: this.eventBusName } : {}),
      ...(this.provisioned.bucketName ? { bucketName: this.provisioned.bucketName } : {}),
      ...(this.claimCheckThresholdBytes !== undefined
        ? { claimCheckThresholdBytes: this.claimCheckThresholdBytes }
        : {}),
      completionLeaseSeconds: this.topology.completionLeaseSeconds,
    };
  }

  /** The clients the system under test uses (instrumented by {@link probe}). */
  public get clients(): FaninClients {
    return this.system;
  }

  /** Overrides given to {@link start}, kept by every rebuilt context. */
  private overrides: Partial<FaninContext> = {};

  /** A log that keeps every line in {@link logs}. */
  public readonly log: Log = {
    info: (message, fields) => this.logs.push({ level: 'info', message, fields: fields ?? {} }),
    warn: (message, fields) => this.logs.push({ level: 'warn', message, fields: fields ?? {} }),
    error: (message, fields) => this.logs.push({ level: 'error', message, fields: fields ?? {} }),
  };

  /** Rebuilds the context with overrides (e.g. a store that crashes at a failpoint). */
  public buildContext(overrides: Partial<FaninContext> = {}): FaninContext {
    const base = {
      ...createContext(this.config, this.clients, { clock: this.clock.read, log: this.log }),
      // The emulator names every sender so: the distributor's copies carry their first send time
      // (a test of the sender rule overrides this).
      trustedMovers: [EMULATOR_SENDER],
    };
    this.ctx = { ...base, ...this.overrides, ...overrides };
    return this.ctx;
  }

  /** Error-level log lines that carry this `alarm` field. */
  public alarms(alarm: string): LogLine[] {
    return this.logs.filter((l) => l.level === 'error' && l.fields.alarm === alarm);
  }

  /**
   * Creates a responder queue (a fan-out target) under this run's prefix (or, when `exact`, with
   * exactly that name, e.g. one a definition names); returns its name.
   */
  public async targetQueue(name: string, exact = false): Promise<string> {
    const queueName = exact ? name : `${this.topology.prefix}-${name}`;
    const { QueueUrl } = await aws.sqs.send(new CreateQueueCommand({ QueueName: queueName }));
    this.targets.set(queueName, QueueUrl ?? '');
    this.probe.setRole(QueueUrl ?? '', `target:${name}`);
    return queueName;
  }

  /** The URL of a responder queue made by {@link targetQueue}. */
  public targetUrl(name: string): string {
    const url = this.targets.get(name);
    if (!url) throw new Error(`unknown target ${name}`);
    return url;
  }

  /** Sends a request to the ingress queue, as any producer would. */
  public async sendRequest(body: unknown, attributes: Record<string, string> = {}): Promise<void> {
    await send(this.testSqs, this.provisioned.queueUrls.ingress, body, attributes);
  }

  /** Sends a control command. */
  public async sendControl(body: unknown): Promise<void> {
    await send(this.testSqs, this.provisioned.queueUrls.control, body, {});
  }

  /** Sends a reply to a reply partition (the first by default); returns its SQS message id. */
  public async sendReply(body: unknown, attributes: Record<string, string>, partition = 0): Promise<string> {
    const url = this.provisioned.replyQueueUrls[partition];
    if (!url) throw new Error(`no reply partition ${partition}`);
    return send(this.testSqs, url, body, attributes);
  }

  /** Takes every message waiting on a responder queue. */
  public async takeRequests(targetName: string): Promise<Message[]> {
    const url = this.targets.get(targetName);
    if (!url) throw new Error(`unknown target ${targetName}`);
    return takeAll(url);
  }

  /**
   * Answers a sub-request following the wire contract: the reply goes to `fanin-reply-to` with the
   * `fanin-*` attributes copied back.
   */
  public async reply(subRequest: Message, body: unknown): Promise<void> {
    const attributes: Record<string, string> = {};
    for (const [name, value] of Object.entries(subRequest.MessageAttributes ?? {})) {
      if (name.startsWith('fanin-') && value.StringValue !== undefined) attributes[name] = value.StringValue;
    }
    const replyTo = attributes['fanin-reply-to'];
    if (!replyTo) throw new Error('sub-request has no fanin-reply-to');
    await send(this.testSqs, replyTo, body, attributes);
  }

  /** Runs the ingress, reply and control consumers until a full round finds nothing. */
  public async drain(): Promise<void> {
    const replies = this.pollers.replies.filter((_, i) => this.consumers.has(i));
    const all = [this.pollers.ingress, ...replies, this.pollers.control];
    for (let idle = 0; idle < 2; ) {
      const counts = await Promise.all(all.map((p) => p.pollOnce(0)));
      idle = counts.every((c) => c === 0) ? idle + 1 : 0;
    }
  }

  /** Processes every timer message now visible (delays honoured by SQS: due ones only). */
  public async fireTimers(): Promise<number> {
    const messages = await takeAll(this.provisioned.queueUrls.timer);
    for (const m of messages) {
      await handleTimer(this.ctx, {
        messageId: m.MessageId ?? '',
        body: m.Body ?? '',
        attributes: {},
        receiveCount: 1,
      });
    }
    return messages.length;
  }

  /** Runs the fan-out consumer until the ingress queue is empty. */
  public async drainIngress(): Promise<void> {
    while ((await this.pollers.ingress.pollOnce(0)) > 0) {
      // keep going until a receive comes back empty
    }
  }

  /** Runs the consumer of one reply partition for one batch; returns how many replies it took. */
  public consumePartition(index: number): Promise<number> {
    const poller = this.pollers.replies[index];
    if (!poller) throw new Error(`no reply partition ${index}`);
    return poller.pollOnce(0);
  }

  /** The reply destination (routing, availability, enable/disable). */
  public destination(): PartitionedDestination {
    return replyDestination(this.config, this.clients);
  }

  /** The reply destination's watermark distributor, on the test clock. */
  public distributor(): Distributor {
    return createDistributor(this.config, this.clients, this.clock.read);
  }

  /** Runs the sweeper once at the test clock's time. */
  public sweep(): Promise<number> {
    return sweep(this.ctx);
  }

  /** Takes every message on an output queue, bodies parsed. */
  public async outputs(role: OutputRole): Promise<OutputBody[]> {
    const messages = await takeAll(this.provisioned.queueUrls[role]);
    return messages.map((m) => JSON.parse(m.Body ?? '{}') as OutputBody);
  }

  // ---- the recorder's view (below SQS deduplication) ----

  /** Every publication (any output queue, the bus) naming this aggregate, in order. */
  public publications(aggregateId: string): Publication[] {
    return this.probe.publicationsOf(aggregateId);
  }

  /** Publications on one output (as recorded, re-sends included). */
  public published(channel: Publication['channel']): Publication[] {
    return this.probe.published.filter((p) => p.channel === channel);
  }

  /**
   * Asserts that the aggregate has exactly one terminal outcome: across the completed, timed-out,
   * status (purged) and error (`fanin.aggregate.failed`) outputs and the bus, every publication of
   * `${aggregateId}/result` has one and the same content. In `strict` mode it was also published
   * exactly once on its queue (and at most once on the bus). Returns that output and how many
   * times it was published.
   */
  public expectExactlyOneTerminalOutput(
    aggregateId: string,
    mode: TerminalMode = 'strict',
  ): { output: OutputBody; channel: string; publications: number } {
    const id = `${aggregateId}/result`;
    const all = this.probe.published.filter(
      (p) => p.body.id === id && (p.channel === 'eventbridge' || TERMINAL_ROLES.includes(p.channel)),
    );
    const queued = all.filter((p) => p.channel !== 'eventbridge');
    const described = all.map((p) => `${p.channel}: ${p.text.slice(0, 300)}`).join('\n');
    expect(queued.length, `terminal publications of ${aggregateId}:\n${described}`).toBeGreaterThan(0);
    const contents = new Set(all.map((p) => p.text));
    const channels = new Set(queued.map((p) => p.channel));
    expect(
      [...channels],
      `${aggregateId} terminal outputs on more than one queue:\n${described}`,
    ).toHaveLength(1);
    expect(contents.size, `${aggregateId} terminal outputs with different content:\n${described}`).toBe(1);
    if (mode === 'strict') {
      expect(queued.length, `${aggregateId} result published more than once:\n${described}`).toBe(1);
      expect(
        all.length - queued.length,
        `${aggregateId} result put on the bus more than once`,
      ).toBeLessThanOrEqual(1);
    }
    const first = queued[0] as Publication;
    return { output: first.body as OutputBody, channel: first.channel, publications: queued.length };
  }

  /** Asserts that nothing (no result, no error) was published for this aggregate's result id. */
  public expectNoTerminalOutput(aggregateId: string): void {
    const id = `${aggregateId}/result`;
    expect(this.probe.published.filter((p) => p.body.id === id).map((p) => p.text)).toEqual([]);
  }

  // ---- TTL expiry and replay ----

  /**
   * What DynamoDB's TTL would have done by `nowMs` (DynamoDB Local never expires items): deletes
   * every item of the state table whose `expiresAt` (epoch seconds) is at or before it.
   * @returns how many items were deleted
   */
  public async expireItems(nowMs: number = this.clock.now): Promise<number> {
    const expired = (await this.scanState()).filter(
      (item) => typeof item.expiresAt === 'number' && item.expiresAt <= nowMs / 1000,
    );
    for (let i = 0; i < expired.length; i += 25) {
      await aws.dynamo.send(
        new BatchWriteCommand({
          RequestItems: {
            [this.provisioned.tableName]: expired
              .slice(i, i + 25)
              .map((item) => ({ DeleteRequest: { Key: { pk: item.pk, sk: item.sk } } })),
          },
        }),
      );
    }
    return expired.length;
  }

  /** Every item of the state table (a consistent scan). */
  public async scanState(): Promise<Record<string, unknown>[]> {
    const items: Record<string, unknown>[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const page = await aws.dynamo.send(
        new ScanCommand({
          TableName: this.provisioned.tableName,
          ConsistentRead: true,
          ...(start ? { ExclusiveStartKey: start } : {}),
        }),
      );
      items.push(...(page.Items ?? []));
      start = page.LastEvaluatedKey;
    } while (start);
    return items;
  }

  /** Headers (`sk = H`) of aggregates whose status is open or completing. */
  public async unfinishedHeaders(): Promise<Record<string, unknown>[]> {
    return (await this.scanState()).filter(
      (i) =>
        i.sk === 'H' && String(i.pk).startsWith('A#') && (i.status === 'open' || i.status === 'completing'),
    );
  }

  /**
   * Sends every message ever sent to the ingress queue, the reply partitions and the backlog
   * again (as recorded, test's and system's alike), as an SQS redelivery after the retention
   * window or a DLQ redrive would. @returns how many were re-sent
   */
  public async replayAll(): Promise<number> {
    const replayable = this.probe.sent.filter((m) => ['ingress', 'reply', 'backlog'].includes(m.role));
    for (const m of replayable) {
      const fifo = m.queueUrl.endsWith('.fifo');
      await this.testSqs.send(
        new SendMessageCommand({
          QueueUrl: m.queueUrl,
          MessageBody: m.body,
          MessageAttributes: m.attributes as Record<string, { DataType: string; StringValue?: string }>,
          ...(fifo
            ? { MessageGroupId: 'replay', MessageDeduplicationId: randomBytes(8).toString('hex') }
            : {}),
        }),
      );
    }
    return replayable.length;
  }

  /** Messages sent to the ingress queue and the reply partitions (and the backlog) so far. */
  public sentInputs(role: 'ingress' | 'reply' | 'backlog' = 'reply'): typeof this.probe.sent {
    return this.probe.sent.filter((m) => m.role === role);
  }

  /** How many messages each dead-letter queue holds (only the non-empty ones). */
  public async deadLetters(): Promise<Record<string, number>> {
    const depths: Record<string, number> = {};
    for (const [name, url] of Object.entries(this.provisioned.allQueueUrls)) {
      if (!/-dlq(\.fifo)?$/.test(name)) continue;
      const { Attributes = {} } = await aws.sqs.send(
        new GetQueueAttributesCommand({
          QueueUrl: url,
          AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
        }),
      );
      const depth =
        Number(Attributes.ApproximateNumberOfMessages ?? 0) +
        Number(Attributes.ApproximateNumberOfMessagesNotVisible ?? 0);
      if (depth > 0) depths[name] = depth;
    }
    return depths;
  }

  /** Deletes everything this run created. */
  public async stop(): Promise<void> {
    await Promise.all(
      [...this.targets.values()].map((QueueUrl) =>
        aws.sqs.send(new DeleteQueueCommand({ QueueUrl })).catch(() => undefined),
      ),
    );
    await deprovisionTopology(this.provisioned, { sqs: aws.sqs, dynamo: aws.dynamoDb });
    for (const client of [...Object.values(this.system), this.testSqs, this.testS3]) client.destroy();
  }
}

async function send(
  sqs: SQSClient,
  queueUrl: string,
  body: unknown,
  attributes: Record<string, string>,
): Promise<string> {
  const fifo = queueUrl.endsWith('.fifo');
  const { MessageId } = await sqs.send(
    new SendMessageCommand({
      QueueUrl: queueUrl,
      MessageBody: typeof body === 'string' ? body : JSON.stringify(body),
      MessageAttributes: Object.fromEntries(
        Object.entries(attributes).map(([name, value]) => [name, { DataType: 'String', StringValue: value }]),
      ),
      ...(fifo ? { MessageGroupId: 'g', MessageDeduplicationId: randomBytes(8).toString('hex') } : {}),
    }),
  );
  return MessageId ?? '';
}

/** Receives and deletes every message currently visible on a queue. */
export async function takeAll(queueUrl: string): Promise<Message[]> {
  const taken: Message[] = [];
  for (;;) {
    const { Messages = [] } = await aws.sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: queueUrl,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: 0,
        MessageAttributeNames: ['All'],
      }),
    );
    if (Messages.length === 0) return taken;
    taken.push(...Messages);
    await aws.sqs.send(
      new DeleteMessageBatchCommand({
        QueueUrl: queueUrl,
        Entries: Messages.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle })),
      }),
    );
  }
}

/** Messages in a queue: visible plus in flight (what a partition's availability counts). */
export async function queueDepth(queueUrl: string): Promise<number> {
  return (await depthOf(aws.sqs, queueUrl)).depth;
}
