import {
  CreateTableCommand,
  DeleteTableCommand,
  type DynamoDBClient,
  ResourceInUseException,
  ResourceNotFoundException,
  waitUntilTableExists,
} from '@aws-sdk/client-dynamodb';
import {
  CreateQueueCommand,
  DeleteQueueCommand,
  GetQueueAttributesCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { QueueRole, QueueSpec, Topology } from '../topology/topology.ts';

/** Where a provisioned topology lives: what the handlers' configuration needs. */
export interface Provisioned {
  readonly tableName: string;
  readonly queueUrls: Readonly<Record<QueueRole, string>>;
  readonly replyQueueUrls: readonly string[];
  /** Every queue URL, DLQs included, by queue name. */
  readonly allQueueUrls: Readonly<Record<string, string>>;
}

/**
 * Creates a topology's table and queues (each with its DLQ and redrive policy) on whatever
 * endpoint the clients point at: the emulators, LocalStack, or an AWS account for a quick try.
 * Idempotent: existing resources are reused. The CDK stack provisions the same topology in AWS.
 */
export async function provisionTopology(
  topology: Topology,
  clients: { readonly sqs: SQSClient; readonly dynamo: DynamoDBClient },
): Promise<Provisioned> {
  await createTable(clients.dynamo, topology.tableName);
  const allQueueUrls: Record<string, string> = {};
  const create = async (spec: QueueSpec): Promise<string> => {
    const dlqUrl = await createQueue(clients.sqs, spec.dlqName, spec.fifo, {
      MessageRetentionPeriod: String(14 * 24 * 3600),
    });
    const dlqArn = await queueArn(clients.sqs, dlqUrl);
    const url = await createQueue(clients.sqs, spec.name, spec.fifo, {
      VisibilityTimeout: String(spec.visibilityTimeoutSeconds),
      RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlqArn, maxReceiveCount: spec.maxReceiveCount }),
    });
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
  };
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

/** The state table: keys, TTL and the two sparse indexes the sweeper and the control bus query. */
async function createTable(dynamo: DynamoDBClient, tableName: string): Promise<void> {
  try {
    await dynamo.send(
      new CreateTableCommand({
        TableName: tableName,
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: [
          { AttributeName: 'pk', AttributeType: 'S' },
          { AttributeName: 'sk', AttributeType: 'S' },
          { AttributeName: 'dueShard', AttributeType: 'S' },
          { AttributeName: 'dueAt', AttributeType: 'N' },
          { AttributeName: 'openDefinition', AttributeType: 'S' },
          { AttributeName: 'openedAt', AttributeType: 'N' },
        ],
        KeySchema: [
          { AttributeName: 'pk', KeyType: 'HASH' },
          { AttributeName: 'sk', KeyType: 'RANGE' },
        ],
        GlobalSecondaryIndexes: [
          {
            IndexName: 'due',
            KeySchema: [
              { AttributeName: 'dueShard', KeyType: 'HASH' },
              { AttributeName: 'dueAt', KeyType: 'RANGE' },
            ],
            Projection: { ProjectionType: 'KEYS_ONLY' },
          },
          {
            IndexName: 'open',
            KeySchema: [
              { AttributeName: 'openDefinition', KeyType: 'HASH' },
              { AttributeName: 'openedAt', KeyType: 'RANGE' },
            ],
            Projection: { ProjectionType: 'ALL' },
          },
        ],
      }),
    );
  } catch (error) {
    if (!(error instanceof ResourceInUseException)) throw error;
  }
  await waitUntilTableExists({ client: dynamo, maxWaitTime: 60 }, { TableName: tableName });
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
        ...(fifo ? { FifoQueue: 'true', ContentBasedDeduplication: 'false' } : {}),
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
