import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DynamoStateStore } from '../shared/adapters/dynamo-state-store.ts';
import { activeSummary } from '../shared/use-cases/control.ts';

/**
 * Read-only views of the state table for the CLI and the dashboard. They read the table through
 * the state store (the same listing the control bus's `list` uses), without going through the
 * control queue, because a view must not consume anyone's status output.
 */

/** An active (open or completing) aggregate, as the control bus's `list` reports it. */
export type ActiveAggregate = ReturnType<typeof activeSummary>;

/**
 * Every active aggregate (open or completing), or those of one definition, oldest first, with the
 * replies each has so far: the state store's own listing (`DynamoStateStore.listActive`).
 */
export async function listActive(
  client: DynamoDBDocumentClient,
  tableName: string,
  definition?: string,
): Promise<ActiveAggregate[]> {
  return (await new DynamoStateStore({ client, tableName }).listActive(definition)).map(activeSummary);
}
