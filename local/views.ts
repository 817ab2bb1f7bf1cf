import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DynamoStateStore } from '../shared/adapters/dynamo-state-store.ts';

/**
 * Read-only views of the state table for the CLI and the dashboard. They read the table through
 * the state store (the same listing the control bus's `list` uses), without going through the
 * control queue, because a view must not consume anyone's status output.
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
 * Every active aggregate (open or completing), or those of one definition, oldest first, with the
 * replies each has so far: the state store's own listing (`DynamoStateStore.listActive`).
 */
export async function listActive(
  client: DynamoDBDocumentClient,
  tableName: string,
  definition?: string,
): Promise<ActiveAggregate[]> {
  const headers = await new DynamoStateStore({ client, tableName }).listActive(definition);
  return headers.map((header) => ({
    aggregateId: header.aggregateId,
    definition: header.definition,
    status: header.status,
    received: header.received,
    expected: header.expected ?? null,
    openedAt: header.openedAt,
    deadline: header.deadline ?? null,
  }));
}
