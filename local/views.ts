import {
  BatchGetCommand,
  type DynamoDBDocumentClient,
  QueryCommand,
  ScanCommand,
} from '@aws-sdk/lib-dynamodb';
import { DynamoStateStore, openIndexKeys } from '../shared/adapters/dynamo-state-store.ts';

/**
 * Read-only views of the state table for the CLI and the dashboard. They read the `open` index
 * (the same one the control bus's `list` uses) directly, without going through the control queue,
 * because a view must not consume anyone's status output.
 */

/** An active (open or completing) aggregate, from its header. */
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
 * active, never what is closed. The index holds keys only; each header is then read (consistently,
 * 100 at a time), which also drops one that closed since the index was read.
 */
export async function listActive(
  client: DynamoDBDocumentClient,
  tableName: string,
  definition?: string,
): Promise<ActiveAggregate[]> {
  const keys = definition
    ? (
        await Promise.all(
          openIndexKeys(definition).map((key) =>
            allPages((start) =>
              client.send(
                new QueryCommand({
                  TableName: tableName,
                  IndexName: 'open',
                  KeyConditionExpression: 'openDefinition = :d',
                  ExpressionAttributeValues: { ':d': key },
                  ExclusiveStartKey: start,
                }),
              ),
            ),
          ),
        )
      ).flat()
    : await allPages((start) =>
        client.send(new ScanCommand({ TableName: tableName, IndexName: 'open', ExclusiveStartKey: start })),
      );
  const headers = await getHeaders(
    client,
    tableName,
    keys.map((k) => String(k.pk)),
  );
  const active = headers.filter((item) => item.status === 'open' || item.status === 'completing');
  // An open header counts nothing (no reply writes it): its replies are counted from the table.
  const store = new DynamoStateStore({ client, tableName });
  const received = new Map<string, number>();
  let next = 0;
  const counter = async () => {
    for (let i = next++; i < active.length; i = next++) {
      const item = active[i] as Record<string, unknown>;
      if (item.status !== 'open') continue;
      const { replies } = await store.readAggregate(String(item.aggregateId));
      received.set(String(item.aggregateId), replies.filter((r) => !r.late).length);
    }
  };
  await Promise.all(Array.from({ length: Math.min(8, active.length) }, counter));
  return active
    .map((item) => ({
      aggregateId: String(item.aggregateId),
      definition: String(item.definition),
      status: String(item.status),
      received: received.get(String(item.aggregateId)) ?? Number(item.received ?? 0),
      expected: typeof item.expected === 'number' ? item.expected : null,
      openedAt: Number(item.openedAt),
      deadline: typeof item.deadline === 'number' ? item.deadline : null,
    }))
    .sort((a, b) => a.openedAt - b.openedAt);
}

type Key = Record<string, unknown>;

/** Every item of a paginated Query or Scan. */
async function allPages(
  page: (start: Key | undefined) => Promise<{ Items?: Key[]; LastEvaluatedKey?: Key }>,
): Promise<Key[]> {
  const items: Key[] = [];
  let start: Key | undefined;
  do {
    const { Items = [], LastEvaluatedKey } = await page(start);
    items.push(...Items);
    start = LastEvaluatedKey;
  } while (start);
  return items;
}

/** The headers (`sk = H`) of these partition keys, by consistent BatchGetItem, unprocessed keys retried. */
async function getHeaders(
  client: DynamoDBDocumentClient,
  tableName: string,
  partitionKeys: readonly string[],
): Promise<Record<string, unknown>[]> {
  const found: Record<string, unknown>[] = [];
  const unique = [...new Set(partitionKeys)];
  for (let i = 0; i < unique.length; i += 100) {
    let keys: Record<string, unknown>[] = unique.slice(i, i + 100).map((pk) => ({ pk, sk: 'H' }));
    for (let attempt = 0; keys.length > 0; attempt += 1) {
      if (attempt > 0)
        await new Promise((resolve) => setTimeout(resolve, Math.min(1_000, 50 * 2 ** attempt)));
      const { Responses, UnprocessedKeys } = await client.send(
        new BatchGetCommand({ RequestItems: { [tableName]: { Keys: keys, ConsistentRead: true } } }),
      );
      found.push(...(Responses?.[tableName] ?? []));
      keys = UnprocessedKeys?.[tableName]?.Keys ?? [];
    }
  }
  return found;
}
