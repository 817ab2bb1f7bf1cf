/**
 * The calibration: probe writes whose units the capacity model predicts, compared with what the emulator
 * reports. The emulator is stood in for by a client that answers with units worked out by hand here.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import { calibrateCapacityModel } from '../../../../bench/measure/calibrate.ts';
import type { TableShape } from '../../../../bench/measure/capacity.ts';

const TABLE: TableShape = {
  name: 'state',
  partitionKey: 'pk',
  sortKey: 'sk',
  indexes: [
    { name: 'g1', partitionKey: 'g1pk', sortKey: 'g1sk', projection: 'KEYS_ONLY' },
    { name: 'g2', partitionKey: 'g2pk', sortKey: 'g2sk', projection: 'KEYS_ONLY' },
  ],
};

/**
 * DynamoDB's units for each probe, by payload length. A plain put is its payload plus 24 bytes or so (keys,
 * names, a number), so 1,000 B is still one unit and 1,100 B two; the indexed puts are in both indexes, a
 * keys-only entry of some 30 bytes each.
 */
const PUT_UNITS: Record<number, { table: number; indexes: number }> = {
  10: { table: 1, indexes: 0 },
  900: { table: 1, indexes: 0 },
  990: { table: 1, indexes: 0 },
  1000: { table: 1, indexes: 0 },
  1100: { table: 2, indexes: 0 },
  2500: { table: 3, indexes: 0 },
  4000: { table: 4, indexes: 0 },
  9000: { table: 9, indexes: 0 },
  200: { table: 1, indexes: 2 },
  1500: { table: 2, indexes: 2 },
};

/** A stand-in emulator: puts by `PUT_UNITS` (one overridden), transactions by `transactionUnits`. */
function emulator(options: {
  readonly wrongPut?: number;
  readonly transactionUnits: (items: number) => number;
}) {
  return {
    send: async (command: { input: Record<string, unknown> }) => {
      const input = command.input as {
        Item?: { payload: { S: string } };
        TransactItems?: { Put: { Item: { payload: { S: string } } } }[];
      };
      if (input.TransactItems) {
        return {
          ConsumedCapacity: [{ CapacityUnits: options.transactionUnits(input.TransactItems.length) }],
        };
      }
      const size = input.Item?.payload.S.length ?? 0;
      const units = PUT_UNITS[size] ?? { table: 0, indexes: 0 };
      const table = size === options.wrongPut ? units.table + 1 : units.table;
      const gsi = units.indexes > 0 ? { g1: { CapacityUnits: 1 }, g2: { CapacityUnits: 1 } } : undefined;
      return { ConsumedCapacity: { Table: { CapacityUnits: table }, GlobalSecondaryIndexes: gsi } };
    },
  } as unknown as DynamoDBClient;
}

// Distinct: 0, 2 and 4 KB puts (1, 2 and 4 units, doubled): 14. Equal: ten 3 KB puts (3 units, doubled): 60.
const dynamoDbTransactions = (items: number) => (items === 3 ? 14 : 60);

describe('the capacity calibration', () => {
  it('finds every probe agreeing with an emulator that applies DynamoDB’s rules', async () => {
    const calibration = await calibrateCapacityModel(
      emulator({ transactionUnits: dynamoDbTransactions }),
      TABLE,
    );
    expect(calibration).toEqual({
      probes: 10,
      agreeing: 10,
      mismatches: [],
      distinctTransaction: { model: 14, reported: 14 },
      equalTransaction: { model: 60, reported: 60 },
    });
  });

  it('names a probe the emulator counts otherwise, with both figures', async () => {
    const calibration = await calibrateCapacityModel(
      emulator({ wrongPut: 1_100, transactionUnits: dynamoDbTransactions }),
      TABLE,
    );
    expect(calibration.agreeing).toBe(9);
    expect(calibration.mismatches).toEqual(['put 1100 B: model 2+0, emulator 3+0']);
  });

  it('reports what the emulator makes of equal transactions, and counts only distinct ones as a mismatch', async () => {
    const calibration = await calibrateCapacityModel(emulator({ transactionUnits: () => 20 }), TABLE);
    expect(calibration.equalTransaction).toEqual({ model: 60, reported: 20 });
    expect(calibration.mismatches).toEqual(['transaction of distinct sizes: model 14, emulator 20']);
    expect(calibration.agreeing).toBe(10);
  });
});
