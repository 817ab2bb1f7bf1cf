import {
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
} from '@aws-sdk/client-sqs';
import type { SQSEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { QueuePoller, queueArnOf } from '../../../local/poller.ts';
import { provisionQueue } from '../../../local/provision.ts';
import { clientsOver, DynamoDbModel, SqsModel } from '../../../sim/models/index.ts';

/**
 * The local stand-in for Lambda's SQS event source, over the simulation's SQS model: records shaped
 * as Lambda's (attributes, message attributes, the queue's ARN), partial batch failures
 * (`batchItemFailures`) kept and the rest deleted, a throwing handler failing the whole batch, a
 * failed record back after `failedVisibilitySeconds` and in the DLQ after maxReceiveCount, batches
 * gathered above ten within the batching window. The runtime's integration tests run it against
 * the emulators.
 */

async function queue(maxReceiveCount = 3) {
  const clock = () => Date.now();
  const sqs = clientsOver(
    {
      sqs: new SqsModel({ clock, random: Math.random, duplicateProbability: 0, shortReceiveProbability: 0 }),
      dynamodb: new DynamoDbModel({ clock, random: Math.random }),
      // Each call answers on a later turn of the event loop, as a call over the network does: a
      // poller's loop then lets timers run between its receives.
    },
    (_service, _name, _input, call) => new Promise((resolve) => setImmediate(resolve)).then(call),
  ).sqs;
  const { url, dlqUrl } = await provisionQueue(sqs, {
    name: 'q',
    dlqName: 'q-dlq',
    fifo: false,
    visibilityTimeoutSeconds: 30,
    maxReceiveCount,
  } as Parameters<typeof provisionQueue>[1]);
  const put = async (...bodies: string[]) => {
    for (let i = 0; i < bodies.length; i += 10)
      await sqs.send(
        new SendMessageBatchCommand({
          QueueUrl: url,
          Entries: bodies.slice(i, i + 10).map((MessageBody, j) => ({
            Id: String(j),
            MessageBody,
            MessageAttributes: {
              'fanin-aggregate-id': { DataType: 'String', StringValue: `a-${MessageBody}` },
            },
          })),
        }),
      );
  };
  const depth = async (queueUrl = url) => {
    const { Attributes = {} } = await sqs.send(
      new GetQueueAttributesCommand({
        QueueUrl: queueUrl,
        AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
      }),
    );
    return (
      Number(Attributes.ApproximateNumberOfMessages) +
      Number(Attributes.ApproximateNumberOfMessagesNotVisible)
    );
  };
  return { sqs, url, dlqUrl, put, depth };
}

describe('QueuePoller', () => {
  it('hands the handler records shaped as Lambda gives them, and deletes what it handled', async () => {
    const { sqs, url, put, depth } = await queue();
    await put('1');
    const events: SQSEvent[] = [];
    const poller = new QueuePoller({
      sqs,
      queueUrl: url,
      handler: async (e) => {
        events.push(e);
        return undefined;
      },
      region: 'eu-west-1',
    });

    expect(await poller.pollOnce()).toBe(1);

    const [record] = events[0]?.Records ?? [];
    expect(record).toMatchObject({
      body: '1',
      eventSource: 'aws:sqs',
      awsRegion: 'eu-west-1',
      eventSourceARN: 'arn:aws:sqs:eu-west-1:000000000000:q',
      attributes: { ApproximateReceiveCount: '1' },
      messageAttributes: { 'fanin-aggregate-id': { dataType: 'String', stringValue: 'a-1' } },
    });
    expect(record?.messageId).toEqual(expect.any(String));
    expect(await depth()).toBe(0);
    expect(poller.stats).toEqual({ invocations: 1, records: 1, failures: 0, errors: 0 });
  });

  it('keeps the records the handler reports failed and deletes the others', async () => {
    const { sqs, url, put, depth } = await queue();
    await put('ok', 'bad');
    const poller = new QueuePoller({
      sqs,
      queueUrl: url,
      handler: async (e) => ({
        batchItemFailures: e.Records.filter((r) => r.body === 'bad').map((r) => ({
          itemIdentifier: r.messageId,
        })),
      }),
      failedVisibilitySeconds: 0,
    });

    await poller.pollOnce();

    expect(await depth()).toBe(1);
    const { Messages = [] } = await sqs.send(new ReceiveMessageCommand({ QueueUrl: url }));
    expect(Messages.map((m) => m.Body)).toEqual(['bad']);
    expect(poller.stats.failures).toBe(1);
  });

  it('fails the whole batch when the handler throws; after maxReceiveCount the queue moves it to its DLQ', async () => {
    const { sqs, url, dlqUrl, put, depth } = await queue(2);
    await put('x', 'y');
    const poller = new QueuePoller({
      sqs,
      queueUrl: url,
      handler: async () => {
        throw new Error('boom');
      },
      failedVisibilitySeconds: 0,
    });

    await poller.pollOnce();
    expect(await depth()).toBe(2);
    await poller.pollOnce();
    await poller.pollOnce();

    expect(await depth()).toBe(0);
    expect(await depth(dlqUrl)).toBe(2);
    expect(poller.stats.failures).toBe(4);
  });

  it('gathers more than ten records into one invocation within the batching window', async () => {
    const { sqs, url, put } = await queue();
    await put(...Array.from({ length: 25 }, (_, i) => String(i)));
    const sizes: number[] = [];
    const poller = new QueuePoller({
      sqs,
      queueUrl: url,
      handler: async (e) => {
        sizes.push(e.Records.length);
        return undefined;
      },
      batchSize: 20,
      maxBatchingWindowSeconds: 1,
    });

    await poller.pollOnce();
    await poller.pollOnce();

    expect(sizes).toEqual([20, 5]);
  });

  it('polls in the background once started, until stopped', async () => {
    const { sqs, url, depth } = await queue();
    const handled: string[] = [];
    const poller = new QueuePoller({
      sqs,
      queueUrl: url,
      handler: async (e) => {
        handled.push(...e.Records.map((r) => r.body));
        return undefined;
      },
      waitTimeSeconds: 0,
    });
    poller.start();
    await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'later' }));
    for (let i = 0; i < 50 && handled.length === 0; i += 1) await new Promise((r) => setTimeout(r, 20));
    await poller.stop();

    expect(handled).toEqual(['later']);
    expect(await depth()).toBe(0);
  });
});

describe('queueArnOf', () => {
  it("is the queue's ARN from its URL", () => {
    expect(queueArnOf('http://127.0.0.1:4566/123456789012/fanin-ingress', 'eu-west-1')).toBe(
      'arn:aws:sqs:eu-west-1:123456789012:fanin-ingress',
    );
  });
});
