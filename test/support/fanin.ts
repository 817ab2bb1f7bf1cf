import { randomBytes } from 'node:crypto';
import {
  CreateQueueCommand,
  DeleteMessageBatchCommand,
  DeleteQueueCommand,
  type Message,
  ReceiveMessageCommand,
  SendMessageCommand,
} from '@aws-sdk/client-sqs';
import { makeControlHandler, makeFanOutHandler, makeReplyHandler } from '../../functions/handlers.ts';
import { queueDepth as depthOf } from '../../shared/adapters/sqs-queues.ts';
import { createContext, createDistributor, type FaninClients, replyDestination } from '../../shared/app.ts';
import {
  documentClient,
  dynamoClient,
  eventBridgeClient,
  s3Client,
  sqsClient,
} from '../../shared/aws/clients.ts';
import type { RuntimeConfig } from '../../shared/config.ts';
import type { DefinitionInput } from '../../shared/engine/definition.ts';
import { QueuePoller } from '../../shared/local/poller.ts';
import { deprovisionTopology, type Provisioned, provisionTopology } from '../../shared/local/provision.ts';
import type { PartitionedDestination } from '../../shared/partitions/destination.ts';
import type { Distributor } from '../../shared/partitions/distributor.ts';
import {
  describeTopology,
  type OutputRole,
  type Topology,
  type TopologyOptions,
} from '../../shared/topology/topology.ts';
import type { FaninContext } from '../../shared/use-cases/context.ts';
import { handleTimer, sweep } from '../../shared/use-cases/timers.ts';

/** A clock the test moves by hand, so timeouts are exercised without waiting for them. */
export class TestClock {
  public now = Date.now();
  public readonly read = (): number => this.now;
  public advance(ms: number): void {
    this.now += ms;
  }
}

/** A message read from an output queue: its body parsed. */
export type OutputBody = Record<string, unknown> & { id: string; type: string };

/**
 * fanin, provisioned under a unique prefix on the emulators (or LocalStack), with its real
 * handlers driven by Lambda-style pollers. `drain()` runs every consumer until nothing is left.
 */
export class FaninUnderTest {
  public readonly topology: Topology;
  public readonly provisioned: Provisioned;
  public readonly clock: TestClock;
  public ctx: FaninContext;
  private readonly pollers: { ingress: QueuePoller; replies: QueuePoller[]; control: QueuePoller };
  private readonly targets = new Map<string, string>();
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
    this.ctx = this.buildContext();
    const sqs = sqsClient();
    const context = () => this.ctx;
    const poller = (queueUrl: string, handler: ConstructorParameters<typeof QueuePoller>[0]['handler']) =>
      new QueuePoller({ sqs, queueUrl, handler, failedVisibilitySeconds: 0 });
    this.pollers = {
      ingress: poller(provisioned.queueUrls.ingress, makeFanOutHandler(context)),
      replies: provisioned.replyQueueUrls.map((url) => poller(url, makeReplyHandler(context))),
      control: poller(provisioned.queueUrls.control, makeControlHandler(context)),
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
      sqs: sqsClient(),
      dynamo: dynamoClient(),
      ...(withBucket ? { s3: s3Client() } : {}),
    });
    const fanin = new FaninUnderTest(
      topology,
      provisioned,
      new TestClock(),
      options.claimCheckThresholdBytes,
    );
    fanin.buildContext(options.overrides ?? {});
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
    };
  }

  /** The clients every part of this run uses. */
  public get clients(): FaninClients {
    return { sqs: sqsClient(), dynamo: documentClient(), eventBridge: eventBridgeClient(), s3: s3Client() };
  }

  /** Rebuilds the context with overrides (e.g. a store that crashes at a failpoint). */
  public buildContext(overrides: Partial<FaninContext> = {}): FaninContext {
    const base = createContext(this.config, this.clients, { clock: this.clock.read });
    this.ctx = { ...base, ...overrides };
    return this.ctx;
  }

  /** Creates a responder queue (a fan-out target) under this run's prefix; returns its name. */
  public async targetQueue(name: string): Promise<string> {
    const queueName = `${this.topology.prefix}-${name}`;
    const { QueueUrl } = await sqsClient().send(new CreateQueueCommand({ QueueName: queueName }));
    this.targets.set(queueName, QueueUrl ?? '');
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
    await send(this.provisioned.queueUrls.ingress, body, attributes);
  }

  /** Sends a control command. */
  public async sendControl(body: unknown): Promise<void> {
    await send(this.provisioned.queueUrls.control, body, {});
  }

  /** Sends a reply to a reply partition (the first by default). */
  public async sendReply(body: unknown, attributes: Record<string, string>, partition = 0): Promise<void> {
    const url = this.provisioned.replyQueueUrls[partition];
    if (!url) throw new Error(`no reply partition ${partition}`);
    await send(url, body, attributes);
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
    await send(replyTo, body, attributes);
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

  /** Deletes everything this run created. */
  public async stop(): Promise<void> {
    await Promise.all(
      [...this.targets.values()].map((QueueUrl) =>
        sqsClient()
          .send(new DeleteQueueCommand({ QueueUrl }))
          .catch(() => undefined),
      ),
    );
    await deprovisionTopology(this.provisioned, { sqs: sqsClient(), dynamo: dynamoClient() });
  }
}

async function send(queueUrl: string, body: unknown, attributes: Record<string, string>): Promise<void> {
  const fifo = queueUrl.endsWith('.fifo');
  await sqsClient().send(
    new SendMessageCommand({
      QueueUrl: queueUrl,
      MessageBody: typeof body === 'string' ? body : JSON.stringify(body),
      MessageAttributes: Object.fromEntries(
        Object.entries(attributes).map(([name, value]) => [name, { DataType: 'String', StringValue: value }]),
      ),
      ...(fifo ? { MessageGroupId: 'g', MessageDeduplicationId: randomBytes(8).toString('hex') } : {}),
    }),
  );
}

/** Receives and deletes every message currently visible on a queue. */
export async function takeAll(queueUrl: string): Promise<Message[]> {
  const taken: Message[] = [];
  for (;;) {
    const { Messages = [] } = await sqsClient().send(
      new ReceiveMessageCommand({
        QueueUrl: queueUrl,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: 0,
        MessageAttributeNames: ['All'],
      }),
    );
    if (Messages.length === 0) return taken;
    taken.push(...Messages);
    await sqsClient().send(
      new DeleteMessageBatchCommand({
        QueueUrl: queueUrl,
        Entries: Messages.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle })),
      }),
    );
  }
}

/** Messages in a queue: visible plus in flight (what a partition's availability counts). */
export async function queueDepth(queueUrl: string): Promise<number> {
  return (await depthOf(sqsClient(), queueUrl)).depth;
}
