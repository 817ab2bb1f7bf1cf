import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoStateStore } from '../../../shared/adapters/dynamo-state-store.ts';
import { createDocumentClient, createDynamoClient } from '../../../shared/aws/clients.ts';
import { FaninUnderTest } from '../../support/fanin.ts';

/**
 * A hot aggregate on AWS meets its partition's limit as throttling. DynamoDB Local never
 * throttles, so the throttling here is injected by SDK middleware on a real client talking to the
 * emulator: the first attempts of each put fail as DynamoDB would, before reaching it.
 */
describe('hot aggregate', () => {
  let fanin: FaninUnderTest;

  beforeAll(async () => {
    fanin = await FaninUnderTest.start([
      { name: 'hot', fanOut: { type: 'none' }, completion: { strategy: 'all' } },
    ]);
  });
  afterAll(() => fanin.stop());

  it('a throttled reply put backs off and is recorded in place, not failed back to SQS', async () => {
    // Prepare: a client without the SDK's own retries, whose first three PutItem calls are throttled
    const low = createDynamoClient({ maxAttempts: 1 });
    let throttled = 0;
    low.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName === 'PutItemCommand' && throttled < 3) {
          throttled += 1;
          throw Object.assign(new Error('Rate of requests exceeds the allowed throughput.'), {
            name: 'ProvisionedThroughputExceededException',
            $metadata: {},
          });
        }
        return next(args);
      },
      { step: 'initialize', name: 'injectThrottling' },
    );
    const store = new DynamoStateStore({
      client: createDocumentClient(low),
      tableName: fanin.topology.tableName,
    });
    const reply = { replyId: 'r1', payload: '{}', receivedAt: 1, expiresAt: 2_000_000_000 };

    // Act
    const first = await store.putReply('hot-1', reply);
    const again = await store.putReply('hot-1', reply);

    // Assess (mutant killed: a throttled put rethrown at once)
    expect(throttled).toBe(3);
    expect(first).toBe('recorded');
    expect(again).toBe('duplicate');
  });
});
