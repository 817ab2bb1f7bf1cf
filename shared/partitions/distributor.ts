import type { SQSClient } from '@aws-sdk/client-sqs';
import { moveMessages } from '../adapters/sqs-queues.ts';
import type { PartitionedDestination, PartitionStatus } from './destination.ts';
import type { PartitionRegistry, RecordedSettings } from './registry.ts';

/** Watermarks and stall detection of a distributor. */
export interface WatermarkOptions {
  /** A partition is filled up to this depth. @default 100 */
  readonly highWatermark?: number;
  /** A partition is refilled once it has drained to this depth. @default 20 */
  readonly lowWatermark?: number;
  /** A partition with messages whose consumer made no progress for this long is stalled. @default 60,000 */
  readonly stallMs?: number;
  /** Most messages moved per cycle (bounds one invocation's work). @default 2,000 */
  readonly maxMovesPerCycle?: number;
  /**
   * How long a message being moved stays invisible at its source: if the move dies between its
   * send and its delete, the message reappears after this and is moved again. @default 30
   */
  readonly moveVisibilitySeconds?: number;
}

/** The partitioning settings a distributor does not use itself but records with its own. */
export type DeploymentSettings = Pick<RecordedSettings, 'highThreshold' | 'distributorIntervalSeconds'>;

/** What one cycle did. */
export interface CycleReport {
  /** Messages moved from the backlog, by partition. */
  readonly fed: Record<number, number>;
  /** Messages moved from stalled partitions back to the backlog, by partition. */
  readonly evacuated: Record<number, number>;
  readonly stalled: number[];
  readonly backlogEmpty: boolean;
}

/**
 * The watermark distributor (seed 004): a backlog queue feeds the partitions of a destination.
 *
 * Each cycle:
 * 1. read every partition's depth and its consumer's progress (depth below what the last cycle
 *    left means the consumer took messages);
 * 2. a partition with messages and no progress for `stallMs` is *stalled*: its messages beyond
 *    the low watermark (keeping at least one, so a consumer that starts late has work and shows
 *    progress) go back to the backlog;
 * 3. every enabled, healthy partition at or below the low watermark is filled from the backlog
 *    up to the high watermark — so no partition hoards the backlog and a new one is not starved.
 *
 * Moves are at-least-once: send to the target, then delete from the source. A crash in between
 * duplicates a message, which the reply path's deduplication makes harmless.
 */
export class Distributor {
  private readonly destination: PartitionedDestination;
  private readonly backlogUrl: string;
  private readonly sqs: SQSClient;
  private readonly registry: PartitionRegistry;
  private readonly settings: DeploymentSettings | undefined;
  private readonly clock: () => number;
  private readonly high: number;
  private readonly low: number;
  private readonly stallMs: number;
  private readonly maxMoves: number;
  private readonly moveVisibility: number;

  public constructor(
    options: {
      readonly destination: PartitionedDestination;
      readonly backlogUrl: string;
      readonly sqs: SQSClient;
      readonly registry: PartitionRegistry;
      readonly clock?: () => number;
      /**
       * When given, each cycle records these with the watermarks and stall time this distributor
       * runs with, for tools outside the deployment to show.
       */
      readonly settings?: DeploymentSettings;
    } & WatermarkOptions,
  ) {
    this.destination = options.destination;
    this.backlogUrl = options.backlogUrl;
    this.sqs = options.sqs;
    this.registry = options.registry;
    this.settings = options.settings;
    this.clock = options.clock ?? Date.now;
    this.high = options.highWatermark ?? 100;
    this.low = options.lowWatermark ?? 20;
    this.stallMs = options.stallMs ?? 60_000;
    this.maxMoves = options.maxMovesPerCycle ?? 2_000;
    this.moveVisibility = options.moveVisibilitySeconds ?? 30;
    if (!(this.low >= 0 && this.low < this.high)) {
      throw new Error(
        `lowWatermark must be >= 0 and below highWatermark (given ${this.low} and ${this.high})`,
      );
    }
  }

  /** Runs one cycle (the schedule's work; also callable on demand). */
  public async cycle(): Promise<CycleReport> {
    const now = this.clock();
    const statuses = await this.destination.status(true);
    const fed: Record<number, number> = {};
    const evacuated: Record<number, number> = {};
    const stalled: number[] = [];
    const depths = new Map<number, number>();
    const progress = new Map<number, number>();
    let budget = this.maxMoves;

    for (const partition of statuses) {
      if (partition.depth === undefined) continue;
      // Read with the depth in one registry load: state and depth describe the same moment.
      const state = partition.state;
      const took =
        state?.lastDepth === undefined || partition.depth < state.lastDepth || partition.depth === 0;
      const lastProgressAt = took ? now : (state?.lastProgressAt ?? now);
      progress.set(partition.index, lastProgressAt);
      depths.set(partition.index, partition.depth);
      if (partition.depth > 0 && now - lastProgressAt >= this.stallMs) {
        stalled.push(partition.index);
        const keep = Math.max(this.low, 1);
        const excess = Math.min(budget, partition.depth - keep);
        if (excess > 0) {
          const moved = await this.move(partition.queueUrl, this.backlogUrl, excess);
          evacuated[partition.index] = moved;
          depths.set(partition.index, partition.depth - moved);
          budget -= moved;
        }
      }
    }

    let backlogEmpty = false;
    const hungry = statuses
      .filter(
        (p): p is PartitionStatus & { depth: number } =>
          p.depth !== undefined && p.enabled && !stalled.includes(p.index),
      )
      .filter((p) => (depths.get(p.index) ?? p.depth) <= this.low)
      .sort((a, b) => (depths.get(a.index) ?? 0) - (depths.get(b.index) ?? 0));
    for (const partition of hungry) {
      if (budget <= 0 || backlogEmpty) break;
      const want = Math.min(budget, this.high - (depths.get(partition.index) ?? 0));
      const moved = await this.move(this.backlogUrl, partition.queueUrl, want);
      if (moved < want) backlogEmpty = true;
      fed[partition.index] = moved;
      depths.set(partition.index, (depths.get(partition.index) ?? 0) + moved);
      budget -= moved;
    }

    for (const partition of statuses) {
      const depth = depths.get(partition.index);
      if (depth === undefined) continue;
      await this.registry.recordCycle(
        this.destination.name,
        partition.index,
        depth,
        progress.get(partition.index) ?? now,
      );
    }
    if (this.settings) {
      await this.registry.recordSettings(this.destination.name, {
        ...this.settings,
        highWatermark: this.high,
        lowWatermark: this.low,
        stallSeconds: Math.round(this.stallMs / 1000),
        recordedAt: now,
      });
    }
    return { fed, evacuated, stalled, backlogEmpty };
  }

  /**
   * Moves every message of a partition back to the backlog, from where the next cycles feed the
   * other partitions: the step that empties a partition before it is removed (scale-in). Disable
   * sends to it first, or producers keep refilling it. Messages in flight (a consumer holds them)
   * are not moved: their consumer finishes them, or they reappear for a later evacuation.
   * @returns how many messages moved.
   * @throws when the backlog refuses a send: the messages not yet moved stay in the partition.
   */
  public async evacuate(
    index: number,
    options: { readonly onBatch?: (movedSoFar: number) => void; readonly stop?: () => boolean } = {},
  ): Promise<number> {
    const partition = this.destination.partitions.find((p) => p.index === index);
    if (!partition) throw new Error(`destination ${this.destination.name} has no partition ${index}`);
    const { moved, failure } = await moveMessages(this.sqs, {
      from: partition.queueUrl,
      to: this.backlogUrl,
      max: Number.MAX_SAFE_INTEGER,
      visibilitySeconds: this.moveVisibility,
      ...options,
    });
    if (failure) {
      throw new Error(
        `evacuating partition ${index}: the backlog refused a send after ${moved} moved (${failure.code}: ${failure.message})`,
      );
    }
    return moved;
  }

  /** Moves up to `count` messages from `from` to `to` (at least once). Returns how many moved. */
  private async move(from: string, to: string, count: number): Promise<number> {
    const { moved } = await moveMessages(this.sqs, {
      from,
      to,
      max: count,
      visibilitySeconds: this.moveVisibility,
    });
    return moved;
  }
}
