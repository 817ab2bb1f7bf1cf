import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { type DynamoDBDocumentClient, paginateQuery, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';

/**
 * The state table as the DynamoDB state store's functions take it: the client, the table and its
 * `due` index. `DynamoStateStore` (dynamo-state-store.ts) holds one and passes it to the functions
 * of state-aggregates.ts, state-completion.ts, state-held.ts, state-due.ts, state-counters.ts and
 * state-parameters.ts.
 */
export interface StateTable {
  readonly client: DynamoDBDocumentClient;
  readonly tableName: string;
  /** The name of the table's `due` index (keys `dueShard`, `dueAt`). */
  readonly dueIndex: string;
}

/** Every item a query matches (up to `limit`), page by page with the SDK's paginator. */
export async function queryAll(
  table: StateTable,
  input: QueryCommandInput,
  limit = Number.POSITIVE_INFINITY,
): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  const pages = paginateQuery(
    { client: table.client, ...(Number.isFinite(limit) ? { pageSize: limit } : {}) },
    input,
  );
  for await (const page of pages) {
    items.push(...(page.Items ?? []));
    if (items.length >= limit) break;
  }
  return items.slice(0, limit);
}

/**
 * The result of a conditional write, or `undefined` when its condition failed: a lost race or a
 * duplicate is an answer the caller expects, not an error. Any other error is thrown.
 */
export async function unlessConditionFails<T>(write: Promise<T>): Promise<T | undefined> {
  try {
    return await write;
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return undefined;
    throw error;
  }
}
