import { randomBytes } from 'node:crypto';
import {
  CreateQueueCommand,
  DeleteQueueCommand,
  type Message,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { moveMessages, ORIGIN_ATTRIBUTE } from '../../../shared/adapters/sqs-queues.ts';
import { createDistributor } from '../../../shared/app.ts';
import { createSqsClient } from '../../../shared/aws/clients.ts';
import { replyIdOf } from '../../../shared/engine/correlation.ts';
import type { Distributor, WatermarkOptions } from '../../../shared/partitions/distributor.ts';
import { aws } from '../../support/clients.ts';
import { InjectedCrash } from '../../support/failpoints.ts';
import { FaninUnderTest, queueDepth, takeAll } from '../../support/fanin.ts';
import { idleLongPollsAtOnce } from '../../support/long-polls.ts';

const AGGREGATES = 100;
const REPLIES = 10;

/** What an SDK call of a wrapped client does instead of (or around) reaching SQS. */
type Intercept = (
  command: string,
  input: Record<string, unknown>,
  next: (input?: Record<string, unknown>) => Promise<Record<string, unknown>>,
) => Promise<Record<string, unknown>>;

/**
 * A fresh SQS client whose every call goes through `intercept` first (an SDK middleware at the
 * initialize step, so the call can be crashed, answered, or changed before it is signed and sent).
 */
function interceptedSqs(intercept: Intercept): SQSClient {
  const sqs = createSqsClient();
  sqs.middlewareStack.add(
    (next, context) => async (args) => {
      const output = await intercept(
        context.commandName ?? '',
        args.input as Record<string, unknown>,
        async (input = args.input as Record<string, unknown>) =>
          (await next({ ...args, input })).output as unknown as Record<string, unknown>,
      );
      return { output, response: undefined } as unknown as Awaited<ReturnType<typeof next>>;
    },
    { step: 'initialize', name: 'testIntercept' },
  );
  return sqs;
}

/** Replies as any producer would put them on the backlog; `replyIds: false` sends none. */
async function toBacklog(
  backlogUrl: string,
  replies: readonly { aggregateId: string; body: unknown; replyId?: string }[],
): Promise<void> {
  for (let i = 0; i < replies.length; i += 10) {
    await aws.sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: backlogUrl,
        Entries: replies.slice(i, i + 10).map((r, j) => ({
          Id: String(j),
          MessageBody: JSON.stringify(r.body),
          MessageAttributes: {
            'fanin-aggregate-id': { DataType: 'String', StringValue: r.aggregateId },
            ...(r.replyId === undefined
              ? {}
              : { 'fanin-reply-id': { DataType: 'String' as const, StringValue: r.replyId } }),
          },
        })),
      }),
    );
  }
}

/** The reply id the reply path gives each message, as it reads them. */
async function replyIdsOf(messages: readonly Message[]): Promise<string[]> {
  const ids: string[] = [];
  for (const m of messages) {
    const attributes: Record<string, string> = {};
    for (const [name, value] of Object.entries(m.MessageAttributes ?? {})) {
      if (value.StringValue !== undefined) attributes[name] = value.StringValue;
    }
    ids.push(await replyIdOf(undefined, { body: m.Body, attributes, messageId: m.MessageId ?? '' }));
  }
  return ids.sort();
}

/**
 * High and low watermarks: the distributor copies from the backlog to a partition only up to its high watermark
 * and refills it at its low watermark, so a subscriber that arrives late is not starved by one
 * that took everything; a stalled partition's excess goes back and is processed elsewhere.
 *
 * Every test has a topology of its own, and its distributor cycles stop on a signal aborted after
 * the test: a test that times out cannot go on moving messages into the next one.
 */
describe('watermark distributor', () => {
  let fanin: FaninUnderTest;
  let abort: AbortController;
  const clients: SQSClient[] = [];

  beforeEach(async () => {
    abort = new AbortController();
    fanin = await FaninUnderTest.start(
      [{ name: 'batch', fanOut: { type: 'none' }, completion: { strategy: 'all' }, timeoutSeconds: 3600 }],
      { replyPartitions: 2, partitioning: { highWatermark: 100, lowWatermark: 20, stallSeconds: 30 } },
    );
  });
  afterEach(async () => {
    abort.abort();
    for (const client of clients.splice(0)) client.destroy();
    await fanin.stop();
  });

  /**
   * The distributor of this test's topology, on the test clock, its cycles bound to the test. Its
   * long polls that find nothing come back at once (test/support/long-polls.ts: nothing is sent
   * while a cycle runs), unless `waitOutLongPolls`.
   */
  function distributor(
    options: WatermarkOptions & { sqs?: SQSClient; waitOutLongPolls?: boolean } = {},
  ): Pick<Distributor, 'evacuate'> & { cycle: () => ReturnType<Distributor['cycle']> } {
    const { sqs, waitOutLongPolls = false, ...watermarks } = options;
    if (sqs) clients.push(sqs);
    const client = sqs ?? fanin.clients.sqs;
    const built = createDistributor(
      fanin.config,
      { ...fanin.clients, sqs: waitOutLongPolls ? client : idleLongPollsAtOnce(client) },
      fanin.clock.read,
      watermarks,
    );
    return {
      cycle: () => built.cycle({ signal: abort.signal }),
      evacuate: (index, evacuateOptions = {}) =>
        built.evacuate(index, { signal: abort.signal, ...evacuateOptions }),
    };
  }

  async function openAggregates(prefix: string, count = AGGREGATES, expected = REPLIES): Promise<void> {
    for (let a = 0; a < count; a += 1) {
      await fanin.sendRequest({ definition: 'batch', aggregateId: `${prefix}-${a}`, expected });
    }
    fanin.consumers.clear();
    await fanin.drain();
  }

  async function fillBacklog(prefix: string): Promise<void> {
    const replies = [];
    for (let a = 0; a < AGGREGATES; a += 1) {
      for (let r = 0; r < REPLIES; r += 1) {
        replies.push({ aggregateId: `${prefix}-${a}`, body: { a, r }, replyId: String(r) });
      }
    }
    await toBacklog(fanin.provisioned.queueUrls.backlog, replies);
  }

  const partitionUrl = (index: number): string => fanin.provisioned.replyQueueUrls[index] ?? '';

  it('a partition whose consumer starts late receives work within a bounded number of cycles, and nothing is lost or counted twice', async () => {
    // Prepare: 1,000 replies in the backlog; a consumer only on partition 0
    await openAggregates('s');
    await fillBacklog('s');
    const cycles = distributor();
    let processed1 = 0;
    let cyclesUntilFed: number | undefined;

    // Act
    for (let cycle = 1; cycle <= 60; cycle += 1) {
      const report = await cycles.cycle();
      if (cycle > 3 && cyclesUntilFed === undefined && processed1 > 0) cyclesUntilFed = cycle - 3;
      for (let b = 0; b < 3; b += 1) await fanin.consumePartition(0);
      if (cycle >= 3) {
        // partition 1's consumer starts at cycle 3
        for (let b = 0; b < 3; b += 1) processed1 += await fanin.consumePartition(1);
      }
      fanin.clock.advance(10_000);
      if (report.backlogEmpty && (await queueDepth(fanin.provisioned.queueUrls.backlog)) === 0) {
        const left = (await queueDepth(partitionUrl(0))) + (await queueDepth(partitionUrl(1)));
        if (left === 0) break;
      }
    }

    // Assess
    expect(processed1).toBeGreaterThan(0);
    expect(cyclesUntilFed).toBeLessThanOrEqual(2);
    const completed = await fanin.outputs('completed');
    expect(completed).toHaveLength(AGGREGATES);
    expect(completed.every((c) => (c.counts as { received: number }).received === REPLIES)).toBe(true);
    expect(await fanin.outputs('late')).toEqual([]);
    expect(await fanin.outputs('unknown')).toEqual([]);
  });

  it('a stalled partition keeps its low watermark and its excess is moved to and processed by the healthy one', async () => {
    // Prepare: partition 1 has no consumer; the first cycle fills both to the high watermark
    await openAggregates('t');
    await fillBacklog('t');
    const cycles = distributor();
    const first = await cycles.cycle();
    expect(first.fed).toEqual({ 0: 100, 1: 100 });

    // Act: partition 0 drains; partition 1 makes no progress for stallSeconds
    for (let b = 0; b < 10; b += 1) await fanin.consumePartition(0);
    fanin.clock.advance(31_000);
    const second = await cycles.cycle();

    // Assess
    expect(second.stalled).toEqual([1]);
    expect(second.evacuated).toEqual({ 1: 80 });
    expect(await queueDepth(partitionUrl(1))).toBe(20);
    expect(second.fed[0]).toBe(100);
    // everything but the 20 kept on the stalled partition is processed by partition 0
    for (let cycle = 0; cycle < 40; cycle += 1) {
      for (let b = 0; b < 10; b += 1) await fanin.consumePartition(0);
      fanin.clock.advance(10_000);
      const report = await cycles.cycle();
      expect(report.stalled).toEqual([1]);
      if (report.backlogEmpty && (await queueDepth(partitionUrl(0))) === 0) break;
    }
    expect(await queueDepth(fanin.provisioned.queueUrls.backlog)).toBe(0);
    expect(await queueDepth(partitionUrl(1))).toBe(20);
    const header = await fanin.ctx.store.listOpen('batch');
    const pending = header.reduce((sum, h) => sum + ((h.expected ?? 0) - h.received), 0);
    expect(pending).toBe(20);
  });

  it('a partition whose consumer holds messages in flight is not stalled, whatever its depth says', async () => {
    // Prepare: 30 replies on partition 1; its consumer has taken 10 and is still working on them
    // (in flight: depth, visible + in flight, does not drop until it deletes them)
    await openAggregates('f', 3);
    await toBacklog(
      fanin.provisioned.queueUrls.backlog,
      [0, 1, 2].flatMap((a) =>
        Array.from({ length: 10 }, (_, r) => ({ aggregateId: `f-${a}`, body: { r }, replyId: String(r) })),
      ),
    );
    await fanin.destination().setEnabled(0, false);
    const cycles = distributor();
    expect((await cycles.cycle()).fed).toEqual({ 1: 30 });
    const { Messages = [] } = await aws.sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: partitionUrl(1),
        MaxNumberOfMessages: 10,
        VisibilityTimeout: 600,
      }),
    );
    expect(Messages).toHaveLength(10);

    // Act: two stall periods pass with the depth unchanged
    fanin.clock.advance(31_000);
    const second = await cycles.cycle();
    fanin.clock.advance(31_000);
    const third = await cycles.cycle();

    // Assess
    expect([second.stalled, third.stalled]).toEqual([[], []]);
    expect([second.evacuated, third.evacuated]).toEqual([{}, {}]);
    expect(await queueDepth(partitionUrl(1))).toBe(30);
  });

  it('scale-in: a disabled partition is evacuated and its replies are processed by the others', async () => {
    // Prepare
    fanin.consumers.clear();
    await fanin.sendRequest({ definition: 'batch', aggregateId: 'scale-in', expected: 3 });
    fanin.consumers.clear();
    await fanin.drain();
    await fanin.destination().setEnabled(1, false);
    const before = await queueDepth(partitionUrl(1));
    for (let r = 0; r < 3; r += 1) {
      await fanin.sendReply({ r }, { 'fanin-aggregate-id': 'scale-in', 'fanin-reply-id': String(r) }, 1);
    }

    // Act
    const cycles = distributor();
    const moved = await cycles.evacuate(1);
    await cycles.cycle();
    fanin.consumers.add(0);
    await fanin.drain();

    // Assess
    expect(moved).toBe(before + 3);
    expect(await queueDepth(partitionUrl(1))).toBe(0);
    expect((await fanin.ctx.store.getHeader('scale-in'))?.status).toBe('closed');
  });

  it('a move that dies between its send and its delete leaves copies with one reply id: replies without a reply id are counted once', async () => {
    // Prepare: an aggregate expecting 3 replies; 2 of them, without fanin-reply-id, in the backlog
    await openAggregates('crash', 1, 3);
    const backlog = fanin.provisioned.queueUrls.backlog;
    await toBacklog(backlog, [
      { aggregateId: 'crash-0', body: { bank: 'a' } },
      { aggregateId: 'crash-0', body: { bank: 'b' } },
    ]);
    let crashes = 0;
    const crashing = interceptedSqs(async (command, input, next) => {
      if (command === 'DeleteMessageBatchCommand' && input.QueueUrl === backlog && crashes === 0) {
        crashes += 1;
        throw new InjectedCrash('DeleteMessageBatch of a move');
      }
      return next();
    });

    // Act: the move sends both replies to a partition, then dies before deleting them from the
    // backlog; they reappear there (after 1 s) and a healthy distributor moves them again
    const crashed = await distributor({ sqs: crashing, moveVisibilitySeconds: 1 })
      .cycle()
      .catch((e: unknown) => e);
    await new Promise((resolve) => setTimeout(resolve, 1_100)); // the originals are visible again
    const healthy = distributor({ moveVisibilitySeconds: 1 });
    for (let cycle = 0; cycle < 10 && (await queueDepth(backlog)) > 0; cycle += 1) await healthy.cycle();
    const copies = await fanin.destination().gather(10);
    fanin.consumers.add(0).add(1);
    await fanin.drain();
    const afterTwo = await fanin.outputs('completed');
    await toBacklog(backlog, [{ aggregateId: 'crash-0', body: { bank: 'c' } }]);
    await healthy.cycle();
    await fanin.drain();

    // Assess: four copies, two reply ids; the aggregate waited for its third reply
    expect(crashed).toBeInstanceOf(InjectedCrash);
    expect(await queueDepth(backlog)).toBe(0);
    expect(copies).toHaveLength(4);
    const ids = await replyIdsOf(copies);
    expect(new Set(ids).size).toBe(2);
    expect([ids[0], ids[2]]).toEqual([ids[1], ids[3]]);
    expect(afterTwo).toEqual([]);
    const completed = await fanin.outputs('completed');
    expect(completed).toHaveLength(1);
    expect(completed[0]).toMatchObject({ aggregateId: 'crash-0', counts: { received: 3 } });
    expect(await fanin.outputs('late')).toEqual([]);
    expect(await fanin.outputs('unknown')).toEqual([]);
  });

  it('a delete SQS reports as failed is retried: the move leaves no copy behind', async () => {
    // Prepare: 5 replies in the backlog; SQS fails the first entry of the first delete of a move
    await openAggregates('retry', 1, 5);
    const backlog = fanin.provisioned.queueUrls.backlog;
    await toBacklog(
      backlog,
      Array.from({ length: 5 }, (_, r) => ({ aggregateId: 'retry-0', body: { r }, replyId: String(r) })),
    );
    let failed = 0;
    const flaky = interceptedSqs(async (command, input, next) => {
      if (command !== 'DeleteMessageBatchCommand' || input.QueueUrl !== backlog || failed > 0) return next();
      failed += 1;
      const [first, ...rest] = input.Entries as { Id: string }[];
      const output = rest.length > 0 ? await next({ ...input, Entries: rest }) : { Successful: [] };
      const failures = (output.Failed as unknown[] | undefined) ?? [];
      return {
        ...output,
        Failed: [
          ...failures,
          { Id: first?.Id, Code: 'InternalError', SenderFault: false, Message: 'injected' },
        ],
      };
    });

    // Act
    const report = await distributor({ sqs: flaky, moveVisibilitySeconds: 600 }).cycle();

    // Assess: the failed entry was deleted on its retry (else it would wait in flight, as a
    // duplicate, for 600 s)
    expect(failed).toBe(1);
    expect(report.fed).toEqual({ 0: 5 });
    expect(report.undeleted).toEqual([]);
    expect(await queueDepth(backlog)).toBe(0);
  });

  it('a delete that keeps failing is reported with its message, and the copy it leaves is counted once', async () => {
    // Prepare: an aggregate expecting 3 replies, 2 of them (no reply id) in the backlog; SQS
    // fails every delete of the first one received
    await openAggregates('undeleted', 1, 3);
    const backlog = fanin.provisioned.queueUrls.backlog;
    await toBacklog(backlog, [
      { aggregateId: 'undeleted-0', body: { bank: 'a' } },
      { aggregateId: 'undeleted-0', body: { bank: 'b' } },
    ]);
    let stuck: string | undefined;
    const failing = interceptedSqs(async (command, input, next) => {
      if (command === 'ReceiveMessageCommand' && input.QueueUrl === backlog) {
        const output = await next();
        stuck ??= (output.Messages as Message[] | undefined)?.[0]?.ReceiptHandle;
        return output;
      }
      if (command !== 'DeleteMessageBatchCommand' || input.QueueUrl !== backlog) return next();
      const entries = input.Entries as { Id: string; ReceiptHandle: string }[];
      const blocked = entries.filter((e) => e.ReceiptHandle === stuck);
      const others = entries.filter((e) => e.ReceiptHandle !== stuck);
      const output = others.length > 0 ? await next({ ...input, Entries: others }) : { Successful: [] };
      return {
        ...output,
        Failed: blocked.map((e) => ({
          Id: e.Id,
          Code: 'InternalError',
          SenderFault: false,
          Message: 'injected',
        })),
      };
    });
    fanin.consumers.clear();

    const warnings: Record<string, unknown>[] = [];
    const log = {
      info: () => undefined,
      warn: (message: string, fields?: Record<string, unknown>) => warnings.push({ message, ...fields }),
      error: () => undefined,
    };

    // Act
    // (its long polls as SQS makes them: the undeleted copy may come back within the cycle's)
    const report = await distributor({
      sqs: failing,
      moveVisibilitySeconds: 1,
      log,
      waitOutLongPolls: true,
    }).cycle();
    await new Promise((resolve) => setTimeout(resolve, 1_100)); // the undeleted one is visible again
    const healthy = distributor({ moveVisibilitySeconds: 1 });
    for (let cycle = 0; cycle < 10 && (await queueDepth(backlog)) > 0; cycle += 1) await healthy.cycle();
    fanin.consumers.add(0).add(1);
    await fanin.drain();
    const afterTwo = await fanin.outputs('completed');
    await toBacklog(backlog, [{ aggregateId: 'undeleted-0', body: { bank: 'c' } }]);
    await healthy.cycle();
    await fanin.drain();

    // Assess
    expect(report.undeleted).toHaveLength(1);
    expect(report.undeleted[0]).toMatchObject({ code: 'InternalError', message: 'injected' });
    expect(report.undeleted[0]?.originMessageId).toBe(report.undeleted[0]?.messageId);
    expect(warnings).toEqual([
      expect.objectContaining({
        undeleted: 1,
        messageIds: [report.undeleted[0]?.messageId],
        codes: ['InternalError'],
      }),
    ]);
    expect(afterTwo).toEqual([]);
    const completed = await fanin.outputs('completed');
    expect(completed).toHaveLength(1);
    expect(completed[0]).toMatchObject({ aggregateId: 'undeleted-0', counts: { received: 3 } });
  });

  it('a receive that finds nothing while messages wait (as an SQS short poll may) does not end the move, nor mark the backlog empty', async () => {
    // Prepare: 250 replies in the backlog. SQS answers every short poll of it with nothing (it
    // sampled servers that hold none of them) and the first long poll too.
    await openAggregates('poll', 25);
    const backlog = fanin.provisioned.queueUrls.backlog;
    await toBacklog(
      backlog,
      Array.from({ length: 250 }, (_, i) => ({
        aggregateId: `poll-${i % 25}`,
        body: { i },
        replyId: String(Math.floor(i / 25)),
      })),
    );
    let longPolls = 0;
    const sampling = interceptedSqs(async (command, input, next) => {
      if (command === 'ReceiveMessageCommand' && input.QueueUrl === backlog) {
        const long = Number(input.WaitTimeSeconds ?? 0) > 0;
        if (long) longPolls += 1;
        if (!long || longPolls === 1) return { Messages: [] };
      }
      return next();
    });

    // Act
    // (its long polls as SQS makes them: the interception tells them from short polls)
    const report = await distributor({ sqs: sampling, waitOutLongPolls: true }).cycle();

    // Assess: both partitions fed to the high watermark, the rest still waits, and the backlog
    // is not reported empty
    expect(report.fed).toEqual({ 0: 100, 1: 100 });
    expect(report.backlogEmpty).toBe(false);
    expect(await queueDepth(backlog)).toBe(50);
  });

  it('an aborted cycle stops at once: the long poll in flight is cancelled, no other call follows', async () => {
    // Prepare: an empty backlog, so the cycle's move waits on long polls of 20 s
    const controller = new AbortController();
    let receiving!: () => void;
    const received = new Promise<void>((resolve) => {
      receiving = resolve;
    });
    const calls: string[] = [];
    const watched = interceptedSqs(async (command, input, next) => {
      if (command !== 'ReceiveMessageCommand' || input.QueueUrl !== fanin.provisioned.queueUrls.backlog) {
        return next();
      }
      receiving();
      try {
        const output = await next();
        calls.push('receive answered');
        return output;
      } catch (error) {
        calls.push(`receive ${(error as Error).name}`);
        throw error;
      }
    });
    clients.push(watched);
    const built = createDistributor(fanin.config, { ...fanin.clients, sqs: watched }, fanin.clock.read, {
      moveWaitSeconds: 20,
      emptyReceives: 2,
    });

    // Act
    const cycle = built.cycle({ signal: controller.signal }).then(
      () => 'finished',
      (e: unknown) => e,
    );
    await received;
    controller.abort(new Error('the test is over'));

    // Assess: the cycle ends with the signal's reason, its receive cancelled rather than answered
    expect(await cycle).toEqual(new Error('the test is over'));
    expect(calls).toEqual(['receive AbortError']);
  });
});

/**
 * The move loop itself (shared/adapters/sqs-queues.ts), on queues of its own: what a moved
 * message keeps.
 */
describe('moving messages between queues', () => {
  const queues: string[] = [];
  const sqs = aws.sqs;

  afterEach(async () => {
    await Promise.all(
      queues
        .splice(0)
        .map((QueueUrl) => sqs.send(new DeleteQueueCommand({ QueueUrl })).catch(() => undefined)),
    );
  });

  async function queue(name: string, fifo = false): Promise<string> {
    const QueueName = `mv${randomBytes(5).toString('hex')}-${name}${fifo ? '.fifo' : ''}`;
    const { QueueUrl = '' } = await sqs.send(
      new CreateQueueCommand({ QueueName, ...(fifo ? { Attributes: { FifoQueue: 'true' } } : {}) }),
    );
    queues.push(QueueUrl);
    return QueueUrl;
  }

  const pointer = JSON.stringify([
    'software.amazon.payloadoffloading.PayloadS3Pointer',
    { s3BucketName: 'bucket', s3Key: 'replies/abc' },
  ]);

  it('keeps body, attributes and the identity of its first queue across several moves', async () => {
    // Prepare: a claim-check pointer with its size attribute, and a binary attribute
    const [a, b, c] = [await queue('a'), await queue('b'), await queue('c')];
    const { MessageId } = await sqs.send(
      new SendMessageCommand({
        QueueUrl: a,
        MessageBody: pointer,
        MessageAttributes: {
          ExtendedPayloadSize: { DataType: 'Number', StringValue: '400000' },
          'fanin-aggregate-id': { DataType: 'String', StringValue: 'agg-1' },
          blob: { DataType: 'Binary', BinaryValue: new Uint8Array([1, 2, 3]) },
        },
      }),
    );

    // Act
    const first = await moveMessages(sqs, { from: a, to: b, max: 1, visibilitySeconds: 30 });
    const second = await moveMessages(sqs, { from: b, to: c, max: 1, visibilitySeconds: 30 });
    const [moved] = await takeAll(c);

    // Assess
    expect([first.moved, second.moved]).toEqual([1, 1]);
    expect(moved?.MessageId).not.toBe(MessageId);
    expect(moved?.Body).toBe(pointer);
    expect(moved?.MessageAttributes).toMatchObject({
      [ORIGIN_ATTRIBUTE]: { DataType: 'String', StringValue: MessageId },
      ExtendedPayloadSize: { DataType: 'Number', StringValue: '400000' },
      'fanin-aggregate-id': { DataType: 'String', StringValue: 'agg-1' },
    });
    expect([...(moved?.MessageAttributes?.blob?.BinaryValue ?? [])]).toEqual([1, 2, 3]);
    expect(await queueDepth(a)).toBe(0);
    expect(await queueDepth(b)).toBe(0);
  });

  it('FIFO: keeps the message group; a move retried after a crash is deduplicated by SQS', async () => {
    // Prepare
    const [a, b] = [await queue('a', true), await queue('b', true)];
    await sqs.send(
      new SendMessageCommand({
        QueueUrl: a,
        MessageBody: '{"r":1}',
        MessageGroupId: 'agg-7',
        MessageDeduplicationId: 'producer-1',
      }),
    );
    let deletes = 0;
    const crashing = interceptedSqs(async (command, _input, next) => {
      if (command === 'DeleteMessageBatchCommand' && deletes++ === 0) throw new InjectedCrash('delete');
      return next();
    });

    // Act: the first move dies before its delete; the message reappears after 1 s; moved again
    const crashed = await moveMessages(crashing, { from: a, to: b, max: 1, visibilitySeconds: 1 }).catch(
      (e: unknown) => e,
    );
    const retried = await moveMessages(crashing, {
      from: a,
      to: b,
      max: 1,
      visibilitySeconds: 1,
      waitSeconds: 5,
    });
    crashing.destroy();
    const { Messages = [] } = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: b,
        MaxNumberOfMessages: 10,
        MessageAttributeNames: ['All'],
        MessageSystemAttributeNames: ['MessageGroupId'],
      }),
    );

    // Assess
    expect(crashed).toBeInstanceOf(InjectedCrash);
    expect(retried.moved).toBe(1);
    expect(await queueDepth(b)).toBe(1);
    expect(Messages).toHaveLength(1);
    expect(Messages[0]?.Attributes?.MessageGroupId).toBe('agg-7');
    expect(Messages[0]?.Body).toBe('{"r":1}');
    expect(await queueDepth(a)).toBe(0);
  });

  it('a message that already has 10 attributes moves without an origin id, and the move says so', async () => {
    // Prepare
    const [a, b] = [await queue('a'), await queue('b')];
    await sqs.send(
      new SendMessageCommand({
        QueueUrl: a,
        MessageBody: '{}',
        MessageAttributes: Object.fromEntries(
          Array.from({ length: 10 }, (_, i) => [`attr-${i}`, { DataType: 'String', StringValue: String(i) }]),
        ),
      }),
    );

    // Act
    const result = await moveMessages(sqs, { from: a, to: b, max: 1, visibilitySeconds: 30 });
    const [moved] = await takeAll(b);

    // Assess
    expect(result).toMatchObject({ moved: 1, withoutOrigin: 1, undeleted: [] });
    expect(Object.keys(moved?.MessageAttributes ?? {})).toHaveLength(10);
  });
});
