import { DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import { GetQueueAttributesCommand, ListQueuesCommand } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { deprovisionTopology, provisionEventBus, provisionTopology } from '../../../local/provision.ts';
import { describeTopology } from '../../../shared/topology/topology.ts';
import {
  clientsOver,
  DynamoDbModel,
  EventBridgeModel,
  S3Model,
  SqsModel,
} from '../../../sim/models/index.ts';

/**
 * Provisioning a topology over the simulation's models: the table with its keys and indexes as the
 * topology describes them, every queue with its DLQ and redrive policy (FIFO ones as FIFO), the
 * bucket; twice is the same as once; deprovisioning removes it all. The runtime's integration tests
 * provision on the emulators.
 */

function world() {
  const clock = () => Date.now();
  return clientsOver({
    sqs: new SqsModel({ clock, random: Math.random }),
    dynamodb: new DynamoDbModel({ clock, random: Math.random }),
    s3: new S3Model({ clock, random: Math.random }),
    eventBridge: new EventBridgeModel({ clock, random: Math.random }),
  });
}

const topology = describeTopology({
  prefix: 'pv',
  replyPartitions: 2,
  definitions: [{ name: 'd', completion: { strategy: 'all' }, timeoutSeconds: 60 }],
});

describe('provisionTopology', () => {
  it('creates the table, every queue with its DLQ and redrive policy, and the bucket', async () => {
    const clients = world();

    const provisioned = await provisionTopology(topology, {
      sqs: clients.sqs,
      dynamo: clients.dynamoDb,
      s3: clients.s3,
    });

    expect(provisioned.tableName).toBe(topology.tableName);
    expect(provisioned.bucketName).toBe(topology.bucketName);
    expect(provisioned.replyQueueUrls).toHaveLength(2);
    expect(Object.keys(provisioned.queueUrls).sort()).toEqual(Object.keys(topology.queues).sort());
    const { Table } = await clients.dynamoDb.send(
      new DescribeTableCommand({ TableName: topology.tableName }),
    );
    expect(Table?.KeySchema?.map((k) => k.AttributeName)).toEqual([
      topology.table.partitionKey.name,
      topology.table.sortKey.name,
    ]);
    expect(Table?.GlobalSecondaryIndexes?.map((i) => i.IndexName).sort()).toEqual(
      topology.table.indexes.map((i) => i.name).sort(),
    );
    for (const spec of [...Object.values(topology.queues), ...topology.replyPartitions]) {
      const url = provisioned.allQueueUrls[spec.name] as string;
      expect(provisioned.allQueueUrls[spec.dlqName]).toBeDefined();
      const { Attributes = {} } = await clients.sqs.send(
        new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['All'] }),
      );
      expect(Attributes.VisibilityTimeout).toBe(String(spec.visibilityTimeoutSeconds));
      expect(JSON.parse(Attributes.RedrivePolicy ?? '{}')).toMatchObject({
        maxReceiveCount: spec.maxReceiveCount,
        deadLetterTargetArn: expect.stringMatching(new RegExp(`:${spec.dlqName.replace('.', '\\.')}$`)),
      });
      expect(Attributes.FifoQueue === 'true').toBe(spec.fifo);
    }
  });

  it('reuses what exists: a second provisioning finds the same queues', async () => {
    const clients = world();
    const first = await provisionTopology(topology, { sqs: clients.sqs, dynamo: clients.dynamoDb });
    const second = await provisionTopology(topology, { sqs: clients.sqs, dynamo: clients.dynamoDb });
    expect(second).toEqual(first);
    expect(second.bucketName).toBeUndefined();
  });

  it('deprovisioning deletes every queue and the table', async () => {
    const clients = world();
    const provisioned = await provisionTopology(topology, { sqs: clients.sqs, dynamo: clients.dynamoDb });

    await deprovisionTopology(provisioned, { sqs: clients.sqs, dynamo: clients.dynamoDb });

    const { QueueUrls = [] } = await clients.sqs.send(new ListQueuesCommand({}));
    expect(QueueUrls).toEqual([]);
    await expect(
      clients.dynamoDb.send(new DescribeTableCommand({ TableName: topology.tableName })),
    ).rejects.toThrow();
  });
});

describe('provisionEventBus', () => {
  it('creates the bus once and accepts one that exists', async () => {
    const { eventBridge } = world();
    expect(await provisionEventBus(eventBridge as NonNullable<typeof eventBridge>, 'bus')).toBe('bus');
    expect(await provisionEventBus(eventBridge as NonNullable<typeof eventBridge>, 'bus')).toBe('bus');
  });
});
