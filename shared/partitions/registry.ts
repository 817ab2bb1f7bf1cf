/**
 * The operational state of a partitioned destination's partitions, shared by every producer and
 * the distributor (DynamoDB in production and tests; see DynamoPartitionRegistry).
 */
export interface PartitionState {
  readonly index: number;
  /** False when an operator disabled sends to it. @default true */
  readonly enabled: boolean;
  /** Depth right after the distributor's last cycle (after its moves). */
  readonly lastDepth?: number;
  /** When the distributor last saw its consumer make progress (epoch ms). */
  readonly lastProgressAt?: number;
}

/** Reads and writes partition state. */
export interface PartitionRegistry {
  /** State of every partition of a destination that has any (absent ones are enabled, never seen). */
  load(destination: string): Promise<Map<number, PartitionState>>;
  setEnabled(destination: string, index: number, enabled: boolean): Promise<void>;
  recordCycle(destination: string, index: number, lastDepth: number, lastProgressAt: number): Promise<void>;
}
