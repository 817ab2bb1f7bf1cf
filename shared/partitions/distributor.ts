import type { Log } from '../ports.ts';
import type { PartitionedDestination } from './destination.ts';
import type { MoveResult, PartitionQueues, UndeletedMessage } from './queues.ts';
import type { PartitionRegistry, RecordedSettings } from './registry.ts';

/** Watermarks and stall detection of a distributor. */
export interface WatermarkOptions {
  /** A partition is filled up to this depth. @default 100 */
  readonly highWatermark?: number;
  /** A partition is refilled once it has drained to this depth. @default 20 */
  readonly lowWatermark?: number;
  /** A partition with messages whose consumer made no progress for this long is stalled. @default 60,000 */
  readonly stallMs?: number;
  /**
   * Partitions drained on a schedule (`replyDrainIntervalSeconds`): never judged stalled, since
   * between two drains their depth only grows, however well the drain works. @default none
   */
  readonly drained?: readonly number[];
  /** Most messages moved per cycle (bounds one invocation's work). @default 2,000 */
  readonly maxMovesPerCycle?: number;
  /**
   * How long a message being moved stays invisible at its source: if the move dies between its
   * send and its delete, the message reappears after this and is moved again. @default 30
   */
  readonly moveVisibilitySeconds?: number;
  /**
   * Each receive of a move long-polls this long (1–20 s): a short poll asks only a sample of SQS's
   * servers and may find nothing while messages wait. @default 1
   */
  readonly moveWaitSeconds?: number;
  /**
   * A source counts as empty only after this many consecutive empty receives (at least 2), never
   * after one. @default 2
   */
  readonly emptyReceives?: number;
  /**
   * Where a cycle reports what went wrong in its moves (deletes SQS kept failing, sends a target
   * refused). @default JSON lines on the console (stderr), so it is never silent
   */
  readonly log?: Log;
}

/** The default log of a distributor: one JSON line per event on stderr (CloudWatch in Lambda). */
const CONSOLE_LOG: Log = {
  info: (message, fields) => console.info(JSON.stringify({ level: 'INFO', message, ...fields })),
  warn: (message, fields) => console.warn(JSON.stringify({ level: 'WARN', message, ...fields })),
  error: (message, fields) => console.error(JSON.stringify({ level: 'ERROR', message, ...fields })),
};

/** The partitioning settings a distributor does not use itself but records with its own. */
export type DeploymentSettings = Pick<RecordedSettings, 'highThreshold' | 'distributorIntervalSeconds'>;

/** What one cycle did. */
export interface CycleReport {
  /** Messages moved from the backlog, by partition. */
  readonly fed: Record<number, number>;
  /** Messages moved from stalled partitions back to the backlog, by partition. */
  readonly evacuated: Record<number, number>;
  readonly stalled: number[];
  /**
   * True only when a feed ended because `emptyReceives` consecutive long polls of the backlog
   * found nothing; never from one receive, and never from SQS's approximate counts.
   */
  readonly backlogEmpty: boolean;
  /**
   * Messages a move sent but could not delete from their source (SQS kept reporting the delete
   * as failed): they are at both queues until the source's copy is moved again. Both copies carry
   * one identity, so the reply path counts them once; they are reported so the failure is seen.
   */
  readonly undeleted: readonly UndeletedMessage[];
  /** Messages moved without their origin id (they already had 10 message attributes). */
  readonly withoutOrigin: number;
  /** Sends a target refused, by source → target (the messages stay at their source). */
  readonly refused: readonly {
    readonly from: string;
    readonly to: string;
    readonly code: string;
    readonly message: string;
  }[];
}

/** A partition as one cycle samples it: its state and SQS's approximate counts. */
export interface PartitionSample {
  readonly index: number;
  readonly enabled: boolean;
  /** Visible + in flight; undefined when the partition could not be read (it is left alone). */
  readonly depth?: number;
  readonly visible?: number;
  readonly inFlight?: number;
  readonly state?: { readonly lastDepth?: number; readonly lastProgressAt?: number };
}

/** What a cycle intends to do, before any message moves (see {@link planCycle}). */
export interface CyclePlan {
  /** When each readable partition last showed progress (recorded at the end of the cycle). */
  readonly progressAt: ReadonlyMap<number, number>;
  readonly stalled: readonly number[];
  /** How many messages to move from each stalled partition back to the backlog, in order. */
  readonly evacuate: readonly { readonly index: number; readonly count: number }[];
  /** Partitions to fill from the backlog, emptiest first, with how many each wants. */
  readonly feed: readonly { readonly index: number; readonly want: number }[];
}

/**
 * The watermark decisions of one cycle, without I/O.
 *
 * Progress evidence of a partition's consumer, from one sample: the partition is seen for the
 * first time, it is empty, its depth is below what the last cycle left, or it has messages in
 * flight (`ApproximateNumberOfMessagesNotVisible`: a consumer holds them). A partition is
 * *stalled* when it has visible messages and no sample showed progress for `stallMs`: that
 * takes at least two samples (the one that last showed progress and this one), so no single
 * reading of SQS's approximate counts, which lag by up to a minute, declares a stall. A lagging
 * count can only delay a stall (a late decrease reads as progress), and a working consumer holds
 * messages in flight, which counts as progress whatever the depth says.
 */
export function planCycle(input: {
  readonly now: number;
  readonly partitions: readonly PartitionSample[];
  readonly highWatermark: number;
  readonly lowWatermark: number;
  readonly stallMs: number;
  /** Partitions drained on a schedule: never stalled (see {@link WatermarkOptions.drained}). */
  readonly drained?: readonly number[];
}): CyclePlan {
  const { now, highWatermark: high, lowWatermark: low, stallMs } = input;
  const drained = new Set(input.drained ?? []);
  const progressAt = new Map<number, number>();
  const stalled: number[] = [];
  const evacuate: { index: number; count: number }[] = [];
  const depths = new Map<number, number>();
  for (const p of input.partitions) {
    if (p.depth === undefined) continue;
    const lastDepth = p.state?.lastDepth;
    const progressed =
      lastDepth === undefined || p.depth === 0 || p.depth < lastDepth || (p.inFlight ?? 0) > 0;
    const lastProgressAt = progressed ? now : (p.state?.lastProgressAt ?? now);
    progressAt.set(p.index, lastProgressAt);
    depths.set(p.index, p.depth);
    const visible = p.visible ?? p.depth;
    if (visible > 0 && now - lastProgressAt >= stallMs && !drained.has(p.index)) {
      stalled.push(p.index);
      // Keep at least one, so a consumer that starts late has work and shows progress.
      const count = Math.min(visible, p.depth - Math.max(low, 1));
      if (count > 0) evacuate.push({ index: p.index, count });
    }
  }
  const feed = input.partitions
    .filter((p) => p.depth !== undefined && p.enabled && !stalled.includes(p.index))
    .map((p) => ({ index: p.index, depth: depths.get(p.index) ?? 0 }))
    .filter((p) => p.depth <= low)
    .sort((a, b) => a.depth - b.depth)
    .map((p) => ({ index: p.index, want: high - p.depth }));
  return { progressAt, stalled, evacuate, feed };
}

/**
 * The watermark distributor: a backlog queue feeds the partitions of a destination.
 *
 * Each cycle ({@link planCycle} decides, this class moves):
 * 1. read every partition's depth and its consumer's progress;
 * 2. a partition with visible messages and no progress for `stallMs` is *stalled*: its messages
 *    beyond the low watermark (keeping at least one, so a consumer that starts late has work and
 *    shows progress) go back to the backlog;
 * 3. every enabled, healthy partition at or below the low watermark is filled from the backlog
 *    up to the high watermark — so no partition hoards the backlog and a new one is not starved.
 *
 * Moves are at-least-once: send to the target, then delete from the source. A crash in between
 * duplicates a message; the copy carries the original's identity (`fanin-origin-message-id`),
 * so the reply path counts it once. Moves long-poll, and a source counts as empty only after
 * several consecutive empty receives.
 */
export class Distributor {
  private readonly destination: PartitionedDestination;
  private readonly backlogUrl: string;
  private readonly queues: PartitionQueues;
  private readonly registry: PartitionRegistry;
  private readonly settings: DeploymentSettings | undefined;
  private readonly clock: () => number;
  private readonly high: number;
  private readonly low: number;
  private readonly stallMs: number;
  private readonly drained: readonly number[];
  private readonly maxMoves: number;
  private readonly moveVisibility: number;
  private readonly moveWait: number;
  private readonly emptyReceives: number;
  private readonly log: Log;

  public constructor(
    options: {
      readonly destination: PartitionedDestination;
      readonly backlogUrl: string;
      /** The backlog's and the partitions' queues (SQS: shared/adapters/sqs-partition-queues.ts). */
      readonly queues: PartitionQueues;
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
    this.queues = options.queues;
    this.registry = options.registry;
    this.settings = options.settings;
    this.clock = options.clock ?? Date.now;
    this.high = options.highWatermark ?? 100;
    this.low = options.lowWatermark ?? 20;
    this.stallMs = options.stallMs ?? 60_000;
    this.drained = options.drained ?? [];
    this.maxMoves = options.maxMovesPerCycle ?? 2_000;
    this.moveVisibility = options.moveVisibilitySeconds ?? 30;
    this.moveWait = options.moveWaitSeconds ?? 1;
    this.emptyReceives = options.emptyReceives ?? 2;
    this.log = options.log ?? CONSOLE_LOG;
    if (!(this.low >= 0 && this.low < this.high)) {
      throw new Error(
        `lowWatermark must be >= 0 and below highWatermark (given ${this.low} and ${this.high})`,
      );
    }
    if (!(Number.isInteger(this.moveWait) && this.moveWait >= 1 && this.moveWait <= 20)) {
      throw new Error(`moveWaitSeconds must be an integer from 1 to 20 (given ${this.moveWait})`);
    }
    if (!(Number.isInteger(this.emptyReceives) && this.emptyReceives >= 2)) {
      throw new Error(`emptyReceives must be an integer of at least 2 (given ${this.emptyReceives})`);
    }
  }

  /**
   * Runs one cycle (the schedule's work; also callable on demand).
   * @param options.signal aborting it cancels the SQS call in progress and ends the cycle with
   *   the signal's reason (a move cut short is as safe as a crash: its messages reappear).
   */
  public async cycle(options: { readonly signal?: AbortSignal } = {}): Promise<CycleReport> {
    const signal = options.signal;
    signal?.throwIfAborted();
    const now = this.clock();
    const statuses = await this.destination.status(true);
    const plan = planCycle({
      now,
      partitions: statuses,
      highWatermark: this.high,
      lowWatermark: this.low,
      stallMs: this.stallMs,
      drained: this.drained,
    });
    const fed: Record<number, number> = {};
    const evacuated: Record<number, number> = {};
    const undeleted: UndeletedMessage[] = [];
    const refused: { from: string; to: string; code: string; message: string }[] = [];
    let withoutOrigin = 0;
    const depths = new Map<number, number>();
    for (const s of statuses) if (s.depth !== undefined) depths.set(s.index, s.depth);
    const urlOf = (index: number): string => statuses.find((s) => s.index === index)?.queueUrl ?? '';
    let budget = this.maxMoves;
    const move = async (from: string, to: string, count: number): Promise<MoveResult> => {
      const result = await this.queues.move({
        from,
        to,
        max: count,
        visibilitySeconds: this.moveVisibility,
        waitSeconds: this.moveWait,
        emptyReceives: this.emptyReceives,
        ...(signal ? { signal } : {}),
      });
      signal?.throwIfAborted();
      budget -= result.moved;
      undeleted.push(...result.undeleted);
      withoutOrigin += result.withoutOrigin;
      if (result.failure) refused.push({ from, to, ...result.failure });
      return result;
    };

    for (const { index, count } of plan.evacuate) {
      const want = Math.min(budget, count);
      if (want <= 0) break;
      const { moved } = await move(urlOf(index), this.backlogUrl, want);
      evacuated[index] = moved;
      depths.set(index, (depths.get(index) ?? 0) - moved);
    }

    let backlogEmpty = false;
    for (const { index, want: wanted } of plan.feed) {
      const want = Math.min(budget, wanted);
      if (want <= 0) break;
      const result = await move(this.backlogUrl, urlOf(index), want);
      fed[index] = result.moved;
      depths.set(index, (depths.get(index) ?? 0) + result.moved);
      if (result.drained) {
        backlogEmpty = true;
        break;
      }
    }

    this.reportTrouble(undeleted, refused);
    for (const [index, depth] of depths) {
      await this.registry.recordCycle(this.destination.name, index, depth, plan.progressAt.get(index) ?? now);
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
    return { fed, evacuated, stalled: [...plan.stalled], backlogEmpty, undeleted, withoutOrigin, refused };
  }

  /** Logs deletes that kept failing and refused sends: neither may go unnoticed. */
  private reportTrouble(undeleted: readonly UndeletedMessage[], refused: CycleReport['refused']): void {
    if (undeleted.length > 0) {
      this.log.warn('distributor: moved messages whose delete from their source kept failing', {
        destination: this.destination.name,
        undeleted: undeleted.length,
        messageIds: undeleted.slice(0, 10).map((u) => u.messageId),
        codes: [...new Set(undeleted.map((u) => u.code))],
      });
    }
    for (const r of refused) {
      this.log.warn('distributor: a move stopped because its target refused a send', {
        destination: this.destination.name,
        from: r.from,
        to: r.to,
        code: r.code,
      });
    }
  }

  /**
   * Moves every message of a partition back to the backlog, from where the next cycles feed the
   * other partitions: the step that empties a partition before it is removed (scale-in). Disable
   * sends to it first, or producers keep refilling it. Messages in flight (a consumer holds them)
   * are not moved: their consumer finishes them, or they reappear for a later evacuation. It ends
   * when `emptyReceives` consecutive long polls of the partition find nothing, `stop()` says so,
   * or `signal` is aborted. Deletes that keep failing are logged (their copies are harmless).
   * @returns how many messages moved.
   * @throws when the backlog refuses a send: the messages not yet moved stay in the partition.
   */
  public async evacuate(
    index: number,
    options: {
      readonly onBatch?: (movedSoFar: number) => void;
      readonly stop?: () => boolean;
      readonly signal?: AbortSignal;
    } = {},
  ): Promise<number> {
    const partition = this.destination.partitions.find((p) => p.index === index);
    if (!partition) throw new Error(`destination ${this.destination.name} has no partition ${index}`);
    const { moved, failure, undeleted } = await this.queues.move({
      from: partition.queueUrl,
      to: this.backlogUrl,
      max: Number.MAX_SAFE_INTEGER,
      visibilitySeconds: this.moveVisibility,
      waitSeconds: this.moveWait,
      emptyReceives: this.emptyReceives,
      ...options,
    });
    this.reportTrouble(undeleted, []);
    if (failure) {
      throw new Error(
        `evacuating partition ${index}: the backlog refused a send after ${moved} moved (${failure.code}: ${failure.message})`,
      );
    }
    return moved;
  }
}
