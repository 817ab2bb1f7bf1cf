/**
 * The table operations of the DynamoDB model, as provisioning sends them through the low-level
 * client: CreateTable (keys, attribute definitions, GSIs with their projections), DescribeTable
 * (always ACTIVE: the model has no creation delay), UpdateTimeToLive.
 */
import { ResourceInUseException } from '@aws-sdk/client-dynamodb';
import { sdkError, validation } from '../errors.ts';
import type { KeySchema } from './size.ts';
import { type IndexDef, Table } from './table.ts';

type Request = Record<string, unknown>;

/** A new table from a CreateTable input. */
export function createTableFromInput(input: Request, exists: (name: string) => boolean, now: number): Table {
  const name = String(input.TableName);
  if (exists(name)) throw sdkError(ResourceInUseException, `Table already exists: ${name}`);
  const definitions = (input.AttributeDefinitions ?? []) as {
    AttributeName: string;
    AttributeType: 'S' | 'N' | 'B';
  }[];
  const typeOfAttribute = (attribute: string) => {
    const definition = definitions.find((d) => d.AttributeName === attribute);
    if (!definition) {
      throw validation(
        'One or more parameter values were invalid: Some index key attributes are not defined in AttributeDefinitions',
      );
    }
    return definition.AttributeType;
  };
  const schemaOf = (keys: { AttributeName: string; KeyType: string }[]): KeySchema => {
    const hash = keys.find((k) => k.KeyType === 'HASH');
    const range = keys.find((k) => k.KeyType === 'RANGE');
    if (!hash)
      throw validation(
        '1 validation error detected: Invalid KeySchema: The first KeySchemaElement is not a HASH key type',
      );
    return {
      partition: { name: hash.AttributeName, type: typeOfAttribute(hash.AttributeName) },
      ...(range ? { sort: { name: range.AttributeName, type: typeOfAttribute(range.AttributeName) } } : {}),
    };
  };
  const indexes = ((input.GlobalSecondaryIndexes ?? []) as Request[]).map((index) => {
    const projection = (index.Projection ?? {}) as { ProjectionType?: string; NonKeyAttributes?: string[] };
    return {
      name: String(index.IndexName),
      schema: schemaOf(index.KeySchema as never),
      projection: (projection.ProjectionType ?? 'ALL') as IndexDef['projection'],
      ...(projection.NonKeyAttributes ? { nonKeyAttributes: projection.NonKeyAttributes } : {}),
    };
  });
  return new Table(name, schemaOf(input.KeySchema as never), indexes, definitions, now);
}

/** UpdateTimeToLive on a table. */
export function updateTimeToLive(table: Table, input: Request): Request {
  const spec = (input.TimeToLiveSpecification ?? {}) as { AttributeName?: string; Enabled?: boolean };
  if (spec.Enabled && table.ttlAttribute) throw validation('TimeToLive is already enabled');
  if (!spec.Enabled && !table.ttlAttribute) throw validation('TimeToLive is already disabled');
  table.ttlAttribute = spec.Enabled ? spec.AttributeName : undefined;
  return { TimeToLiveSpecification: { ...spec } };
}

/** The TableDescription of a table. */
export function describeTable(table: Table): Request {
  const keySchema = (schema: KeySchema) => [
    { AttributeName: schema.partition.name, KeyType: 'HASH' },
    ...(schema.sort ? [{ AttributeName: schema.sort.name, KeyType: 'RANGE' }] : []),
  ];
  return {
    TableName: table.name,
    TableStatus: 'ACTIVE',
    TableArn: `arn:aws:dynamodb:us-east-1:000000000000:table/${table.name}`,
    CreationDateTime: new Date(table.createdAt),
    KeySchema: keySchema(table.schema),
    AttributeDefinitions: table.attributeDefinitions.map((d) => ({ ...d })),
    ItemCount: table.count(),
    BillingModeSummary: { BillingMode: 'PAY_PER_REQUEST' },
    ...(table.indexes.length > 0
      ? {
          GlobalSecondaryIndexes: table.indexes.map((index) => ({
            IndexName: index.name,
            KeySchema: keySchema(index.schema),
            Projection: { ProjectionType: index.projection },
            IndexStatus: 'ACTIVE',
          })),
        }
      : {}),
  };
}
