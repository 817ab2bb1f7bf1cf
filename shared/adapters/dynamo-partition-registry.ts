import { type DynamoDBDocumentClient, GetCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { PartitionRegistry, PartitionState, RecordedSettings } from '../partitions/registry.ts';

/**
 * Partition state as items of the state table: `pk = PD#<destination>`, `sk = P#<index>`. A few
 * items per destination, read by producers through a short cache and by the distributor once per
 * cycle. The distributor's settings are one more item, `sk = S`.
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
      if (!String(item.sk).startsWith('P#')) continue;
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

  public async recordSettings(destination: string, settings: RecordedSettings): Promise<void> {
    // An update, not a put: the distributor's role may only Query and UpdateItem (docs/security.md).
    const entries = Object.entries(settings);
    await this.client.send(
      new UpdateCommand({
        TableName: this.tableName,
        Key: { pk: `PD#${destination}`, sk: 'S' },
        UpdateExpression: `SET ${entries.map((_, i) => `#s${i} = :s${i}`).join(', ')}`,
        ExpressionAttributeNames: Object.fromEntries(entries.map(([name], i) => [`#s${i}`, name])),
        ExpressionAttributeValues: Object.fromEntries(entries.map(([, value], i) => [`:s${i}`, value])),
      }),
    );
  }

  public async loadSettings(destination: string): Promise<RecordedSettings | undefined> {
    const { Item } = await this.client.send(
      new GetCommand({
        TableName: this.tableName,
        Key: { pk: `PD#${destination}`, sk: 'S' },
        ConsistentRead: true,
      }),
    );
    if (!Item) return undefined;
    const number = (name: keyof RecordedSettings) => Number(Item[name]);
    return {
      highThreshold: number('highThreshold'),
      highWatermark: number('highWatermark'),
      lowWatermark: number('lowWatermark'),
      stallSeconds: number('stallSeconds'),
      distributorIntervalSeconds: number('distributorIntervalSeconds'),
      recordedAt: number('recordedAt'),
    };
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
