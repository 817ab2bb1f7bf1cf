import { DeleteCommand, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { HeldClaim, HeldReply } from '../ports.ts';
import { heldItem, toHeld } from './state-items.ts';
import { aggregateKey, heldKey, SortKey } from './state-keys.ts';
import { queryAll, type StateTable, unlessConditionFails } from './state-table.ts';

/**
 * Held replies: a reply whose aggregate did not exist yet, kept under that aggregate's key
 * (`U#<reply>`) and in the `due` index at its unknown timeout, until one of its two exclusive
 * fates is claimed (counted into its aggregate, or routed to the unknown output) and it is deleted.
 */

export async function holdReply(table: StateTable, held: HeldReply): Promise<boolean> {
  const written = await unlessConditionFails(
    table.client.send(
      new PutCommand({
        TableName: table.tableName,
        Item: heldItem(held),
        ConditionExpression: 'attribute_not_exists(sk)',
      }),
    ),
  );
  return written !== undefined;
}

export async function getHeld(
  table: StateTable,
  aggregateId: string,
  replyId: string,
): Promise<HeldReply | undefined> {
  const { Item } = await table.client.send(
    new GetCommand({
      TableName: table.tableName,
      Key: { pk: aggregateKey(aggregateId), sk: heldKey(replyId) },
      ConsistentRead: true,
    }),
  );
  return Item ? toHeld(aggregateId, Item) : undefined;
}

export async function listHeld(table: StateTable, aggregateId: string): Promise<HeldReply[]> {
  const items = await queryAll(table, {
    TableName: table.tableName,
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :u)',
    ExpressionAttributeValues: { ':pk': aggregateKey(aggregateId), ':u': SortKey.HELD },
    ConsistentRead: true,
  });
  return items.map((item) => toHeld(aggregateId, item));
}

export async function claimHeld(
  table: StateTable,
  aggregateId: string,
  replyId: string,
  claim: HeldClaim,
): Promise<boolean> {
  const written = await unlessConditionFails(
    table.client.send(
      new UpdateCommand({
        TableName: table.tableName,
        Key: { pk: aggregateKey(aggregateId), sk: heldKey(replyId) },
        UpdateExpression: 'SET claimed = :claim',
        ConditionExpression: 'attribute_exists(sk) AND (attribute_not_exists(claimed) OR claimed = :claim)',
        ExpressionAttributeValues: { ':claim': claim },
      }),
    ),
  );
  return written !== undefined;
}

export async function deleteHeld(table: StateTable, aggregateId: string, replyId: string): Promise<void> {
  await table.client.send(
    new DeleteCommand({
      TableName: table.tableName,
      Key: { pk: aggregateKey(aggregateId), sk: heldKey(replyId) },
    }),
  );
}
