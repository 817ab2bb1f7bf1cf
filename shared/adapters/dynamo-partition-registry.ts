import { type DynamoDBDocumentClient, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { PartitionRegistry, PartitionState } from '../partitions/registry.ts';

/**
 * Partition state as items of the state table: `pk = PD#<destination>`, `sk = P#<index>`. A few
 * items per destination, read by producers through a short cache and by the distributor once per
 * cycle.
 */
export class DynamoPartitionRegistry implements PartitionRegistry {
  private readonly client: DynamoDBDocumentClient;
  private readonly tableName: string;

  public constructor(options: { readonly client: DynamoDBDocumentClient; readonly tableName: string }) {
    this.client = options.client;
    this.tableName = options.tableName;
  }

  public async load(destination: string): Promise<Map<number, PartitionState>> {
    const { Items = [] } = await this.client.send(
      new QueryCommand({
        TableName: this.tableName,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': `PD#${destination}` },
        ConsistentRead: true,
      }),
    );
    const states = new Map<number, PartitionState>();
    for (const item of Items) {
      const index = Number(item.index);
      states.set(index, {
        index,
        enabled: item.enabled !== false,
        ...(typeof item.lastDepth === 'number' ? { lastDepth: item.lastDepth } : {}),
        ...(typeof item.lastProgressAt === 'number' ? { lastProgressAt: item.lastProgressAt } : {}),
      });
    }
    return states;
  }

  public async setEnabled(destination: string, index: number, enabled: boolean): Promise<void> {
    await this.update(destination, index, 'SET enabled = :v', { ':v': enabled });
  }

  public async recordCycle(
    destination: string,
    index: number,
    lastDepth: number,
    lastProgressAt: number,
  ): Promise<void> {
    await this.update(destination, index, 'SET lastDepth = :d, lastProgressAt = :p', {
      ':d': lastDepth,
      ':p': lastProgressAt,
    });
  }

  private async update(
    destination: string,
    index: number,
    expression: string,
    values: Record<string, unknown>,
  ): Promise<void> {
    await this.client.send(
      new UpdateCommand({
        TableName: this.tableName,
        Key: { pk: `PD#${destination}`, sk: `P#${index}` },
        UpdateExpression: `${expression}, #index = :index`,
        ExpressionAttributeNames: { '#index': 'index' },
        ExpressionAttributeValues: { ...values, ':index': index },
      }),
    );
  }
}
