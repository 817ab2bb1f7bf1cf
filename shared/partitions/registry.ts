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

/**
 * The partitioning settings the distributor runs with, as it last recorded them: what tools outside
 * the deployment (the CLI against a stack) show, since the settings themselves live in the
 * functions' configuration.
 */
export interface RecordedSettings {
  readonly highThreshold: number;
  readonly highWatermark: number;
  readonly lowWatermark: number;
  readonly stallSeconds: number;
  readonly distributorIntervalSeconds: number;
  /** When the distributor recorded them (epoch ms). */
  readonly recordedAt: number;
}

/** Reads and writes partition state. */
export interface PartitionRegistry {
  /** Records the settings a distributor runs with (each cycle: they change only on deployment). */
  recordSettings(destination: string, settings: RecordedSettings): Promise<void>;
  /** The settings last recorded, if a distributor ever ran. */
  loadSettings(destination: string): Promise<RecordedSettings | undefined>;
  /** State of every partition of a destination that has any (absent ones are enabled, never seen). */
  load(destination: string): Promise<Map<number, PartitionState>>;
  setEnabled(destination: string, index: number, enabled: boolean): Promise<void>;
  recordCycle(destination: string, index: number, lastDepth: number, lastProgressAt: number): Promise<void>;
}
