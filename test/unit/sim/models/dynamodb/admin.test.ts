import { describe, expect, it } from 'vitest';
import {
  createTableFromInput,
  describeTable,
  updateTimeToLive,
} from '../../../../../sim/models/dynamodb/admin.ts';

/**
 * Table administration as DynamoDB's API reference documents it: CreateTable refuses an existing
 * table, a key schema without a HASH key, and a key attribute missing from AttributeDefinitions;
 * UpdateTimeToLive refuses to enable what is enabled or disable what is disabled; DescribeTable
 * reports the key schema and indexes as created. The kit and the simulation provision through
 * these; this pins the refusals.
 */

const input = {
  TableName: 't',
  AttributeDefinitions: [
    { AttributeName: 'pk', AttributeType: 'S' },
    { AttributeName: 'sk', AttributeType: 'N' },
    { AttributeName: 'g', AttributeType: 'S' },
  ],
  KeySchema: [
    { AttributeName: 'pk', KeyType: 'HASH' },
    { AttributeName: 'sk', KeyType: 'RANGE' },
  ],
  GlobalSecondaryIndexes: [
    {
      IndexName: 'byG',
      KeySchema: [{ AttributeName: 'g', KeyType: 'HASH' }],
      Projection: { ProjectionType: 'KEYS_ONLY' },
    },
  ],
};

describe('CreateTable', () => {
  it('creates the key schema and indexes it was given, as DescribeTable reports them', () => {
    const table = createTableFromInput(input, () => false, 1000);
    const described = describeTable(table);
    expect(described).toMatchObject({
      TableName: 't',
      TableStatus: 'ACTIVE',
      KeySchema: input.KeySchema,
      GlobalSecondaryIndexes: [
        {
          IndexName: 'byG',
          KeySchema: [{ AttributeName: 'g', KeyType: 'HASH' }],
          Projection: { ProjectionType: 'KEYS_ONLY' },
        },
      ],
      ItemCount: 0,
    });
    expect((described.CreationDateTime as Date).getTime()).toBe(1000);
  });

  it('refuses an existing table, a schema without a HASH key, and a key attribute not defined', () => {
    expect(() => createTableFromInput(input, () => true, 0)).toThrow(
      expect.objectContaining({ name: 'ResourceInUseException' }),
    );
    expect(() =>
      createTableFromInput(
        { ...input, KeySchema: [{ AttributeName: 'sk', KeyType: 'RANGE' }], GlobalSecondaryIndexes: [] },
        () => false,
        0,
      ),
    ).toThrow(/The first KeySchemaElement is not a HASH key type/);
    expect(() =>
      createTableFromInput(
        { ...input, AttributeDefinitions: input.AttributeDefinitions.slice(0, 2) },
        () => false,
        0,
      ),
    ).toThrow(/Some index key attributes are not defined in AttributeDefinitions/);
  });
});

describe('UpdateTimeToLive', () => {
  it('enables and disables TTL once each way', () => {
    const table = createTableFromInput(input, () => false, 0);
    updateTimeToLive(table, { TimeToLiveSpecification: { Enabled: true, AttributeName: 'exp' } });
    expect(table.ttlAttribute).toBe('exp');
    expect(() =>
      updateTimeToLive(table, { TimeToLiveSpecification: { Enabled: true, AttributeName: 'exp' } }),
    ).toThrow('TimeToLive is already enabled');
    updateTimeToLive(table, { TimeToLiveSpecification: { Enabled: false, AttributeName: 'exp' } });
    expect(table.ttlAttribute).toBeUndefined();
    expect(() =>
      updateTimeToLive(table, { TimeToLiveSpecification: { Enabled: false, AttributeName: 'exp' } }),
    ).toThrow('TimeToLive is already disabled');
  });
});
