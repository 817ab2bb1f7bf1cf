import { type DynamoDBDocumentClient, QueryCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';

/**
 * Read-only views of the state table for the CLI and the dashboard. They read the `open` index
 * (the same one the control bus's `list` uses) directly, without going through the control queue,
 * because a view must not consume anyone's status output.
 */

/** An active (open or completing) aggregate, as the `open` index holds it. */
export interface ActiveAggregate {
  readonly aggregateId: string;
  readonly definition: string;
  readonly status: string;
  readonly received: number;
  readonly expected: number | null;
  readonly openedAt: number;
  readonly deadline: number | null;
}

/**
 * Every active aggregate, or those of one definition. Open headers carry `openDefinition` until
 * they close, so the index holds open and completing aggregates only: reading it costs what is
 * active, never what is closed.
 */
export async function listActive(
  client: DynamoDBDocumentClient,
  tableName: string,
  definition?: string,
): Promise<ActiveAggregate[]> {
  const items: Record<string, unknown>[] = [];
  let ExclusiveStartKey: Record<string, unknown> | undefined;
  do {
    const page = definition
      ? await client.send(
          new QueryCommand({
            TableName: tableName,
            IndexName: 'open',
            KeyConditionExpression: 'openDefinition = :d',
            ExpressionAttributeValues: { ':d': definition },
            ExclusiveStartKey,
          }),
        )
      : await client.send(new ScanCommand({ TableName: tableName, IndexName: 'open', ExclusiveStartKey }));
    items.push(...(page.Items ?? []));
    ExclusiveStartKey = page.LastEvaluatedKey;
  } while (ExclusiveStartKey);
  return items
    .map((item) => ({
      aggregateId: String(item.aggregateId),
      definition: String(item.definition),
      status: String(item.status),
      received: Number(item.received ?? 0),
      expected: typeof item.expected === 'number' ? item.expected : null,
      openedAt: Number(item.openedAt),
      deadline: typeof item.deadline === 'number' ? item.deadline : null,
    }))
    .sort((a, b) => a.openedAt - b.openedAt);
}
