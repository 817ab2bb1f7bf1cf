import {
  CreateTableCommand,
  DeleteTableCommand,
  type DynamoDBClient,
  ResourceInUseException,
  ResourceNotFoundException,
  UpdateTimeToLiveCommand,
  waitUntilTableExists,
} from '@aws-sdk/client-dynamodb';
import {
  CreateEventBusCommand,
  type EventBridgeClient,
  ResourceAlreadyExistsException,
} from '@aws-sdk/client-eventbridge';
import { CreateBucketCommand, type S3Client } from '@aws-sdk/client-s3';
import {
  CreateQueueCommand,
  DeleteQueueCommand,
  GetQueueAttributesCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { QueueRole, QueueSpec, TableSpec, Topology } from '../shared/topology/topology.ts';

/** Where a provisioned topology lives: what the handlers' configuration needs. */
export interface Provisioned {
  readonly tableName: string;
  readonly queueUrls: Readonly<Record<QueueRole, string>>;
  readonly replyQueueUrls: readonly string[];
  /** Every queue URL, DLQs included, by queue name. */
  readonly allQueueUrls: Readonly<Record<string, string>>;
  /** The claim-check bucket, when an S3 client was given. */
  readonly bucketName?: string;
}

/**
 * Creates a topology's table and queues (each with its DLQ and redrive policy) on whatever
 * endpoint the clients point at: the emulators, LocalStack, or an AWS account for a quick try.
 * Idempotent: existing resources are reused. The CDK stack provisions the same topology in AWS.
 */
export async function provisionTopology(
  topology: Topology,
  clients: { readonly sqs: SQSClient; readonly dynamo: DynamoDBClient; readonly s3?: S3Client },
): Promise<Provisioned> {
  await createTable(clients.dynamo, topology.table);
  if (clients.s3) await createBucket(clients.s3, topology.bucketName);
  const allQueueUrls: Record<string, string> = {};
  const create = async (spec: QueueSpec): Promise<string> => {
    const { url, dlqUrl } = await provisionQueue(clients.sqs, spec);
    allQueueUrls[spec.dlqName] = dlqUrl;
    allQueueUrls[spec.name] = url;
    return url;
  };
  const queueUrls: Record<string, string> = {};
  for (const [role, spec] of Object.entries(topology.queues)) queueUrls[role] = await create(spec);
  const replyQueueUrls: string[] = [];
  for (const spec of topology.replyPartitions) replyQueueUrls.push(await create(spec));
  return {
    tableName: topology.tableName,
    queueUrls: queueUrls as Record<QueueRole, string>,
    replyQueueUrls,
    allQueueUrls,
    ...(clients.s3 ? { bucketName: topology.bucketName } : {}),
  };
}

/**
 * Creates one queue and its DLQ with the redrive policy of `spec` (idempotent), e.g. a responder
 * queue of a local demo beside the topology's own.
 */
export async function provisionQueue(
  sqs: SQSClient,
  spec: QueueSpec,
): Promise<{ readonly url: string; readonly dlqUrl: string }> {
  const dlqUrl = await createQueue(sqs, spec.dlqName, spec.fifo, {
    MessageRetentionPeriod: String(14 * 24 * 3600),
  });
  const dlqArn = await queueArn(sqs, dlqUrl);
  const url = await createQueue(sqs, spec.name, spec.fifo, {
    VisibilityTimeout: String(spec.visibilityTimeoutSeconds),
    MessageRetentionPeriod: String(spec.retentionSeconds ?? 14 * 24 * 3600),
    RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlqArn, maxReceiveCount: spec.maxReceiveCount }),
  });
  return { url, dlqUrl };
}

/**
 * Creates the output event bus `name` for definitions with `outputs.eventBridge` (idempotent);
 * returns its name.
 */
export async function provisionEventBus(eventBridge: EventBridgeClient, name: string): Promise<string> {
  try {
    await eventBridge.send(new CreateEventBusCommand({ Name: name }));
  } catch (error) {
    if (!(error instanceof ResourceAlreadyExistsException)) throw error;
  }
  return name;
}

/** Deletes what {@link provisionTopology} created. */
export async function deprovisionTopology(
  provisioned: Provisioned,
  clients: { readonly sqs: SQSClient; readonly dynamo: DynamoDBClient },
): Promise<void> {
  await Promise.all(
    Object.values(provisioned.allQueueUrls).map((QueueUrl) =>
      clients.sqs.send(new DeleteQueueCommand({ QueueUrl })).catch(() => undefined),
    ),
  );
  try {
    await clients.dynamo.send(new DeleteTableCommand({ TableName: provisioned.tableName }));
  } catch (error) {
    if (!(error instanceof ResourceNotFoundException)) throw error;
  }
}

/** The state table, exactly as the topology describes it (keys, TTL, indexes): the stack builds the same. */
async function createTable(dynamo: DynamoDBClient, table: TableSpec): Promise<void> {
  const attributes = new Map<string, 'S' | 'N'>();
  for (const key of [
    table.partitionKey,
    table.sortKey,
    ...table.indexes.flatMap((i) => [i.partitionKey, i.sortKey]),
  ]) {
    attributes.set(key.name, key.type);
  }
  try {
    await dynamo.send(
      new CreateTableCommand({
        TableName: table.name,
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: [...attributes].map(([AttributeName, AttributeType]) => ({
          AttributeName,
          AttributeType,
        })),
        KeySchema: [
          { AttributeName: table.partitionKey.name, KeyType: 'HASH' },
          { AttributeName: table.sortKey.name, KeyType: 'RANGE' },
        ],
        GlobalSecondaryIndexes: table.indexes.map((index) => ({
          IndexName: index.name,
          KeySchema: [
            { AttributeName: index.partitionKey.name, KeyType: 'HASH' },
            { AttributeName: index.sortKey.name, KeyType: 'RANGE' },
          ],
          Projection: { ProjectionType: index.projection },
        })),
      }),
    );
  } catch (error) {
    if (!(error instanceof ResourceInUseException)) throw error;
  }
  await waitUntilTableExists({ client: dynamo, maxWaitTime: 60 }, { TableName: table.name });
  // TTL removes tombstones in AWS; an emulator may accept the setting without acting on it.
  await dynamo
    .send(
      new UpdateTimeToLiveCommand({
        TableName: table.name,
        TimeToLiveSpecification: { AttributeName: table.ttlAttribute, Enabled: true },
      }),
    )
    .catch((error: unknown) => {
      if (!(error instanceof Error && /already enabled/i.test(error.message))) throw error;
    });
}

async function createBucket(s3: S3Client, bucket: string): Promise<void> {
  try {
    await s3.send(new CreateBucketCommand({ Bucket: bucket }));
  } catch (error) {
    const name = (error as Error).name;
    if (name !== 'BucketAlreadyOwnedByYou' && name !== 'BucketAlreadyExists') throw error;
  }
}

async function createQueue(
  sqs: SQSClient,
  name: string,
  fifo: boolean,
  attributes: Record<string, string>,
): Promise<string> {
  const { QueueUrl } = await sqs.send(
    new CreateQueueCommand({
      QueueName: name,
      Attributes: {
        ...attributes,
        ...(fifo
          ? {
              FifoQueue: 'true',
              ContentBasedDeduplication: 'false',
              // High-throughput mode, as the stack creates them (see infra/fanin-queue.ts).
              DeduplicationScope: 'messageGroup',
              FifoThroughputLimit: 'perMessageGroupId',
            }
          : {}),
      },
    }),
  );
  if (!QueueUrl) throw new Error(`CreateQueue returned no URL for ${name}`);
  return QueueUrl;
}

async function queueArn(sqs: SQSClient, queueUrl: string): Promise<string> {
  const { Attributes } = await sqs.send(
    new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['QueueArn'] }),
  );
  const arn = Attributes?.QueueArn;
  if (!arn) throw new Error(`no QueueArn for ${queueUrl}`);
  return arn;
}
