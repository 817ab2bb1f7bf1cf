import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { RuntimeParameters } from '../engine/definition.ts';
import { parametersKey, SortKey } from './state-keys.ts';
import type { StateTable } from './state-table.ts';

/** A definition's runtime parameters (the control bus sets them): one item under `D#<definition>`. */

export async function getParameters(table: StateTable, definition: string): Promise<RuntimeParameters> {
  const { Item } = await table.client.send(
    new GetCommand({
      TableName: table.tableName,
      Key: { pk: parametersKey(definition), sk: SortKey.PARAMETERS },
      ConsistentRead: true,
    }),
  );
  return (Item?.parameters as RuntimeParameters | undefined) ?? {};
}

export async function setParameters(
  table: StateTable,
  definition: string,
  parameters: RuntimeParameters,
): Promise<void> {
  await table.client.send(
    new PutCommand({
      TableName: table.tableName,
      Item: { pk: parametersKey(definition), sk: SortKey.PARAMETERS, parameters },
    }),
  );
}
