import { NoPartitionAvailableError, type UnavailableReason } from '../errors.ts';
import type { OutgoingMessage, PartitionQueues, ReceivedMessage } from './queues.ts';
import type { PartitionRegistry, PartitionState } from './registry.ts';
import { type Candidate, choosePartition, type RoutingPolicy } from './routing.ts';

/** One partition: an SQS queue of the destination. */
export interface PartitionSpec {
  readonly index: number;
  readonly queueUrl: string;
}

/** What a producer sees of a partition. */
export interface PartitionStatus {
  readonly index: number;
  readonly queueUrl: string;
  readonly enabled: boolean;
  /** Visible + in-flight messages (SQS's approximate counts); undefined when unreachable. */
  readonly depth?: number;
  readonly visible?: number;
  readonly inFlight?: number;
  readonly highThreshold: number;
  readonly available: boolean;
  readonly reason?: UnavailableReason;
  /** Why it is unreachable, in SQS's words. */
  readonly detail?: string;
  /** Its stored state (enabled, the distributor's bookkeeping), as read with the depth. */
  readonly state?: PartitionState;
}

/** Options of a {@link PartitionedDestination}. */
export interface DestinationOptions {
  readonly name: string;
  readonly partitions: readonly PartitionSpec[];
  /** Its partitions' queues (SQS: shared/adapters/sqs-partition-queues.ts). */
  readonly queues: PartitionQueues;
  readonly registry: PartitionRegistry;
  /** A partition at or above this depth takes no new messages. @default 10,000 */
  readonly highThreshold?: number;
  /**
   * How long a read of depths and states is reused, ms. Depth is SQS's approximate count, which
   * AWS documents as eventually consistent (it can lag by about a minute); this cache adds at most
   * its own age. A stale depth can let a partition run past its threshold by the sends of that
   * window — the threshold is a soft bound, and nothing is lost either way. @default 2,000
   */
  readonly cacheMs?: number;
  readonly clock?: () => number;
}

/**
 * A partitioned destination: one name over N SQS queues. Sends are routed by policy
 * to an available partition; a partition is unavailable when send-disabled, at its high message
 * threshold, or unreachable. Consumers are bound to one partition each; {@link gather} reads all.
 */
export class PartitionedDestination {
  public readonly name: string;
  public readonly partitions: readonly PartitionSpec[];
  private readonly queues: PartitionQueues;
  private readonly registry: PartitionRegistry;
  private readonly highThreshold: number;
  private readonly cacheMs: number;
  private readonly clock: () => number;
  private cached?: { at: number; statuses: PartitionStatus[] };
  private rotation = 0;

  public constructor(options: DestinationOptions) {
    if (options.partitions.length === 0) throw new Error(`destination ${options.name} has no partitions`);
    this.name = options.name;
    this.partitions = options.partitions;
    this.queues = options.queues;
    this.registry = options.registry;
    this.highThreshold = options.highThreshold ?? 10_000;
    this.cacheMs = options.cacheMs ?? 2_000;
    this.clock = options.clock ?? Date.now;
  }

  /** Every partition's state, depth and availability (fresh when `fresh`, else through the cache). */
  public async status(fresh = false): Promise<PartitionStatus[]> {
    const now = this.clock();
    if (!fresh && this.cached && now - this.cached.at < this.cacheMs) return this.cached.statuses;
    // Concurrent callers (the requests of one batch, sent in parallel) share one read of the
    // registry and the depths instead of each making its own.
    if (!fresh && this.reading) return this.reading;
    const reading = (async () => {
      const states = await this.registry.load(this.name);
      const statuses = await Promise.all(this.partitions.map((p) => this.read(p, states.get(p.index))));
      this.cached = { at: now, statuses };
      return statuses;
    })();
    this.reading = reading;
    try {
      return await reading;
    } finally {
      if (this.reading === reading) delete this.reading;
    }
  }

  /** The read of {@link status} in flight, shared by the callers that arrive meanwhile. */
  private reading?: Promise<PartitionStatus[]>;

  /** Forgets cached depths and states (after an operator changed them). */
  public invalidate(): void {
    delete this.cached;
    delete this.reading;
  }

  private async read(partition: PartitionSpec, state: PartitionState | undefined): Promise<PartitionStatus> {
    const enabled = state?.enabled ?? true;
    const base = {
      index: partition.index,
      queueUrl: partition.queueUrl,
      enabled,
      highThreshold: this.highThreshold,
      ...(state ? { state } : {}),
    };
    try {
      const { visible, inFlight, depth } = await this.queues.depth(partition.queueUrl);
      const reason: UnavailableReason | undefined = !enabled
        ? 'send-disabled'
        : depth >= this.highThreshold
          ? 'at-high-threshold'
          : undefined;
      return {
        ...base,
        depth,
        visible,
        inFlight,
        available: reason === undefined,
        ...(reason ? { reason } : {}),
      };
    } catch (error) {
      return {
        ...base,
        available: false,
        reason: enabled ? 'unreachable' : 'send-disabled',
        detail: (error as Error).message,
      };
    }
  }

  /** The partition a message with this policy goes to now. Throws {@link NoPartitionAvailableError}. */
  public async choose(
    policy: RoutingPolicy,
    exclude: ReadonlySet<number> = new Set(),
  ): Promise<PartitionStatus> {
    const statuses = await this.status();
    const available = statuses.filter((s) => s.available && !exclude.has(s.index));
    const index = choosePartition(policy, available as Candidate[], this.rotation++);
    const chosen = statuses.find((s) => s.index === index);
    if (!chosen) {
      throw new NoPartitionAvailableError(
        this.name,
        statuses.map((s) => ({
          index: s.index,
          reason: exclude.has(s.index) ? 'unreachable' : (s.reason ?? 'unreachable'),
          ...(s.detail ? { detail: s.detail } : {}),
        })),
      );
    }
    return chosen;
  }

  /**
   * Sends one message to the partition the policy picks. A partition whose send fails is treated
   * as unreachable and the next one is tried; when none is left the error says why for each.
   */
  public async send(
    message: OutgoingMessage,
    policy: RoutingPolicy,
  ): Promise<{ partition: number; messageId: string }> {
    const failed = new Set<number>();
    const details = new Map<number, string>();
    for (;;) {
      let partition: PartitionStatus;
      try {
        partition = await this.choose(policy, failed);
      } catch (error) {
        if (error instanceof NoPartitionAvailableError && details.size > 0) {
          throw new NoPartitionAvailableError(
            this.name,
            error.partitions.map((p) => (details.has(p.index) ? { ...p, detail: details.get(p.index) } : p)),
          );
        }
        throw error;
      }
      try {
        const messageId = await this.queues.send(partition.queueUrl, message);
        return { partition: partition.index, messageId };
      } catch (error) {
        failed.add(partition.index);
        details.set(partition.index, `send to ${partition.queueUrl} failed: ${(error as Error).message}`);
        this.invalidate();
      }
    }
  }

  /**
   * Sends several messages, each routed by its own policy. Every message is routed before any is
   * sent, so when one cannot be routed nothing is sent at all.
   */
  public async sendBatch(
    messages: readonly { message: OutgoingMessage; policy: RoutingPolicy }[],
  ): Promise<number[]> {
    const routed = [];
    for (const { message, policy } of messages)
      routed.push({ message, partition: await this.choose(policy) });
    const byPartition = new Map<string, OutgoingMessage[]>();
    for (const { message, partition } of routed) {
      const list = byPartition.get(partition.queueUrl) ?? [];
      list.push(message);
      byPartition.set(partition.queueUrl, list);
    }
    for (const [queueUrl, list] of byPartition) await this.queues.sendBatch(queueUrl, list);
    return routed.map((r) => r.partition.index);
  }

  /** Enables or disables sends to a partition (it keeps being consumed either way). */
  public async setEnabled(index: number, enabled: boolean): Promise<void> {
    if (!this.partitions.some((p) => p.index === index)) {
      throw new Error(
        `destination ${this.name} has no partition ${index} (it has ${this.partitions.length})`,
      );
    }
    await this.registry.setEnabled(this.name, index, enabled);
    this.invalidate();
  }

  /**
   * The gathering reader: receives up to `max` messages from all partitions, without removing them
   * (they become visible again after `visibilityTimeoutSeconds`). No order is promised.
   */
  public async gather(
    max = 10,
    visibilityTimeoutSeconds = 0,
  ): Promise<(ReceivedMessage & { partition: number })[]> {
    const gathered: (ReceivedMessage & { partition: number })[] = [];
    for (const partition of this.partitions) {
      if (gathered.length >= max) break;
      const messages = await this.queues.receive(partition.queueUrl, {
        max: max - gathered.length,
        visibilitySeconds: visibilityTimeoutSeconds,
      });
      gathered.push(...messages.map((m) => ({ ...m, partition: partition.index })));
    }
    return gathered;
  }
}
