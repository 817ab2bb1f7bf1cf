import { GetQueueAttributesCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type DrainReport,
  makeReplyDrainHandler,
  type ReplyDrainEvent,
} from '../../../functions/handlers.ts';
import { aws } from '../../support/clients.ts';
import { FaninUnderTest } from '../../support/fanin.ts';

/**
 * A scheduled drain and its invocation's end: it must never start a batch it cannot finish in the
 * time left (a batch cut off between its records and its deletes comes back), and the messages it
 * holds must stay invisible to any other drain until it has deleted them. A slow call is one of
 * the system's SDK calls held by the probe; the time left is a Lambda context on the real clock.
 */
describe('a reply drain within its invocation’s time', () => {
  let fanin: FaninUnderTest;
  let queueUrl: string;
  let drain: (
    event: ReplyDrainEvent,
    invocation?: { getRemainingTimeInMillis(): number },
  ) => Promise<DrainReport>;
  const event: ReplyDrainEvent = { drain: { partition: 0, batchSize: 10 } };

  beforeAll(async () => {
    fanin = await FaninUnderTest.start(
      [{ name: 'drained', fanOut: { type: 'none' }, completion: { strategy: 'all' } }],
      { replyPartitions: 1, replyDrainIntervalSeconds: 60 },
    );
    queueUrl = fanin.provisioned.replyQueueUrls[0] as string;
    drain = makeReplyDrainHandler(
      () => fanin.ctx,
      () => ({ sqs: fanin.clients.sqs, replyQueueUrls: fanin.provisioned.replyQueueUrls }),
    );
  });
  afterAll(() => fanin.stop());

  /** Opens `aggregateId` expecting `replies`, then sends them one by one to the drained partition. */
  const sendReplies = async (aggregateId: string, replies: number) => {
    await fanin.sendRequest({ definition: 'drained', aggregateId, expected: replies });
    await fanin.drainIngress();
    for (let i = 0; i < replies; i += 1)
      await aws.sqs.send(
        new SendMessageCommand({
          QueueUrl: queueUrl,
          MessageBody: JSON.stringify({ i }),
          MessageAttributes: {
            'fanin-aggregate-id': { DataType: 'String', StringValue: aggregateId },
            'fanin-reply-id': { DataType: 'String', StringValue: String(i) },
          },
        }),
      );
  };
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
  /** Holds the drain's first delete of replies for `ms`, as a slow call would. */
  const slowFirstDelete = (ms: number) => {
    const pause = fanin.probe.pauseAt({ name: 'SQS.DeleteMessageBatch', queueRole: 'reply' });
    void pause.reached.then(() => setTimeout(() => pause.release(), ms));
    return pause;
  };

  it('starts no batch that would not finish in the time left if it took as long as its slowest', async () => {
    // Prepare: twenty replies (two batches of ten); the first batch's delete takes 2.5 s
    await sendReplies('drain-slowest', 20);
    slowFirstDelete(2_500);
    // An invocation with 5 s left: 2 s at the first look (so half its time is 1 s), then real time
    const end = Date.now() + 5_000;
    let looks = 0;
    const invocation = { getRemainingTimeInMillis: () => (looks++ === 0 ? 2_000 : end - Date.now()) };

    // Act
    const report = await drain(event, invocation);

    // Assess (mutant killed: a drain that starts a batch whenever half its time is left, however
    // slow the last one was — here it would start a second with about 2.4 s left after one that
    // took 2.5 s): one batch recorded and deleted, ten left for the next drain, which completes it
    expect(report).toMatchObject({ batches: 1, received: 10, failed: 0, undeleted: 0, emptied: false });
    expect(await queueDepth()).toBe(10);
    expect(await drain(event)).toMatchObject({ received: 10, emptied: true });
    const { output } = fanin.expectExactlyOneTerminalOutput('drain-slowest');
    expect(output).toMatchObject({ counts: { received: 20 } });
  });

  it('holds what it received from a second drain until it has recorded and deleted it', async () => {
    // Prepare: ten replies; the first drain's delete takes 3 s
    await sendReplies('drain-overlap', 10);
    const pause = slowFirstDelete(3_000);

    // Act: a second drain runs while the first holds its batch
    const first = drain(event);
    await pause.reached;
    const second = await drain(event);
    const firstReport = await first;

    // Assess (the queue's visibility timeout covers the drain: the second drain takes none of
    // what the first holds, so no reply is recorded or deleted twice)
    expect(second).toMatchObject({ received: 0, emptied: true });
    expect(firstReport).toMatchObject({ received: 10, failed: 0, undeleted: 0 });
    const { output } = fanin.expectExactlyOneTerminalOutput('drain-overlap');
    expect(output).toMatchObject({ counts: { received: 10 } });
    expect(await queueDepth()).toBe(0);
  });
});
