import {
  type DynamoDBClient,
  PutItemCommand,
  TransactWriteItemsCommand,
  type TransactWriteItemsCommandInput,
} from '@aws-sdk/client-dynamodb';
import { indexEntrySize, itemSize, type TableShape, type WireItem, writeUnits } from './capacity.ts';

/** How DynamoDB's rules, as `capacity.ts` applies them, compare with what the emulator reports. */
export type Calibration = Awaited<ReturnType<typeof calibrateCapacityModel>>;

/** Checks the capacity model against the emulator on writes it counts right. */
export async function calibrateCapacityModel(client: DynamoDBClient, table: TableShape) {
  const puts: { label: string; item: WireItem }[] = [10, 900, 990, 1_000, 1_100, 2_500, 4_000, 9_000].map(
    (size, i) => ({
      label: `put ${size} B`,
      item: {
        pk: { S: 'CAL#put' },
        sk: { S: String(i) },
        payload: { S: 'x'.repeat(size) },
        n: { N: String(12345 * (i + 1)) },
      },
    }),
  );
  // Items in the sparse indexes (both keys only).
  for (const [i, size] of [200, 1_500].entries()) {
    const item: WireItem = { pk: { S: 'CAL#index' }, sk: { S: String(i) }, payload: { S: 'y'.repeat(size) } };
    for (const index of table.indexes.slice(0, 2)) {
      item[index.partitionKey] = { S: `cal-${index.name}` };
      item[index.sortKey] = { N: String(1_000 + i) };
    }
    puts.push({ label: `indexed put ${size} B`, item });
  }
  const mismatches: string[] = [];
  for (const { label, item } of puts) {
    const mismatch = await probe(client, table, label, item);
    if (mismatch) mismatches.push(mismatch);
  }
  const agreeing = puts.length - mismatches.length;
  const distinctTransaction = await transact(client, table, [0, 2, 4], 'tx-distinct');
  const equalTransaction = await transact(
    client,
    table,
    Array.from({ length: 10 }, () => 3),
    'tx-equal',
  );
  if (distinctTransaction.model !== distinctTransaction.reported) {
    mismatches.push(
      `transaction of distinct sizes: model ${distinctTransaction.model}, emulator ${distinctTransaction.reported}`,
    );
  }
  return {
    /** Single `PutItem` probes whose table and index units were compared, and those that agreed on both. */
    probes: puts.length,
    agreeing,
    mismatches,
    /** A transaction whose actions all cost different amounts: the emulator then counts it right. */
    distinctTransaction,
    /** Ten equal 3 KB puts in one transaction: what the emulator reports against DynamoDB's rules. */
    equalTransaction,
  };
}

/** One put, its units as the emulator reports them against the model's: a mismatch, or nothing. */
async function probe(
  client: DynamoDBClient,
  table: TableShape,
  label: string,
  item: WireItem,
): Promise<string | undefined> {
  const { ConsumedCapacity } = await client.send(
    new PutItemCommand({ TableName: table.name, Item: item, ReturnConsumedCapacity: 'INDEXES' }),
  );
  const reportedTable = ConsumedCapacity?.Table?.CapacityUnits ?? ConsumedCapacity?.CapacityUnits ?? 0;
  const reportedIndex = Object.values(ConsumedCapacity?.GlobalSecondaryIndexes ?? {}).reduce(
    (sum, c) => sum + (c.CapacityUnits ?? 0),
    0,
  );
  const modelTable = writeUnits(itemSize(item));
  const modelIndex = table.indexes.reduce((sum, index) => {
    const entry = indexEntrySize(item, table, index);
    return sum + (entry === undefined ? 0 : writeUnits(entry));
  }, 0);
  return modelTable === reportedTable && modelIndex === reportedIndex
    ? undefined
    : `${label}: model ${modelTable}+${modelIndex}, emulator ${reportedTable}+${reportedIndex}`;
}

/** A transaction of puts of `sizesKb`: the units the model gives it and those the emulator reports. */
async function transact(
  client: DynamoDBClient,
  table: TableShape,
  sizesKb: readonly number[],
  prefix: string,
): Promise<{ model: number; reported: number }> {
  const items: WireItem[] = sizesKb.map((kb, i) => ({
    pk: { S: `CAL#${prefix}` },
    sk: { S: String(i) },
    payload: { S: 'z'.repeat(kb * 1_000) },
  }));
  const input: TransactWriteItemsCommandInput = {
    TransactItems: items.map((Item) => ({ Put: { TableName: table.name, Item } })),
    ReturnConsumedCapacity: 'TOTAL',
  };
  const { ConsumedCapacity } = await client.send(new TransactWriteItemsCommand(input));
  const reported = (ConsumedCapacity ?? []).reduce((sum, c) => sum + (c.CapacityUnits ?? 0), 0);
  const model = items.reduce((sum, item) => sum + 2 * writeUnits(itemSize(item)), 0);
  return { model, reported };
}
