import {
  type AttributeDefinition,
  CreateTableCommand,
  DeleteTableCommand,
  type GlobalSecondaryIndex,
  type KeySchemaElement,
  UpdateTimeToLiveCommand,
  waitUntilTableExists,
} from '@aws-sdk/client-dynamodb';
import {
  type BucketLocationConstraint,
  CreateBucketCommand,
  DeleteBucketCommand,
  DeleteObjectsCommand,
  ListObjectsV2Command,
} from '@aws-sdk/client-s3';
import {
  CreateQueueCommand,
  DeleteQueueCommand,
  GetQueueAttributesCommand,
  type QueueAttributeName,
} from '@aws-sdk/client-sqs';
import { aws } from './clients.ts';
import { resourceName } from './names.ts';

/** A DynamoDB table to create with {@link TestResources.table}; string keys, on-demand billing. */
export interface TableSpec {
  /** Appended to the prefix. @default `table<n>` */
  readonly name?: string;
  /** @default 'pk' */
  readonly partitionKey?: string;
  /** @default none */
  readonly sortKey?: string;
  /** Enables TTL on this attribute. @default none */
  readonly ttlAttribute?: string;
  /** Indexes, with their key attributes in {@link TableSpec.attributeDefinitions}. @default none */
  readonly globalSecondaryIndexes?: readonly GlobalSecondaryIndex[];
  /** Definitions of attributes other than the table keys (which are defined as strings). @default none */
  readonly attributeDefinitions?: readonly AttributeDefinition[];
}

/** An SQS queue to create with {@link TestResources.queue}. */
export interface QueueSpec {
  /** Appended to the prefix (`.fifo` is added for FIFO queues). @default `queue<n>` */
  readonly name?: string;
  /** @default false */
  readonly fifo?: boolean;
  /** FIFO only. @default false */
  readonly contentBasedDeduplication?: boolean;
  /** @default the service default (30 s) */
  readonly visibilityTimeoutSeconds?: number;
  /** Creates a dead-letter queue (FIFO when the queue is) and a redrive policy to it. @default none */
  readonly deadLetter?: { readonly maxReceiveCount: number };
  /** Any other queue attributes. @default none */
  readonly attributes?: Partial<Record<QueueAttributeName, string>>;
}

/** A queue created by {@link TestResources.queue}. */
export interface TestQueue {
  readonly name: string;
  readonly url: string;
  readonly arn: string;
  /** The dead-letter queue, when {@link QueueSpec.deadLetter} was given. */
  readonly deadLetter: Omit<TestQueue, 'deadLetter'> | undefined;
}

/** Creates resources under one prefix and deletes them all in {@link TestResources.cleanup}. */
export interface TestResources {
  /** The prefix every resource name starts with. */
  readonly prefix: string;
  /** Creates a table and waits until it is ACTIVE; returns its name. */
  table(spec?: TableSpec): Promise<string>;
  /** Creates a standard or FIFO queue, optionally with a dead-letter queue. */
  queue(spec?: QueueSpec): Promise<TestQueue>;
  /** Creates a bucket; returns its name. */
  bucket(name?: string): Promise<string>;
  /**
   * Deletes everything created so far, newest first (buckets are emptied first). Tries every
   * resource and then throws an AggregateError if any deletion failed, so a leak is noticed.
   */
  cleanup(): Promise<void>;
}

/**
 * Test resources under `prefix`, created through the shared clients (so against whatever the
 * environment points at: the emulators, LocalStack or AWS).
 *
 * @example
 * const resources = createTestResources(uniquePrefix(import.meta.url));
 * afterAll(() => resources.cleanup());
 * const queue = await resources.queue({ deadLetter: { maxReceiveCount: 2 } });
 */
export function createTestResources(prefix: string): TestResources {
  const cleanups: Array<{ what: string; run: () => Promise<void> }> = [];
  let counter = 0;
  const next = (kind: string): string => `${kind}${++counter}`;

  async function createQueue(name: string, attributes: Partial<Record<QueueAttributeName, string>>) {
    const { QueueUrl: url } = await aws.sqs.send(
      new CreateQueueCommand({ QueueName: name, Attributes: attributes }),
    );
    if (url === undefined) throw new Error(`CreateQueue ${name} returned no QueueUrl`);
    cleanups.push({
      what: `queue ${name}`,
      run: () => ignoring(['QueueDoesNotExist', 'AWS.SimpleQueueService.NonExistentQueue'], deleteQueue(url)),
    });
    const { Attributes } = await aws.sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['QueueArn'] }),
    );
    const arn = Attributes?.QueueArn;
    if (arn === undefined) throw new Error(`GetQueueAttributes ${name} returned no QueueArn`);
    return { name, url, arn };
  }

  return {
    prefix,

    async table(spec = {}) {
      const name = resourceName(prefix, spec.name ?? next('table'), 'table');
      const partitionKey = spec.partitionKey ?? 'pk';
      const keySchema: KeySchemaElement[] = [{ AttributeName: partitionKey, KeyType: 'HASH' }];
      const definitions: AttributeDefinition[] = [{ AttributeName: partitionKey, AttributeType: 'S' }];
      if (spec.sortKey !== undefined) {
        keySchema.push({ AttributeName: spec.sortKey, KeyType: 'RANGE' });
        definitions.push({ AttributeName: spec.sortKey, AttributeType: 'S' });
      }
      const { TableDescription } = await aws.dynamoDb.send(
        new CreateTableCommand({
          TableName: name,
          BillingMode: 'PAY_PER_REQUEST',
          KeySchema: keySchema,
          AttributeDefinitions: [...definitions, ...(spec.attributeDefinitions ?? [])],
          GlobalSecondaryIndexes: spec.globalSecondaryIndexes ? [...spec.globalSecondaryIndexes] : undefined,
        }),
      );
      cleanups.push({
        what: `table ${name}`,
        run: async () => {
          await ignoring(
            ['ResourceNotFoundException'],
            aws.dynamoDb.send(new DeleteTableCommand({ TableName: name })),
          );
        },
      });
      // DynamoDB Local creates tables ACTIVE at once; AWS takes a few seconds.
      if (TableDescription?.TableStatus !== 'ACTIVE') {
        await waitUntilTableExists(
          { client: aws.dynamoDb, maxWaitTime: 120, minDelay: 1 },
          { TableName: name },
        );
      }
      if (spec.ttlAttribute !== undefined) {
        await aws.dynamoDb.send(
          new UpdateTimeToLiveCommand({
            TableName: name,
            TimeToLiveSpecification: { AttributeName: spec.ttlAttribute, Enabled: true },
          }),
        );
      }
      return name;
    },

    async queue(spec = {}) {
      const fifo = spec.fifo ?? false;
      const kind = fifo ? 'fifo-queue' : 'queue';
      const base = spec.name ?? next('queue');
      const name = resourceName(prefix, base, kind);
      const fifoAttributes: Partial<Record<QueueAttributeName, string>> = fifo ? { FifoQueue: 'true' } : {};

      let deadLetter: TestQueue['deadLetter'];
      if (spec.deadLetter !== undefined) {
        deadLetter = await createQueue(resourceName(prefix, `${base}-dlq`, kind), fifoAttributes);
      }
      const attributes: Partial<Record<QueueAttributeName, string>> = { ...fifoAttributes };
      if (fifo && spec.contentBasedDeduplication) attributes.ContentBasedDeduplication = 'true';
      if (spec.visibilityTimeoutSeconds !== undefined) {
        attributes.VisibilityTimeout = String(spec.visibilityTimeoutSeconds);
      }
      if (deadLetter !== undefined && spec.deadLetter !== undefined) {
        attributes.RedrivePolicy = JSON.stringify({
          deadLetterTargetArn: deadLetter.arn,
          maxReceiveCount: String(spec.deadLetter.maxReceiveCount),
        });
      }
      const queue = await createQueue(name, { ...attributes, ...spec.attributes });
      return { ...queue, deadLetter };
    },

    async bucket(suffix) {
      const name = resourceName(prefix, suffix ?? next('bucket'), 'bucket');
      const region = await aws.s3.config.region();
      await aws.s3.send(
        new CreateBucketCommand({
          Bucket: name,
          // us-east-1 is the one region that rejects an explicit location constraint.
          CreateBucketConfiguration:
            region === 'us-east-1' ? undefined : { LocationConstraint: region as BucketLocationConstraint },
        }),
      );
      cleanups.push({
        what: `bucket ${name}`,
        run: () => ignoring(['NoSuchBucket'], emptyAndDeleteBucket(name)),
      });
      return name;
    },

    async cleanup() {
      const failures: unknown[] = [];
      for (const { what, run } of cleanups.splice(0).reverse()) {
        try {
          await run();
        } catch (error) {
          failures.push(new Error(`could not delete ${what}`, { cause: error }));
        }
      }
      if (failures.length > 0)
        throw new AggregateError(failures, `cleanup of ${prefix} left resources behind`);
    },
  };
}

async function deleteQueue(url: string): Promise<void> {
  await aws.sqs.send(new DeleteQueueCommand({ QueueUrl: url }));
}

async function emptyAndDeleteBucket(bucket: string): Promise<void> {
  let token: string | undefined;
  do {
    const page = await aws.s3.send(new ListObjectsV2Command({ Bucket: bucket, ContinuationToken: token }));
    const keys = (page.Contents ?? []).flatMap(({ Key }) => (Key === undefined ? [] : [{ Key }]));
    if (keys.length > 0) {
      await aws.s3.send(new DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects: keys, Quiet: true } }));
    }
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token !== undefined);
  await aws.s3.send(new DeleteBucketCommand({ Bucket: bucket }));
}

/** Awaits `work`, treating an error with one of `names` (already gone) as success. */
async function ignoring(names: readonly string[], work: Promise<unknown>): Promise<void> {
  try {
    await work;
  } catch (error) {
    if (!(error instanceof Error && names.includes(error.name))) throw error;
  }
}
