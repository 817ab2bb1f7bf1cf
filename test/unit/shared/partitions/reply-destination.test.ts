import { CreateQueueCommand, GetQueueAttributesCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import type { RuntimeConfig } from '../../../../shared/config.ts';
import {
  createDistributor,
  REPLY_DESTINATION,
  replyDestination,
} from '../../../../shared/partitions/reply-destination.ts';
import { describeTopology, QueueRole, resolvePartitioning } from '../../../../shared/topology/topology.ts';
import { clientsOver, DynamoDbModel, SqsModel } from '../../../../sim/models/index.ts';

/**
 * The reply partitions as a destination, built from a configuration over the SDK clients
 * (docs/partitions.md): one partition per reply queue, in order, its state in the configured
 * table under the destination `replies`. Its own fast test, over the simulation's in-process
 * models; the emulator suites prove the distributor's moves.
 */
const NOW = 1_700_000_000_000;
const DEFINITION = { name: 'd', completion: { strategy: 'all' as const } };

async function aDeployment() {
  let seed = 1;
  const random = () => {
    seed = (seed * 48_271) % 2_147_483_647;
    return seed / 2_147_483_647;
  };
  const models = {
    sqs: new SqsModel({ clock: () => NOW, random }),
    dynamodb: new DynamoDbModel({ clock: () => NOW, random }),
  };
  // The table as the stack creates it (the topology's keys and indexes).
  models.dynamodb.createTable({
    ...describeTopology({ definitions: [DEFINITION] }).table,
    name: 'fanin-state',
  });
  const clients = clientsOver(models);
  const url = async (name: string) =>
    (await clients.sqs.send(new CreateQueueCommand({ QueueName: name }))).QueueUrl as string;
  const replyQueueUrls = [await url('fanin-reply-0'), await url('fanin-reply-1')];
  const roles = Object.values(QueueRole);
  const queueUrls = Object.fromEntries(
    await Promise.all(roles.map(async (role) => [role, await url(`fanin-${role}`)])),
  ) as RuntimeConfig['queueUrls'];
  const config: RuntimeConfig = {
    tableName: 'fanin-state',
    queueUrls,
    replyQueueUrls,
    definitions: new Map(),
  };
  return { config, clients: { sqs: clients.sqs, dynamo: clients.dynamo }, replyQueueUrls };
}

describe('the reply destination', () => {
  it('is named replies and has one partition per reply queue, in order', async () => {
    const { config, clients, replyQueueUrls } = await aDeployment();
    const destination = replyDestination(config, clients);
    expect(destination.name).toBe(REPLY_DESTINATION);
    expect(REPLY_DESTINATION).toBe('replies');
    expect(destination.partitions).toEqual([
      { index: 0, queueUrl: replyQueueUrls[0] },
      { index: 1, queueUrl: replyQueueUrls[1] },
    ]);
  });

  it('reads each partition from its queue and its state from the configured table', async () => {
    const { config, clients } = await aDeployment();
    const destination = replyDestination(config, clients);
    await destination.setEnabled(1, false);
    const statuses = await replyDestination(config, clients).status(true);
    expect(statuses.map((s) => [s.index, s.enabled, s.depth])).toEqual([
      [0, true, 0],
      [1, false, 0],
    ]);
  });

  it("takes the topology's default high threshold when the configuration sets no partitioning", async () => {
    const { config, clients } = await aDeployment();
    const [status] = await replyDestination(config, clients).status(true);
    expect(status?.highThreshold).toBe(10_000);
    const partitioning = resolvePartitioning({ highThreshold: 200 });
    const [given] = await replyDestination({ ...config, partitioning }, clients).status(true);
    expect(given?.highThreshold).toBe(200);
  });
});

describe('the reply distributor', () => {
  it('feeds the reply partitions from the configured backlog', async () => {
    const { config, clients, replyQueueUrls } = await aDeployment();
    await clients.sqs.send(
      new SendMessageCommand({ QueueUrl: config.queueUrls[QueueRole.BACKLOG], MessageBody: '{}' }),
    );
    const report = await createDistributor(config, clients, () => NOW).cycle();
    expect(Object.values(report.fed).reduce((a, b) => a + b, 0)).toBe(1);
    const depths = await Promise.all(
      replyQueueUrls.map(async (QueueUrl) => {
        const { Attributes } = await clients.sqs.send(
          new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['ApproximateNumberOfMessages'] }),
        );
        return Number(Attributes?.ApproximateNumberOfMessages);
      }),
    );
    expect(depths.reduce((a, b) => a + b, 0)).toBe(1);
  });
});
