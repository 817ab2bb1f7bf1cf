import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { queryAll, unlessConditionFails } from '../../../../shared/adapters/state-table.ts';
import { awsError, world } from './support.ts';

/**
 * The state table's two helpers: a query read page by page to its end or its limit, and a
 * conditional write whose failed condition is an answer, any other error thrown. The module's own
 * test over the DynamoDB model (its 1 MB page makes a large partition several pages).
 */

async function fill(w: ReturnType<typeof world>, count: number, bytes: number) {
  for (let i = 0; i < count; i += 1)
    await w.clients.dynamo.send(
      new PutCommand({
        TableName: w.table.tableName,
        Item: { pk: 'A#a-1', sk: `R#${String(i).padStart(4, '0')}`, body: 'x'.repeat(bytes) },
      }),
    );
}

const query = (w: ReturnType<typeof world>) => ({
  TableName: w.table.tableName,
  KeyConditionExpression: 'pk = :pk',
  ExpressionAttributeValues: { ':pk': 'A#a-1' },
});

describe('queryAll', () => {
  it('reads every page of a partition larger than one page', async () => {
    // Prepare: 40 items of 100 KB, 4 MB: more than one 1 MB page
    const w = world();
    await fill(w, 40, 100_000);

    // Act
    const items = await queryAll(w.table, query(w));

    // Assess
    expect(items).toHaveLength(40);
    expect(w.calls.filter((c) => c.command === 'QueryCommand').length).toBeGreaterThan(1);
  });

  it('stops at its limit, in key order', async () => {
    // Prepare
    const w = world();
    await fill(w, 30, 10);

    // Act
    const items = await queryAll(w.table, query(w), 7);

    // Assess
    expect(items.map((i) => i.sk)).toEqual(
      Array.from({ length: 7 }, (_, i) => `R#${String(i).padStart(4, '0')}`),
    );
  });
});

describe('unlessConditionFails', () => {
  it('answers undefined for a failed condition, the result otherwise, and throws any other error', async () => {
    // Prepare
    const failed = new ConditionalCheckFailedException({
      message: 'The conditional request failed',
      $metadata: {},
    });

    // Act / Assess
    expect(await unlessConditionFails(Promise.reject(failed))).toBeUndefined();
    expect(await unlessConditionFails(Promise.resolve(5))).toBe(5);
    await expect(unlessConditionFails(Promise.reject(awsError('ConditionalCheckFailed')))).rejects.toThrow();
  });
});
