/**
 * The batch operations of the DynamoDB model: BatchGetItem and BatchWriteItem, with DynamoDB's
 * limits (100 keys, 25 requests) and its refusal of a key named twice. UnprocessedKeys and
 * UnprocessedItems are always empty: the simulation injects throttling around a call instead.
 */
import { validation } from '../errors.ts';
import { DYNAMODB_LIMITS } from './limits.ts';
import { checkItem, checkKey } from './size.ts';
import type { Table } from './table.ts';
import type { Item } from './values.ts';

type Request = Record<string, unknown>;

/** BatchGetItem: at most 100 keys in all, no key twice; every key read as GetItem reads it. */
export function batchGet(input: Request, getItem: (input: Request) => Request): Request {
  const requests = Object.entries(
    (input.RequestItems ?? {}) as Record<
      string,
      {
        Keys?: Item[];
        ConsistentRead?: boolean;
        ProjectionExpression?: string;
        ExpressionAttributeNames?: Record<string, string>;
      }
    >,
  );
  const total = requests.reduce((n, [, r]) => n + (r.Keys?.length ?? 0), 0);
  if (total > DYNAMODB_LIMITS.batchGet)
    throw validation('Too many items requested for the BatchGetItem call');
  if (total === 0) throw validation('The requestItems parameter is required for BatchGetItem');
  const Responses: Record<string, Item[]> = {};
  for (const [name, request] of requests) {
    const seen = new Set<string>();
    for (const key of request.Keys ?? []) {
      const id = JSON.stringify(key);
      if (seen.has(id)) throw validation('Provided list of item keys contains duplicates');
      seen.add(id);
    }
    Responses[name] = (request.Keys ?? [])
      .map(
        (Key) =>
          getItem({
            TableName: name,
            Key,
            ConsistentRead: request.ConsistentRead,
            ProjectionExpression: request.ProjectionExpression,
            ExpressionAttributeNames: request.ExpressionAttributeNames,
          }).Item as Item | undefined,
      )
      .filter((i): i is Item => i !== undefined);
  }
  return { Responses, UnprocessedKeys: {} };
}

/** BatchWriteItem: at most 25 requests, no key twice, each checked as PutItem checks; all applied. */
export function batchWrite(
  input: Request,
  tableOf: (name: string) => Table,
  write: (table: Table, key: Item, item: Item | undefined) => void,
): Request {
  const requests = Object.entries(
    (input.RequestItems ?? {}) as Record<
      string,
      { PutRequest?: { Item: Item }; DeleteRequest?: { Key: Item } }[]
    >,
  );
  const total = requests.reduce((n, [, r]) => n + r.length, 0);
  if (total > DYNAMODB_LIMITS.batchWrite || requests.some(([, r]) => r.length === 0)) {
    throw validation(
      "1 validation error detected: Value at 'requestItems' failed to satisfy constraint: Map value must satisfy constraint: [Member must have length less than or equal to 25, Member must have length greater than or equal to 1]",
    );
  }
  const writes: { table: Table; key: Item; item: Item | undefined }[] = [];
  for (const [name, list] of requests) {
    const table = tableOf(name);
    const seen = new Set<string>();
    for (const request of list) {
      let key: Item;
      let item: Item | undefined;
      if (request.PutRequest) {
        item = request.PutRequest.Item;
        checkItem(item, table.schema);
        table.checkIndexKeys(item);
        key = table.keyOf(item);
      } else {
        key = request.DeleteRequest?.Key ?? {};
        checkKey(key, table.schema, true);
      }
      const id = JSON.stringify(table.keyNames().map((n) => key[n]));
      if (seen.has(id)) throw validation('Provided list of item keys contains duplicates');
      seen.add(id);
      writes.push({ table, key, item });
    }
  }
  for (const w of writes) write(w.table, w.key, w.item);
  return { UnprocessedItems: {} };
}
