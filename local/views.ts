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

/** A page of the active aggregates, and where the next one starts (absent: that was the last). */
export interface ActivePageView {
  readonly aggregates: ActiveAggregate[];
  readonly next?: string;
}

/** How many active aggregates a page of the CLI's listing shows by default. */
export const DEFAULT_LIST_LIMIT = 100;

/**
 * Every active aggregate (open or completing), or those of one definition, oldest first, with the
 * replies each has so far: the state store's own listing (`DynamoStateStore.listActive`), every
 * page of it. Its work grows with the number of open aggregates ({@link listActivePage} does not).
 */
export async function listActive(
  client: DynamoDBDocumentClient,
  tableName: string,
  definition?: string,
): Promise<ActiveAggregate[]> {
  return (await new DynamoStateStore({ client, tableName }).listActive(definition)).map(activeSummary);
}

/**
 * Up to `limit` active aggregates (of one definition, or all) from `cursor` on, oldest first within
 * the page, with their replies counted, and the cursor of the next page when there are more. It
 * reads the `due` index `limit` entries at a time (each entry's aggregate consistently) until it
 * has `limit` aggregates or the index ends: a page of a definition with few of the open
 * aggregates may read several.
 *
 * @throws BadMessageError when `cursor` is not one a page returned
 */
export async function listActivePage(
  client: DynamoDBDocumentClient,
  tableName: string,
  options: { readonly definition?: string; readonly limit?: number; readonly cursor?: string } = {},
): Promise<ActivePageView> {
  const store = new DynamoStateStore({ client, tableName });
  const limit = options.limit ?? DEFAULT_LIST_LIMIT;
  const aggregates: ActiveAggregate[] = [];
  let cursor = options.cursor;
  do {
    const page = await store.listActivePage({
      ...(options.definition !== undefined ? { definition: options.definition } : {}),
      // No more entries than aggregates still wanted: the page ends exactly at its cursor.
      limit: limit - aggregates.length,
      replies: true,
      ...(cursor !== undefined ? { cursor } : {}),
    });
    aggregates.push(...page.aggregates.map((a) => activeSummary(a.header)));
    cursor = page.next;
  } while (cursor !== undefined && aggregates.length < limit);
  aggregates.sort((x, y) => x.openedAt - y.openedAt);
  return { aggregates, ...(cursor !== undefined ? { next: cursor } : {}) };
}
