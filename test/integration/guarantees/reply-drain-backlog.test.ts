import {
  GetQueueAttributesCommand,
  type Message,
  type ReceiveMessageCommandInput,
  SendMessageCommand,
} from '@aws-sdk/client-sqs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  type DrainReport,
  makeReplyDrainHandler,
  type ReplyDrainEvent,
} from '../../../functions/handlers.ts';
import { aws } from '../../support/clients.ts';
import { FaninUnderTest } from '../../support/fanin.ts';

/**
 * When a drain has taken its partition's backlog. A long poll
 * returns fewer messages than it asked for while more wait (it returns once some are there, and
 * SQS samples its servers), so a short receive alone says nothing about the backlog: a drain that
 * stopped there left a bulk aggregate's replies to later drains, a few a minute, past its
 * deadline. What ends a drain is a receive that finds nothing, or a short one holding only replies
 * sent after the drain began (the stream, which a drain leaves to the next one instead of
 * following it one reply a receive). SQS's sampling is fauxqs answering a receive with fewer
 * messages than the drain asked for (the request's `MaxNumberOfMessages` lowered on its way out,
 * below the probe, which records what the drain asked for and what it got); the stream is a reply
 * sent to the partition after a receive returns. Everything is read from the calls the system
 * made, the table and the publications as sent.
 */
describe('a reply drain and the backlog it finds', () => {
  let fanin: FaninUnderTest;
  let queueUrl: string;
  let drain: (event: ReplyDrainEvent) => Promise<DrainReport>;
  const event = (batchSize = 1000): ReplyDrainEvent => ({ drain: { partition: 0, batchSize } });
  /** What happens to the system's receives from the partition (the nth, from 1), while set. */
  let onReceive:
    | { readonly ask?: (nth: number) => number | undefined; readonly after?: (nth: number) => Promise<void> }
    | undefined;
  let receiveCount = 0;

  beforeAll(async () => {
    fanin = await FaninUnderTest.start(
      [{ name: 'drained', fanOut: { type: 'none' }, completion: { strategy: 'all' } }],
      { replyPartitions: 1, replyDrainIntervalSeconds: 60 },
    );
    queueUrl = fanin.provisioned.replyQueueUrls[0] as string;
    fanin.clients.sqs.middlewareStack.add(
      (next, context) => async (args) => {
        const input = args.input as ReceiveMessageCommandInput;
        if (!onReceive || context.commandName !== 'ReceiveMessageCommand' || input.QueueUrl !== queueUrl)
          return next(args);
        receiveCount += 1;
        const nth = receiveCount;
        const ask = onReceive.ask?.(nth);
        const result = await next(
          ask === undefined ? args : { ...args, input: { ...input, MaxNumberOfMessages: ask } },
        );
        await onReceive.after?.(nth);
        return result;
      },
      { step: 'initialize', priority: 'low', name: 'sqsSampling' },
    );
    drain = makeReplyDrainHandler(
      () => fanin.ctx,
      () => ({ sqs: fanin.clients.sqs, replyQueueUrls: fanin.provisioned.replyQueueUrls }),
    );
  });
  afterEach(() => {
    onReceive = undefined;
    receiveCount = 0;
  });
  afterAll(() => fanin.stop());

  const open = async (aggregateId: string, expected: number) => {
    await fanin.sendRequest({ definition: 'drained', aggregateId, expected });
    await fanin.drainIngress();
  };
  const sendReply = (aggregateId: string, i: number) =>
    aws.sqs.send(
      new SendMessageCommand({
        QueueUrl: queueUrl,
        MessageBody: JSON.stringify({ i, from: aggregateId }),
        MessageAttributes: {
          'fanin-aggregate-id': { DataType: 'String', StringValue: aggregateId },
          'fanin-reply-id': { DataType: 'String', StringValue: String(i) },
        },
      }),
    );
  /** Opens `ids` (`replies` expected each), then sends their replies one by one, round-robin. */
  const sendIndependently = async (ids: readonly string[], replies: number) => {
    for (const aggregateId of ids) await open(aggregateId, replies);
    for (let i = 0; i < replies; i += 1) for (const aggregateId of ids) await sendReply(aggregateId, i);
  };
  /** The system's receives from the partition since `since`: what each asked for and got. */
  const receivesSince = (since: number) =>
    fanin.probe
      .callsAfter(since)
      .filter((c) => c.system && c.name === 'SQS.ReceiveMessage' && c.queueRole === 'reply')
      .map((c) => ({
        asked: (c.input as { MaxNumberOfMessages?: number }).MaxNumberOfMessages,
        got: ((c.output as { Messages?: Message[] } | undefined)?.Messages ?? []).length,
      }));
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

  it('takes a backlog larger than one receive in one drain, though a receive comes back short while replies wait', async () => {
    // Prepare: thirty replies wait; SQS answers the second receive with three of the ten asked for
    await sendIndependently(['backlog-a', 'backlog-b', 'backlog-c'], 10);
    const since = fanin.probe.now;
    onReceive = { ask: (nth) => (nth === 2 ? 3 : undefined) };

    // Act: one drain
    const report = await drain(event());

    // Assess: the short receive did not end it (mutant killed: a drain ends at the first receive
    // that comes back short, which took 13 here and left 17 to the next drains); the receive that
    // found nothing did, the backlog's last seven being the drain's own backlog
    expect(receivesSince(since)).toEqual([
      { asked: 10, got: 10 },
      { asked: 10, got: 3 },
      { asked: 10, got: 10 },
      { asked: 10, got: 7 },
      { asked: 10, got: 0 },
    ]);
    expect(report).toMatchObject({ batches: 1, received: 30, failed: 0, undeleted: 0, emptied: true });
    expect(await queueDepth()).toBe(0);
    for (const aggregateId of ['backlog-a', 'backlog-b', 'backlog-c']) {
      const { output } = fanin.expectExactlyOneTerminalOutput(aggregateId);
      expect(output).toMatchObject({ counts: { received: 10 } });
    }
  });

  it('takes the backlog in batches of two though every other receive comes back short', async () => {
    // Prepare: the simulation's small batches (seed 170: replyBatchSize 2), twelve replies waiting,
    // SQS answering every odd receive with one of the two asked for
    await sendIndependently(['pairs'], 12);
    const since = fanin.probe.now;
    onReceive = { ask: (nth) => (nth % 2 === 1 ? 1 : undefined) };

    // Act
    const report = await drain(event(2));

    // Assess (mutant killed: a drain ends at the first receive that comes back short, which took
    // one reply here)
    expect(report).toMatchObject({ received: 12, emptied: true });
    expect(receivesSince(since).at(-1)).toEqual({ asked: 2, got: 0 });
    expect(await queueDepth()).toBe(0);
    fanin.expectExactlyOneTerminalOutput('pairs');
  });

  it('ends at a short receive holding only replies sent after it began, leaving the stream to the next drain', async () => {
    // Prepare: ten replies wait; while the drain runs, a responder answers after each receive
    // (a stream of three replies of another aggregate, one a receive)
    await sendIndependently(['stream-backlog'], 10);
    await open('stream-late', 3);
    let streamed = 0;
    onReceive = {
      after: async () => {
        if (streamed >= 3) return;
        // SentTimestamp is in milliseconds: the stream's replies are sent a few after the drain began.
        await new Promise((resolve) => setTimeout(resolve, 5));
        await sendReply('stream-late', streamed);
        streamed += 1;
      },
    };
    const since = fanin.probe.now;

    // Act: a drain in batches of ten (the backlog, one full receive, is one batch)
    const first = await drain(event(10));

    // Assess: the backlog's batch, then one receive of the stream's first reply, short and sent
    // after the drain began, which ends it (mutant killed: a drain goes on until a receive finds
    // nothing, which followed the stream here one reply a receive to its end, five receives)
    expect(receivesSince(since)).toEqual([
      { asked: 10, got: 10 },
      { asked: 10, got: 1 },
    ]);
    expect(first).toMatchObject({ batches: 2, received: 11, emptied: true });
    fanin.expectExactlyOneTerminalOutput('stream-backlog');
    expect(await queueDepth()).toBe(1);

    // The stream ends; the next drain takes what it left, its own backlog now, and completes it
    onReceive = undefined;
    for (; streamed < 3; streamed += 1) await sendReply('stream-late', streamed);
    expect(await drain(event(10))).toMatchObject({ received: 2, emptied: true });
    const { output } = fanin.expectExactlyOneTerminalOutput('stream-late');
    expect(output).toMatchObject({ counts: { received: 3 } });
    expect(await queueDepth()).toBe(0);
  });
});
