import {
  ChangeMessageVisibilityBatchCommand,
  GetQueueAttributesCommand,
  SendMessageCommand,
} from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type DrainReport,
  makeReplyDrainHandler,
  type ReplyDrainEvent,
} from '../../../functions/handlers.ts';
import { startConsumers } from '../../../local/consumers.ts';
import { QueueDrainer } from '../../../local/drainer.ts';
import { QueuePoller } from '../../../local/poller.ts';
import type { CallMatcher } from '../../support/aws-probe.ts';
import { aws } from '../../support/clients.ts';
import { FaninUnderTest } from '../../support/fanin.ts';
import { idleLongPollsAtOnce } from '../../support/long-polls.ts';

/**
 * A reply partition drained on a schedule (`replyDrainIntervalSeconds`, issue "Cost at the
 * floor"): replies sent one by one by independent responders wait on the queue, and one drain
 * takes them ten a receive and records each aggregate's as one pack. Every test reads the calls
 * the system made, the table and the publications as sent, below FIFO deduplication; a crash is a
 * failpoint on the system's own SDK clients.
 */
describe('a reply partition drained on a schedule', () => {
  let fanin: FaninUnderTest;
  let queueUrl: string;
  let drain: (
    event: ReplyDrainEvent,
    invocation?: { getRemainingTimeInMillis(): number },
  ) => Promise<DrainReport>;
  const event = (batchSize = 1000): ReplyDrainEvent => ({ drain: { partition: 0, batchSize } });

  beforeAll(async () => {
    fanin = await FaninUnderTest.start(
      [{ name: 'drained', fanOut: { type: 'none' }, completion: { strategy: 'all' } }],
      { replyPartitions: 1, replyDrainIntervalSeconds: 60 },
    );
    queueUrl = fanin.provisioned.replyQueueUrls[0] as string;
    // The reply function's drain, on the system's clients (counted and crashable by the probe).
    // Its receive that finds nothing, the one that ends a drain, comes back at once instead of
    // after its second of long polling (test/support/long-polls.ts): nothing is sent while a
    // drain runs, and what a crashed drain held is made visible again before the next.
    const sqs = idleLongPollsAtOnce(fanin.clients.sqs);
    drain = makeReplyDrainHandler(
      () => fanin.ctx,
      () => ({ sqs, replyQueueUrls: fanin.provisioned.replyQueueUrls }),
    );
  });
  afterAll(() => fanin.stop());

  /** Opens `ids` (ten replies expected each), then sends their replies one by one, round-robin. */
  const sendIndependently = async (ids: readonly string[], replies = 10) => {
    for (const aggregateId of ids)
      await fanin.sendRequest({ definition: 'drained', aggregateId, expected: replies });
    await fanin.drainIngress();
    for (let i = 0; i < replies; i += 1)
      for (const aggregateId of ids)
        await aws.sqs.send(
          new SendMessageCommand({
            QueueUrl: queueUrl,
            MessageBody: JSON.stringify({ i, from: aggregateId }),
            MessageAttributes: {
              'fanin-aggregate-id': { DataType: 'String', StringValue: aggregateId },
              'fanin-reply-id': { DataType: 'String', StringValue: String(i) },
            },
          }),
        );
  };
  const replyItems = async (aggregateId: string) =>
    (await fanin.scanState())
      .filter((i) => i.pk === `A#${aggregateId}`)
      .map((i) => String(i.sk))
      .filter((sk) => sk.startsWith('Q#') || sk.startsWith('R#'));
  const systemCallsOnReplies = (since: number, name: string) =>
    fanin.probe.callsAfter(since).filter((c) => c.system && c.name === name && c.queueRole === 'reply');
  const queueDepth = async () => {
    const { Attributes = {} } = await aws.sqs.send(
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
  /** Makes the messages a crashed drain held visible again now (their visibility timeout, run out). */
  const expireHeld = async (receiptHandles: readonly string[]) => {
    for (let i = 0; i < receiptHandles.length; i += 10)
      await aws.sqs.send(
        new ChangeMessageVisibilityBatchCommand({
          QueueUrl: queueUrl,
          Entries: receiptHandles
            .slice(i, i + 10)
            .map((ReceiptHandle, j) => ({ Id: String(j), ReceiptHandle, VisibilityTimeout: 0 })),
        }),
      );
  };
  const receivedHandles = (since: number): string[] =>
    systemCallsOnReplies(since, 'SQS.ReceiveMessage').flatMap((c) =>
      ((c.output as { Messages?: { ReceiptHandle?: string }[] } | undefined)?.Messages ?? []).map(
        (m) => m.ReceiptHandle ?? '',
      ),
    );

  it('takes thirty replies sent one by one in receives of ten, and records each aggregate’s ten as one pack', async () => {
    const ids = ['drain-a', 'drain-b', 'drain-c'];
    await sendIndependently(ids);
    const since = fanin.probe.now;

    const report = await drain(event());

    // Assess: three full receives and the empty one that ends the drain (an event source would
    // have made about one receive per reply; the fourth comes back short, with none); one batch;
    // three deletes of ten
    expect(report).toMatchObject({ batches: 1, received: 30, failed: 0, undeleted: 0, emptied: true });
    expect(systemCallsOnReplies(since, 'SQS.ReceiveMessage')).toHaveLength(4);
    expect(systemCallsOnReplies(since, 'SQS.DeleteMessageBatch')).toHaveLength(3);
    for (const aggregateId of ids) {
      expect(await replyItems(aggregateId)).toEqual(['Q#0000000000']);
      const { output } = fanin.expectExactlyOneTerminalOutput(aggregateId);
      expect(output).toMatchObject({ counts: { received: 10 } });
    }
    expect(await queueDepth()).toBe(0);
  });

  it('takes the backlog’s last few in a short receive and ends at the one that finds nothing', async () => {
    // Prepare: fifteen replies wait (a receive of ten, then one of five)
    await sendIndependently(['drain-short'], 15);
    const since = fanin.probe.now;

    // Act
    const report = await drain(event());

    // Assess: the short receive of five, replies sent before the drain began, is its backlog, not
    // the end of it; the empty one after it ends the drain, the one receive a drain adds to what
    // its backlog takes (mutant killed: a drain ends at the first receive that comes back short; a
    // drain that stops at a short receive of replies sent after it began, the stream, is
    // reply-drain-backlog.test.ts)
    expect(report).toMatchObject({ batches: 1, received: 15, receives: 3, emptied: true });
    expect(systemCallsOnReplies(since, 'SQS.ReceiveMessage')).toHaveLength(3);
    fanin.expectExactlyOneTerminalOutput('drain-short');
  });

  /**
   * Opens `aggregateId` and sends its ten replies, drains once with a crash armed at `crash`, makes
   * the messages that drain held visible again (their visibility timeout, run out), then drains
   * again without it.
   */
  const drainAcrossACrash = async (aggregateId: string, crash: CallMatcher) => {
    await sendIndependently([aggregateId]);
    const since = fanin.probe.now;
    fanin.probe.crashAt(crash, 'before');
    const first = await drain(event());
    const held = receivedHandles(since);
    fanin.probe.disarm();
    const itemsBetween = await replyItems(aggregateId);
    await expireHeld(held);
    const second = await drain(event());
    return { since, first, second, itemsBetween };
  };

  it('loses no reply when it dies while recording: the batch comes back and completes the aggregate', async () => {
    // Act: the drain dies at its first write to the aggregate (mutant killed: a drain that
    // deletes a batch before recording it, which loses the ten replies here)
    const { since, first, second } = await drainAcrossACrash('drain-crash-write', {
      name: 'DynamoDB.PutItem',
      touches: 'drain-crash-write',
    });

    // Assess: the crash failed the aggregate's replies, which stayed on the queue; the next drain
    // took them (a second receive each) and completed the aggregate once
    expect(first).toMatchObject({ received: 10, failed: 10 });
    expect(systemCallsOnReplies(since, 'SQS.DeleteMessageBatch').length).toBe(1);
    expect(second).toMatchObject({ received: 10, failed: 0 });
    fanin.expectExactlyOneTerminalOutput('drain-crash-write');
    expect(await queueDepth()).toBe(0);
  });

  it('records nothing twice and emits no second result when its delete fails after recording', async () => {
    // Act: the first drain records and completes, then its delete dies; its batch comes back
    const { first, second, itemsBetween } = await drainAcrossACrash('drain-crash-delete', {
      name: 'SQS.DeleteMessageBatch',
      queueRole: 'reply',
    });

    // Assess: the redelivered ten are recognised (no new item), the result was published once
    expect(first).toMatchObject({ received: 10, failed: 0, undeleted: 10 });
    expect(second).toMatchObject({ received: 10, failed: 0 });
    expect(await replyItems('drain-crash-delete')).toEqual(itemsBetween);
    expect(fanin.publications('drain-crash-delete').filter((p) => p.channel === 'completed')).toHaveLength(1);
    expect(await queueDepth()).toBe(0);
  });

  it('deletes what it recorded and leaves on the queue only the replies it could not record', async () => {
    await sendIndependently(['drain-ok', 'drain-failing']);
    const since = fanin.probe.now;
    const heal = fanin.probe.failEvery({ name: 'DynamoDB.PutItem', touches: 'drain-failing' });

    // Act
    const report = await drain(event());
    heal();

    // Assess (mutant killed: a drain that deletes its whole batch whatever failed)
    expect(report).toMatchObject({ received: 20, failed: 10 });
    const deleted = systemCallsOnReplies(since, 'SQS.DeleteMessageBatch').flatMap(
      (c) => (c.input as { Entries: unknown[] }).Entries,
    );
    expect(deleted).toHaveLength(10);
    fanin.expectExactlyOneTerminalOutput('drain-ok');
    fanin.expectNoTerminalOutput('drain-failing');
    expect(await queueDepth()).toBe(10);
    // The failed ten come back and complete their aggregate
    await expireHeld(receivedHandles(since));
    await drain(event());
    fanin.expectExactlyOneTerminalOutput('drain-failing');
  });

  /**
   * Drains with a Lambda context whose clock runs out (1,000 ms at the start, 400 ms after the
   * first receive of ten): one receive's ten are recorded and deleted, the other twenty are left
   * for the next drain, which completes the aggregate.
   */
  const drainsOneReceiveWithinTime = async (aggregateId: string, batchSize: number) => {
    await sendIndependently([aggregateId], 30);
    const remaining = [1000, 900, 400];
    const invocation = { getRemainingTimeInMillis: () => remaining.shift() ?? 0 };

    const report = await drain(event(batchSize), invocation);

    expect(report).toMatchObject({ batches: 1, received: 10, emptied: false });
    expect(await queueDepth()).toBe(20);
    expect(await drain(event())).toMatchObject({ received: 20, emptied: true });
    fanin.expectExactlyOneTerminalOutput(aggregateId);
  };

  it('starts no new batch once half its invocation’s time is spent, and leaves the rest for the next', async () => {
    // Batches of ten (mutant killed: a drain that ignores the time left and runs into the timeout)
    await drainsOneReceiveWithinTime('drain-slow', 10);
  });

  it('stops growing a batch once half its time is spent, and records what it received', async () => {
    // A batch size far above what arrived (mutant killed: a drain that receives until its batch is
    // full whatever the time, which on AWS runs a large batch into the timeout and leaves it to
    // come back until dead-lettered)
    await drainsOneReceiveWithinTime('drain-gather', 1000);
  });

  it.each([
    [{ drain: { partition: 1, batchSize: 10 } }, 'one of the 1 reply partitions (given 1)'],
    [{ drain: { partition: '0', batchSize: 10 } }, '(given "0")'],
    [{ drain: { partition: 0, batchSize: 0 } }, 'batchSize must be an integer from 1 to 10000 (given 0)'],
    [{ drain: {} }, '(given undefined)'],
  ])('refuses %j without touching a queue', async (bad, message) => {
    const since = fanin.probe.now;
    await expect(drain(bad as unknown as ReplyDrainEvent)).rejects.toThrow(message);
    expect(fanin.probe.callsAfter(since).filter((c) => c.system)).toHaveLength(0);
  });

  it('in the local runtime, is a drainer on the interval instead of a poller, draining through the same handler', async () => {
    await sendIndependently(['drain-local']);
    const consumers = startConsumers(fanin.topology, fanin.provisioned, () => fanin.ctx, aws.sqs, 1);
    try {
      // Assess: the partition's consumer is a drainer, every other queue keeps its poller
      const reply = consumers.filter((c) => c.role === 'reply');
      expect(reply.map((c) => c.poller instanceof QueueDrainer)).toEqual([true]);
      expect(consumers.filter((c) => c.role !== 'reply').every((c) => c.poller instanceof QueuePoller)).toBe(
        true,
      );
      // One drain now (the schedule's tick is a minute away)
      const drainer = reply[0]?.poller as QueueDrainer;
      const report = await drainer.drainOnce();
      expect(report).toMatchObject({ partition: 0, received: 10, emptied: true });
      expect(drainer.stats).toMatchObject({ invocations: 1, records: 10 });
      fanin.expectExactlyOneTerminalOutput('drain-local');
    } finally {
      await Promise.all(consumers.map((c) => c.poller.stop()));
    }
  });
});
