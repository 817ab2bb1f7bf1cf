import { DynamoPartitionRegistry } from '../adapters/dynamo-partition-registry.ts';
import { SqsPartitionQueues } from '../adapters/sqs-partition-queues.ts';
import type { AwsClients } from '../aws/clients.ts';
import type { RuntimeConfig } from '../config.ts';
import { QueueRole, resolvePartitioning } from '../topology/topology.ts';
import { PartitionedDestination } from './destination.ts';
import { Distributor, type WatermarkOptions } from './distributor.ts';

/**
 * The reply partitions as a destination, and their distributor, from a configuration and two SDK
 * clients. Nothing here imports Powertools or anything Lambda-only: the client package
 * (`@fanin/client`: producers, responders, the CLI) reaches it through `shared/client/connect.ts`, and
 * `shared/app.ts` (the handlers' wiring) re-exports it.
 */

/** The clients the reply destination and its distributor use (a bundle of `createClients()` fits). */
export interface PartitionClients {
  readonly sqs: AwsClients['sqs'];
  readonly dynamo: AwsClients['dynamo'];
}

/** The name of the reply destination in the partition registry. */
export const REPLY_DESTINATION = 'replies';

/** The reply partitions as a partitioned destination: routing, availability, the distributor's view. */
export function replyDestination(config: RuntimeConfig, clients: PartitionClients): PartitionedDestination {
  return new PartitionedDestination({
    name: REPLY_DESTINATION,
    partitions: config.replyQueueUrls.map((queueUrl, index) => ({ index, queueUrl })),
    queues: new SqsPartitionQueues({ sqs: clients.sqs }),
    registry: new DynamoPartitionRegistry({ client: clients.dynamo, tableName: config.tableName }),
    highThreshold: (config.partitioning ?? resolvePartitioning({})).highThreshold,
  });
}

/** The watermark distributor of the reply destination, from the same configuration. */
export function createDistributor(
  config: RuntimeConfig,
  clients: PartitionClients,
  clock: () => number = Date.now,
  options: WatermarkOptions = {},
): Distributor {
  const partitioning = config.partitioning ?? resolvePartitioning({});
  return new Distributor({
    destination: replyDestination(config, clients),
    backlogUrl: config.queueUrls[QueueRole.BACKLOG],
    // A reply it moved before keeps its first send time only when this mover sent that copy.
    queues: new SqsPartitionQueues({ sqs: clients.sqs, trustedSenders: config.trustedMovers ?? [] }),
    registry: new DynamoPartitionRegistry({ client: clients.dynamo, tableName: config.tableName }),
    highWatermark: partitioning.highWatermark,
    lowWatermark: partitioning.lowWatermark,
    stallMs: partitioning.stallSeconds * 1000,
    drained: partitioning.drained,
    settings: {
      highThreshold: partitioning.highThreshold,
      distributorIntervalSeconds: partitioning.distributorIntervalSeconds,
    },
    clock,
    ...options,
  });
}
