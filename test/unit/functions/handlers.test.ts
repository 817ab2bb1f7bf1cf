import { ReceiveMessageCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import type { SQSEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import {
  instrumented,
  isReplyDrainEvent,
  makeDistributorHandler,
  makeFanOutHandler,
  makeReplyDrainHandler,
  makeReplyHandler,
  makeSweeperHandler,
} from '../../../functions/handlers.ts';
import type { Observability } from '../../../shared/app.ts';
import type { Distributor } from '../../../shared/partitions/distributor.ts';
import type { Metrics } from '../../../shared/ports.ts';
import { localWorld } from '../local/world.ts';

/**
 * The Lambda handlers' wiring over a deployment in memory (the topology provisioned on the
 * simulation's models, the production use cases): what each handler does with an SQS event's
 * records, and the batch item failures it reports, one per failed record; on a FIFO partition every
 * record after a failure fails too, so a message group keeps its order. The drain handler names its
 * partition by index only. The integration and guarantee tests run the same handlers on the
 * emulators; this pins the per-record accounting directly.
 */

let sequence = 0;

/** An SQS record of `body` as Lambda's event source hands it to a handler. */
function record(body: string, attributes: Record<string, string> = {}, queue = 'w-ingress') {
  sequence += 1;
  return {
    messageId: `m-${sequence}`,
    receiptHandle: `h-${sequence}`,
    body,
    attributes: {
      ApproximateReceiveCount: '1',
      SentTimestamp: String(Date.now()),
      SenderId: 'producer',
      ApproximateFirstReceiveTimestamp: String(Date.now()),
    },
    messageAttributes: Object.fromEntries(
      Object.entries(attributes).map(([k, v]) => [k, { dataType: 'String', stringValue: v }]),
    ),
    md5OfBody: '',
    eventSource: 'aws:sqs',
    eventSourceARN: `arn:aws:sqs:us-east-1:000000000000:${queue}`,
    awsRegion: 'us-east-1',
  } as SQSEvent['Records'][number];
}

function request(aggregateId: string, definition = 'orders') {
  return record(JSON.stringify({}), {
    'fanin-definition': definition,
    'fanin-aggregate-id': aggregateId,
    'fanin-request-id': `r-${aggregateId}`,
  });
}

/** Fails every state-table write that names `aggregateId`: a throttled table, for that one only. */
const failingFor =
  (aggregateId: string) => (service: string, name: string, input: unknown, call: () => unknown) => {
    if (service === 'dynamodb' && name !== 'QueryCommand' && JSON.stringify(input).includes(aggregateId)) {
      throw Object.assign(new Error('throttled'), { name: 'ProvisionedThroughputExceededException' });
    }
    return call();
  };

describe('the fan-out handler', () => {
  it('opens each request of the batch and reports no failure', async () => {
    const world = await localWorld();

    const response = await makeFanOutHandler(world.context)({ Records: [request('f-1'), request('f-2')] });

    expect(response.batchItemFailures).toEqual([]);
    for (const id of ['f-1', 'f-2']) expect((await world.context().store.getHeader(id))?.status).toBe('open');
  });

  it('reports exactly the record whose handling failed, and handles the others', async () => {
    const world = await localWorld({}, failingFor('f-bad'));
    const bad = request('f-bad');

    const response = await makeFanOutHandler(world.context)({ Records: [request('f-ok'), bad] });

    expect(response.batchItemFailures).toEqual([{ itemIdentifier: bad.messageId }]);
    expect((await world.context().store.getHeader('f-ok'))?.status).toBe('open');
  });

  it('refuses a record that is not JSON to the error output instead of failing it', async () => {
    const world = await localWorld();

    const response = await makeFanOutHandler(world.context)({
      Records: [record('{ not json', { 'fanin-definition': 'orders' })],
    });

    expect(response.batchItemFailures).toEqual([]);
    const { Messages = [] } = await world.clients.sqs.send(
      new ReceiveMessageCommand({ QueueUrl: world.provisioned.queueUrls.error, MaxNumberOfMessages: 10 }),
    );
    expect(Messages.map((m) => JSON.parse(m.Body ?? '{}').type)).toEqual(['fanin.error']);
  });
});

describe('the reply handler', () => {
  async function openOrders(world: Awaited<ReturnType<typeof localWorld>>, ...ids: string[]) {
    await makeFanOutHandler(world.context)({ Records: ids.map((id) => request(id)) });
  }

  function reply(aggregateId: string, replyId: string, queue: string) {
    return record(
      JSON.stringify({ ok: true }),
      { 'fanin-aggregate-id': aggregateId, 'fanin-reply-id': replyId, 'fanin-definition': 'orders' },
      queue,
    );
  }

  it('records every reply of the batch and reports no failure', async () => {
    const world = await localWorld();
    await openOrders(world, 'r-1');

    const response = await makeReplyHandler(world.context)({
      Records: [reply('r-1', '0', 'w-reply-0'), reply('r-1', '1', 'w-reply-0')],
    });

    expect(response.batchItemFailures).toEqual([]);
    const snapshot = await world.context().store.readAggregate('r-1');
    expect(snapshot.replies.map((r) => r.replyId).sort()).toEqual(['0', '1']);
  });

  it('on a standard partition reports only the failed records', async () => {
    const world = await localWorld({}, failingFor('r-bad'));
    await openOrders(world, 'r-ok');
    const failed = reply('r-bad', '0', 'w-reply-0');
    const after = reply('r-ok', '0', 'w-reply-0');

    const response = await makeReplyHandler(world.context)({ Records: [failed, after] });

    expect(response.batchItemFailures).toEqual([{ itemIdentifier: failed.messageId }]);
  });

  it('on a FIFO partition fails every record after the first failure, keeping the order of a group', async () => {
    const world = await localWorld({ fifoReplies: true }, failingFor('r-bad'));
    await openOrders(world, 'r-ok');
    const before = reply('r-ok', '0', 'w-reply-0.fifo');
    const failed = reply('r-bad', '0', 'w-reply-0.fifo');
    const after = reply('r-ok', '1', 'w-reply-0.fifo');

    const response = await makeReplyHandler(world.context)({ Records: [before, failed, after] });

    expect(response.batchItemFailures).toEqual([
      { itemIdentifier: failed.messageId },
      { itemIdentifier: after.messageId },
    ]);
  });
});

describe('the reply drain handler', () => {
  it('drains the partition its event names by index, through the reply use case', async () => {
    const world = await localWorld({ replyDrainIntervalSeconds: 60 });
    await makeFanOutHandler(world.context)({ Records: [request('d-1')] });
    await world.clients.sqs.send(
      new SendMessageCommand({
        QueueUrl: world.provisioned.replyQueueUrls[1],
        MessageBody: '{}',
        MessageAttributes: {
          'fanin-aggregate-id': { DataType: 'String', StringValue: 'd-1' },
          'fanin-reply-id': { DataType: 'String', StringValue: '0' },
        },
      }),
    );
    const drain = makeReplyDrainHandler(world.context, () => ({
      sqs: world.clients.sqs,
      replyQueueUrls: world.provisioned.replyQueueUrls,
    }));

    const report = await drain({ drain: { partition: 1, batchSize: 10 } });

    expect(report).toMatchObject({ partition: 1, received: 1, failed: 0 });
    expect((await world.context().store.readAggregate('d-1')).replies).toHaveLength(1);
  });

  it.each([
    [
      { partition: 2, batchSize: 10 },
      'drain: partition must be the index of one of the 2 reply partitions (given 2)',
    ],
    [
      { partition: '0', batchSize: 10 },
      'drain: partition must be the index of one of the 2 reply partitions (given "0")',
    ],
    [{ partition: 0, batchSize: 0 }, 'drain: batchSize must be an integer from 1 to 10000 (given 0)'],
    [
      { partition: 0, batchSize: 10_001 },
      'drain: batchSize must be an integer from 1 to 10000 (given 10001)',
    ],
  ])('refuses the event %o', async (drainOf, message) => {
    const world = await localWorld();
    const drain = makeReplyDrainHandler(world.context, () => ({
      sqs: world.clients.sqs,
      replyQueueUrls: world.provisioned.replyQueueUrls,
    }));

    await expect(drain({ drain: drainOf as never })).rejects.toThrow(message);
  });

  it('tells a drain schedule event from an event source batch', () => {
    expect(isReplyDrainEvent({ drain: { partition: 0, batchSize: 1 } })).toBe(true);
    expect(isReplyDrainEvent({ Records: [] })).toBe(false);
    expect(isReplyDrainEvent({ drain: {}, Records: [] })).toBe(false);
    expect(isReplyDrainEvent(null)).toBe(false);
  });
});

describe('the scheduled handlers', () => {
  function counting(): Metrics & { counted: string[] } {
    const counted: string[] = [];
    return { counted, count: (name: string) => void counted.push(name) } as unknown as Metrics & {
      counted: string[];
    };
  }

  it('the sweeper says how many due items it examined', async () => {
    const world = await localWorld();
    expect(await makeSweeperHandler(world.context)()).toEqual({ examined: 0 });
  });

  it('a failed sweep is counted and rethrown', async () => {
    let down = false;
    const world = await localWorld({}, (service, _name, _input, call) => {
      if (down && service === 'dynamodb') throw new Error('table unavailable');
      return call();
    });
    down = true;
    const metrics = counting();
    const sweeper = makeSweeperHandler(() => ({ ...world.context(), metrics }));

    await expect(sweeper()).rejects.toThrow('table unavailable');
    expect(metrics.counted).toEqual(['SweepCyclesFailed']);
  });

  it('a failed distributor cycle is counted and rethrown; a good one returns its report', async () => {
    const metrics = counting();
    const failing = { cycle: async () => Promise.reject(new Error('no')) } as unknown as Distributor;
    const working = { cycle: async () => ({ moved: 3 }) } as unknown as Distributor;

    await expect(
      makeDistributorHandler(
        () => failing,
        () => metrics,
      )(),
    ).rejects.toThrow('no');
    expect(metrics.counted).toEqual(['DistributorCyclesFailed']);
    expect(await makeDistributorHandler(() => working)()).toEqual({ moved: 3 });
  });
});

describe('instrumented', () => {
  it('flushes the metrics once when the handler ends, whether it succeeded or threw', async () => {
    let flushed = 0;
    const observability = () =>
      ({
        metrics: {
          flush: () => {
            flushed += 1;
          },
        },
      }) as unknown as Observability;

    expect(await instrumented('ok', async (event: number) => event + 1, observability)(1)).toBe(2);
    await expect(
      instrumented('bad', async () => Promise.reject(new Error('boom')), observability)(undefined),
    ).rejects.toThrow('boom');
    expect(flushed).toBe(2);
  });
});

/** The Lambda entry points' own decisions, before any use case runs. */
describe('the reply function’s entry point', () => {
  it('tells a drain schedule’s event from an event source’s batch', () => {
    expect(isReplyDrainEvent({ drain: { partition: 0, batchSize: 1000 } })).toBe(true);
    // An event source's batch, even one that also carries a `drain` field, is a batch of records
    expect(isReplyDrainEvent({ Records: [] })).toBe(false);
    expect(isReplyDrainEvent({ Records: [], drain: { partition: 0, batchSize: 1 } })).toBe(false);
    expect(isReplyDrainEvent(null)).toBe(false);
    expect(isReplyDrainEvent('drain')).toBe(false);
  });
});
