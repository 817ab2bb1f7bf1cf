import { WireAttribute } from '../../shared/engine/correlation.ts';
import { type DestinationOptions, PartitionedDestination } from '../../shared/partitions/destination.ts';
import {
  type DeploymentSettings,
  Distributor,
  type WatermarkOptions,
} from '../../shared/partitions/distributor.ts';
import type {
  MessageAttribute,
  MoveRequest,
  MoveResult,
  OutgoingMessage,
  PartitionQueues,
  QueueDepth,
  ReceivedMessage,
  UndeletedMessage,
} from '../../shared/partitions/queues.ts';
import type {
  PartitionRegistry,
  PartitionState,
  RecordedSettings,
} from '../../shared/partitions/registry.ts';
import type { Log } from '../../shared/ports.ts';

/**
 * In-memory fakes of the partitions' ports, for fast tests of the destination and the distributor
 * without the emulators. The queues keep what the SQS adapter promises
 * (shared/adapters/sqs-partition-queues.ts): a moved copy gets a new message id and carries its
 * first one in `fanin-origin-message-id` (unless it already has 10 attributes), a refused send
 * stops a move with the message still at its source, a delete that fails leaves the message at
 * both queues. Unlike SQS, depths are exact and an empty receive means an empty queue. The
 * emulator suites (test/integration/features/distributor.test.ts, partitions.test.ts) prove the adapter.
 */

/** A message held by a {@link MemoryPartitionQueues} queue. */
export interface MemoryMessage {
  readonly messageId: string;
  readonly body: string;
  readonly attributes: Readonly<Record<string, MessageAttribute>>;
}

/** One queue: visible messages, and those a consumer (or an unfinished move) holds in flight. */
interface MemoryQueue {
  visible: MemoryMessage[];
  inFlight: MemoryMessage[];
}

/** SQS's limit of message attributes on one message. */
const MAX_ATTRIBUTES = 10;

/** {@link PartitionQueues} in memory, with switches to make a queue fail as SQS can. */
export class MemoryPartitionQueues implements PartitionQueues {
  private readonly queues = new Map<string, MemoryQueue>();
  private sequence = 0;
  /** Every call, in order: `<method> <queue URL>` (a move: `move <from> -> <to>`). */
  public readonly calls: string[] = [];
  /** Queues that cannot be reached: depth reads and sends fail. */
  public readonly unreachable = new Set<string>();
  /** Queues that refuse sends: a send fails, a move to them stops with a failure. */
  public readonly refusing = new Set<string>();
  /** Queues whose deletes fail: a move from one copies its messages and reports them undeleted. */
  public readonly undeletable = new Set<string>();

  private queue(url: string): MemoryQueue {
    let queue = this.queues.get(url);
    if (!queue) {
      queue = { visible: [], inFlight: [] };
      this.queues.set(url, queue);
    }
    return queue;
  }

  private nextId(): string {
    this.sequence += 1;
    return `m-${this.sequence}`;
  }

  /** Puts messages on a queue as a producer would: `count` of them, or these bodies. */
  public put(url: string, messages: number | readonly string[]): MemoryMessage[] {
    const bodies =
      typeof messages === 'number' ? Array.from({ length: messages }, (_, i) => `{"n":${i}}`) : messages;
    const put = bodies.map((body) => ({ messageId: this.nextId(), body, attributes: {} }));
    this.queue(url).visible.push(...put);
    return put;
  }

  /** The visible messages of a queue, oldest first. */
  public visible(url: string): readonly MemoryMessage[] {
    return [...this.queue(url).visible];
  }

  /** Visible + in flight. */
  public depthOf(url: string): number {
    const queue = this.queue(url);
    return queue.visible.length + queue.inFlight.length;
  }

  /** A consumer receives `count` messages and keeps working on them (they are in flight). */
  public hold(url: string, count: number): void {
    const queue = this.queue(url);
    queue.inFlight.push(...queue.visible.splice(0, count));
  }

  /** A consumer processes and deletes `count` messages. @returns how many it took */
  public consume(url: string, count: number): number {
    return this.queue(url).visible.splice(0, count).length;
  }

  /** Messages in flight become visible again (their visibility timeout ran out). */
  public release(url: string): void {
    const queue = this.queue(url);
    queue.visible.push(...queue.inFlight.splice(0));
  }

  public async depth(queueUrl: string): Promise<QueueDepth> {
    this.calls.push(`depth ${queueUrl}`);
    if (this.unreachable.has(queueUrl)) throw new Error(`${queueUrl} is unreachable`);
    const queue = this.queue(queueUrl);
    const visible = queue.visible.length;
    const inFlight = queue.inFlight.length;
    return { visible, inFlight, depth: visible + inFlight };
  }

  public async send(queueUrl: string, message: OutgoingMessage): Promise<string> {
    this.calls.push(`send ${queueUrl}`);
    this.refuse(queueUrl);
    const messageId = this.nextId();
    this.queue(queueUrl).visible.push({
      messageId,
      body: message.body,
      attributes: { ...message.attributes },
    });
    return messageId;
  }

  public async sendBatch(queueUrl: string, messages: readonly OutgoingMessage[]): Promise<void> {
    this.calls.push(`sendBatch ${queueUrl}`);
    this.refuse(queueUrl);
    for (const message of messages) {
      this.queue(queueUrl).visible.push({
        messageId: this.nextId(),
        body: message.body,
        attributes: { ...message.attributes },
      });
    }
  }

  private refuse(queueUrl: string): void {
    if (this.unreachable.has(queueUrl)) throw new Error(`${queueUrl} is unreachable`);
    if (this.refusing.has(queueUrl)) throw new Error(`${queueUrl} refused the send`);
  }

  public async receive(
    queueUrl: string,
    options: { readonly max: number; readonly visibilitySeconds: number },
  ): Promise<ReceivedMessage[]> {
    this.calls.push(`receive ${queueUrl}`);
    const queue = this.queue(queueUrl);
    const taken = queue.visible.slice(0, Math.min(10, options.max));
    if (options.visibilitySeconds > 0) this.hold(queueUrl, taken.length);
    return taken.map((m) => ({
      MessageId: m.messageId,
      ReceiptHandle: `rh-${m.messageId}`,
      Body: m.body,
      MessageAttributes: { ...m.attributes },
    }));
  }

  public async move(request: MoveRequest): Promise<MoveResult> {
    this.calls.push(`move ${request.from} -> ${request.to}`);
    const source = this.queue(request.from);
    const target = this.queue(request.to);
    const undeleted: UndeletedMessage[] = [];
    let moved = 0;
    let withoutOrigin = 0;
    const result = (extra: Partial<MoveResult> = {}): MoveResult => ({
      moved,
      drained: false,
      undeleted,
      withoutOrigin,
      aborted: request.signal?.aborted ?? false,
      ...extra,
    });
    while (moved < request.max && !request.stop?.() && !request.signal?.aborted) {
      const batch = source.visible.splice(0, Math.min(10, request.max - moved));
      if (batch.length === 0) return result({ drained: true });
      if (this.refusing.has(request.to) || this.unreachable.has(request.to)) {
        source.visible.unshift(...batch);
        return result({ failure: { code: 'AccessDenied', message: `${request.to} refused the send` } });
      }
      for (const message of batch) {
        const kept = message.attributes[WireAttribute.ORIGIN_MESSAGE_ID]?.StringValue;
        const attributes = { ...message.attributes };
        let origin: string | undefined = kept || message.messageId;
        if (!kept && Object.keys(attributes).length < MAX_ATTRIBUTES) {
          attributes[WireAttribute.ORIGIN_MESSAGE_ID] = { DataType: 'String', StringValue: origin };
        } else if (!kept) {
          origin = undefined;
          withoutOrigin += 1;
        }
        target.visible.push({ messageId: this.nextId(), body: message.body, attributes });
        if (this.undeletable.has(request.from)) {
          // Still at the source, invisible until its visibility timeout runs out (see release).
          source.inFlight.push(message);
          undeleted.push({
            messageId: message.messageId,
            originMessageId: origin ?? message.messageId,
            code: 'InternalError',
            message: 'injected',
          });
        }
      }
      moved += batch.length;
      request.onBatch?.(moved);
    }
    return result();
  }
}

/** {@link PartitionRegistry} in memory; `loads` counts the reads of partition states. */
export class MemoryPartitionRegistry implements PartitionRegistry {
  private readonly states = new Map<string, Map<number, PartitionState>>();
  private readonly settings = new Map<string, RecordedSettings>();
  public loads = 0;

  private of(destination: string): Map<number, PartitionState> {
    let states = this.states.get(destination);
    if (!states) {
      states = new Map();
      this.states.set(destination, states);
    }
    return states;
  }

  public async recordSettings(destination: string, settings: RecordedSettings): Promise<void> {
    this.settings.set(destination, { ...settings });
  }

  public async loadSettings(destination: string): Promise<RecordedSettings | undefined> {
    const settings = this.settings.get(destination);
    return settings ? { ...settings } : undefined;
  }

  public async load(destination: string): Promise<Map<number, PartitionState>> {
    this.loads += 1;
    return new Map([...this.of(destination)].map(([index, state]) => [index, { ...state }]));
  }

  public async setEnabled(destination: string, index: number, enabled: boolean): Promise<void> {
    const states = this.of(destination);
    states.set(index, { ...(states.get(index) ?? { index }), enabled });
  }

  public async recordCycle(
    destination: string,
    index: number,
    lastDepth: number,
    lastProgressAt: number,
  ): Promise<void> {
    const states = this.of(destination);
    states.set(index, { enabled: true, ...states.get(index), index, lastDepth, lastProgressAt });
  }
}

/** The queue URL of partition `index` of a {@link memoryPartitions} destination. */
export const partitionUrl = (index: number): string =>
  `https://sqs.us-east-1.amazonaws.com/123456789012/t-reply-${index}`;

/** The backlog of a {@link memoryPartitions} distributor. */
export const BACKLOG_URL = 'https://sqs.us-east-1.amazonaws.com/123456789012/t-backlog';

/** What a log received, one entry per line, its fields spread. */
export type LoggedLine = { level: 'info' | 'warn' | 'error'; message: string } & Record<string, unknown>;

/**
 * A destination `replies` of `partitions` partitions and its distributor over the in-memory
 * ports, on a test clock (`now.at`), with high watermark 100, low 20 and stall 30 s unless
 * `watermarks` says otherwise. The distributor logs into `logged`.
 */
export function memoryPartitions(
  partitions = 2,
  options: {
    readonly destination?: Partial<Pick<DestinationOptions, 'highThreshold' | 'cacheMs'>>;
    readonly watermarks?: WatermarkOptions;
    readonly settings?: DeploymentSettings;
  } = {},
): {
  destination: PartitionedDestination;
  distributor: Distributor;
  queues: MemoryPartitionQueues;
  registry: MemoryPartitionRegistry;
  now: { at: number };
  logged: LoggedLine[];
} {
  const queues = new MemoryPartitionQueues();
  const registry = new MemoryPartitionRegistry();
  const now = { at: 1_000_000 };
  const clock = (): number => now.at;
  const logged: LoggedLine[] = [];
  const log: Log = {
    info: (message, fields) => logged.push({ level: 'info', message, ...fields }),
    warn: (message, fields) => logged.push({ level: 'warn', message, ...fields }),
    error: (message, fields) => logged.push({ level: 'error', message, ...fields }),
  };
  const destination = new PartitionedDestination({
    name: 'replies',
    partitions: Array.from({ length: partitions }, (_, index) => ({ index, queueUrl: partitionUrl(index) })),
    queues,
    registry,
    clock,
    ...options.destination,
  });
  const distributor = new Distributor({
    destination,
    backlogUrl: BACKLOG_URL,
    queues,
    registry,
    clock,
    highWatermark: 100,
    lowWatermark: 20,
    stallMs: 30_000,
    log,
    ...options.watermarks,
    ...(options.settings ? { settings: options.settings } : {}),
  });
  return { destination, distributor, queues, registry, now, logged };
}
