import { SendMessageBatchCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import type { SQSEvent } from 'aws-lambda';
import { afterAll, describe, expect, it } from 'vitest';
import { QueuePoller } from '../../../local/poller.ts';
import { aws } from '../../support/clients.ts';
import { uniquePrefix } from '../../support/names.ts';
import { createTestResources } from '../../support/resources.ts';
import { eventually } from '../../support/runtime.ts';

/**
 * The local poller's batching window (Lambda's MaximumBatchingWindowInSeconds): once a record is
 * in, it keeps gathering until the batch is full or the window has passed.
 */
const resources = createTestResources(uniquePrefix(import.meta.url));
afterAll(() => resources.cleanup());

function recorder() {
  const batches: number[] = [];
  const handler = async (event: SQSEvent) => {
    batches.push(event.Records.length);
    return { batchItemFailures: [] };
  };
  return { batches, handler };
}

describe('QueuePoller batching window', () => {
  it('gathers records that arrive within the window into one invocation', async () => {
    // Prepare
    const queue = await resources.queue();
    const { batches, handler } = recorder();
    const poller = new QueuePoller({
      sqs: aws.sqs,
      queueUrl: queue.url,
      handler,
      maxBatchingWindowSeconds: 20,
      batchSize: 5,
    });
    await aws.sqs.send(new SendMessageCommand({ QueueUrl: queue.url, MessageBody: '1' }));

    // Act: the first receive takes one record; four more arrive while the window is open
    const polled = poller.pollOnce(5);
    await new Promise((resolve) => setTimeout(resolve, 300));
    await aws.sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: queue.url,
        Entries: ['2', '3', '4', '5'].map((body) => ({ Id: body, MessageBody: body })),
      }),
    );
    const count = await polled;

    // Assess: one invocation of five, handed over as soon as the batch was full (not after 20 s)
    expect(count).toBe(5);
    expect(batches).toEqual([5]);
  });

  it('gathers more than ten records (several receives) and deletes them all', async () => {
    // Prepare
    const queue = await resources.queue();
    const { batches, handler } = recorder();
    const poller = new QueuePoller({
      sqs: aws.sqs,
      queueUrl: queue.url,
      handler,
      maxBatchingWindowSeconds: 1,
      batchSize: 25,
    });
    for (let i = 0; i < 25; i += 10) {
      await aws.sqs.send(
        new SendMessageBatchCommand({
          QueueUrl: queue.url,
          Entries: Array.from({ length: Math.min(10, 25 - i) }, (_, j) => ({
            Id: String(j),
            MessageBody: String(i + j),
          })),
        }),
      );
    }

    // Act
    let total = 0;
    await eventually(async () => {
      total += await poller.pollOnce(1);
      return total === 25;
    }, 'all 25 records consumed');
    const again = await poller.pollOnce(0);

    // Assess
    expect(batches.reduce((a, b) => a + b, 0)).toBe(25);
    expect(Math.max(...batches)).toBeGreaterThan(10);
    expect(again).toBe(0);
  });
});
