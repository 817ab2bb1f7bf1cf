import { DeleteQueueCommand, GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SendFailedError, SqsRequestSender } from '../../../shared/adapters/sqs-sender.ts';
import { createSqsClient } from '../../../shared/aws/clients.ts';
import { aws } from '../../support/clients.ts';
import { FaninUnderTest, type OutputBody, takeAll } from '../../support/fanin.ts';

/** Messages a queue holds, visible or in flight (a record failed and awaiting redelivery is in flight). */
async function depth(queueUrl: string): Promise<number> {
  const { Attributes = {} } = await aws.sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl: queueUrl,
      AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
    }),
  );
  return (
    Number(Attributes.ApproximateNumberOfMessages ?? 0) +
    Number(Attributes.ApproximateNumberOfMessagesNotVisible ?? 0)
  );
}

/**
 * docs/wire-contract.md, Recipients: each recipient a request names must be a queue, or the whole
 * request goes to the error output with a reason naming the recipient. A queue that does not exist
 * is not a queue: the request is refused with that reason, nothing is retried, and no aggregate is
 * left to its deadline with sub-requests sent to some recipients and never to others.
 */
describe('a request naming a recipient queue that does not exist', () => {
  let fanin: FaninUnderTest;
  let r1: string;
  let r2: string;
  let gone: string;
  let missing: string;
  // A definition's own recipients are named before the prefix is known: exact names of their own.
  const run = Math.random().toString(36).slice(2, 10);
  const fixed = `rcpt-fixed-${run}`;
  const fixedMissing = `rcpt-fixed-${run}-missing`;

  beforeAll(async () => {
    fanin = await FaninUnderTest.start([
      { name: 'rl', fanOut: { type: 'recipient-list' }, completion: { strategy: 'all' }, timeoutSeconds: 60 },
      {
        name: 'rl-fixed',
        fanOut: { type: 'recipient-list', recipients: [fixed, fixedMissing] },
        completion: { strategy: 'all' },
        timeoutSeconds: 60,
      },
    ]);
    await fanin.targetQueue(fixed, true);
    r1 = await fanin.targetQueue('atk1-r1');
    r2 = await fanin.targetQueue('atk1-r2');
    gone = await fanin.targetQueue('atk1-gone');
    missing = `${fanin.topology.prefix}-no-such-queue-zz`;
  });
  afterAll(() => fanin.stop());

  it('goes to the error output naming the recipient, opens no aggregate, sends no sub-request and is not redelivered (kills: recipients not checked before the aggregate opens; unreachable queue retryable)', async () => {
    // Act
    await fanin.sendRequest({ definition: 'rl', aggregateId: 'NX-2', recipients: [r1, missing, r2] });
    await fanin.drain();

    // Assess: one refusal, naming the recipient and why
    const errors = await fanin.outputs('error');
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ type: 'fanin.error', source: 'ingress' });
    expect(String(errors[0]?.reason)).toContain(
      `sending to queue ${missing} failed: the queue does not exist`,
    );
    // no aggregate, so no deadline to wait for and nothing to time out
    expect(await fanin.ctx.store.getHeader('NX-2')).toBeUndefined();
    // no recipient was sent anything (below any deduplication: the SendMessageBatch calls)
    const sends = fanin.probe.calls.filter(
      (c) => c.system && c.name === 'SQS.SendMessageBatch' && c.queueRole?.startsWith('target:'),
    );
    expect(sends).toEqual([]);
    expect(await takeAll(fanin.targetUrl(r1))).toEqual([]);
    expect(await takeAll(fanin.targetUrl(r2))).toEqual([]);
    // the ingress message was acknowledged (nothing in flight to come back), never requeued
    expect(await depth(fanin.provisioned.queueUrls.ingress)).toBe(0);
    expect(fanin.sentInputs('ingress')).toHaveLength(1);
    expect(await fanin.deadLetters()).toEqual({});
    // and a later run finds nothing to do: no output, no timer
    fanin.clock.advance(120_000);
    expect(await fanin.sweep()).toBe(0);
    expect(await fanin.fireTimers()).toBe(0);
    expect(await fanin.outputs('timed-out')).toEqual([]);
    expect(await fanin.outputs('error')).toEqual([]);
  });

  it('a queue deleted after it was resolved fails its send: the aggregate ends failed with the reason at once, the request goes to the error output, nothing is redelivered (kills: unreachable queue retryable at send; aggregate left to its deadline)', async () => {
    // Prepare: the sender resolves (and caches) the queue with a first request, then it is deleted
    await fanin.sendRequest({ definition: 'rl', aggregateId: 'NX-warm', recipients: [gone] });
    await fanin.drain();
    expect(await takeAll(fanin.targetUrl(gone))).toHaveLength(1);
    await aws.sqs.send(new DeleteQueueCommand({ QueueUrl: fanin.targetUrl(gone) }));
    const before = fanin.probe.calls.length;

    // Act
    await fanin.sendRequest({ definition: 'rl', aggregateId: 'NX-3', recipients: [r1, gone, r2] });
    await fanin.drain();

    // Assess: the aggregate ended now, not at its deadline 60 s on, failed with the reason
    const header = await fanin.ctx.store.getHeader('NX-3');
    expect(header).toMatchObject({ status: 'closed', outcome: 'failed', completedBy: 'failures' });
    const errors = await fanin.outputs('error');
    const failed = errors.find((e) => e.type === 'fanin.aggregate.failed') as OutputBody;
    const refused = errors.find((e) => e.type === 'fanin.error') as OutputBody;
    expect(errors).toHaveLength(2);
    expect(failed).toMatchObject({ aggregateId: 'NX-3', outcome: 'failed', completedBy: 'failures' });
    expect(String(failed.reason)).toContain(`sending to queue ${gone} failed: the queue does not exist`);
    expect(refused).toMatchObject({ source: 'ingress', reason: failed.reason });
    // not redelivered: the ingress message is gone and was never queued again
    expect(await depth(fanin.provisioned.queueUrls.ingress)).toBe(0);
    expect(fanin.sentInputs('ingress')).toHaveLength(3);
    expect(await fanin.deadLetters()).toEqual({});
    // the checks cost no call: every URL was resolved by the first request and kept
    const lookups = fanin.probe.calls.slice(before).filter((c) => c.system && c.name === 'SQS.GetQueueUrl');
    expect(lookups).toEqual([]);
    // the deadline finds it closed: no second result
    fanin.clock.advance(120_000);
    await fanin.fireTimers();
    await fanin.sweep();
    // (the warm-up's aggregate times out, unanswered; NX-3 has no second output)
    expect((await fanin.outputs('timed-out')).map((o) => o.aggregateId)).toEqual(['NX-warm']);
    expect(await fanin.outputs('error')).toEqual([]);
    fanin.expectExactlyOneTerminalOutput('NX-3');
    await takeAll(fanin.targetUrl(r1));
    await takeAll(fanin.targetUrl(r2));

    // Act again: the URL the failed send proved gone is not kept, so the next request naming the
    // queue is refused before its aggregate opens
    await fanin.sendRequest({ definition: 'rl', aggregateId: 'NX-5', recipients: [gone] });
    await fanin.drain();

    // Assess (kills: a cached URL kept after the send said its queue is gone)
    expect(await fanin.ctx.store.getHeader('NX-5')).toBeUndefined();
    const again = await fanin.outputs('error');
    expect(again.map((e) => e.type)).toEqual(['fanin.error']);
    expect(String(again[0]?.reason)).toContain(`sending to queue ${gone} failed: the queue does not exist`);
  });

  it("a definition's own recipient whose queue does not exist: the aggregate ends failed at once, its result naming every recipient never asked (kills: a chunk marked asked before its queues were resolved)", async () => {
    // Act
    await fanin.sendRequest({ definition: 'rl-fixed', aggregateId: 'NX-6' });
    await fanin.drain();

    // Assess: nothing sent to the queue that exists either (every queue is resolved before any send)
    expect(await takeAll(fanin.targetUrl(fixed))).toEqual([]);
    const errors = await fanin.outputs('error');
    const failed = errors.find((e) => e.type === 'fanin.aggregate.failed');
    expect(errors.map((e) => e.type).sort()).toEqual(['fanin.aggregate.failed', 'fanin.error']);
    expect(failed).toMatchObject({ aggregateId: 'NX-6', outcome: 'failed', completedBy: 'failures' });
    expect(String(failed?.reason)).toContain(
      `sending to queue ${fixedMissing} failed: the queue does not exist`,
    );
    expect(failed?.missing).toEqual([
      { replyId: '0', label: fixed, asked: false },
      { replyId: '1', label: fixedMissing, asked: false },
    ]);
    expect(await depth(fanin.provisioned.queueUrls.ingress)).toBe(0);
  });

  it('the sender resolves every queue of a call before sending any: a missing one fails it, unfixable, with nothing sent (kills: the sender sends target by target as it resolves them)', async () => {
    // Prepare: the queue that exists comes first
    const sqs = createSqsClient();
    const sender = new SqsRequestSender({ sqs });
    const sub = (target: string) => ({
      target,
      body: '{}',
      attributes: {},
      deduplicationId: 'd',
      groupId: 'g',
    });

    // Act
    const error = await sender.send([sub(r1), sub(missing)]).catch((e: unknown) => e);

    // Assess
    expect(error).toBeInstanceOf(SendFailedError);
    expect(error).toMatchObject({ queue: missing, retryable: false });
    expect(await takeAll(fanin.targetUrl(r1))).toEqual([]);
    sqs.destroy();
  });

  it("a request's deadline timer is armed even when its sub-requests' send fails and is retried (kills: deadline armed only after every sub-request was sent)", async () => {
    // Prepare: the send to the recipient fails once (a retryable fault)
    fanin.probe.crashAt({ name: 'SQS.SendMessageBatch', queueRole: 'target:atk1-r1' }, 'before');

    // Act: the failed record is redelivered (after ingress's visibility timeout, on the test clock)
    await fanin.sendRequest({ definition: 'rl', aggregateId: 'NX-4', recipients: [r1] });
    await fanin.drain();

    // Assess: the first attempt's send failed, yet that attempt armed the deadline timer (before
    // the retry's send, not only once a send succeeded), for the deadline the header keeps
    expect(fanin.probe.disarm()).toBeDefined();
    const header = await fanin.ctx.store.getHeader('NX-4');
    const mentions = (c: { input: unknown }) => JSON.stringify(c.input).includes('NX-4');
    const sends = fanin.probe.calls.filter(
      (c) => c.system && c.name === 'SQS.SendMessageBatch' && c.queueRole === 'target:atk1-r1' && mentions(c),
    );
    const timers = fanin.probe.calls.filter((c) => c.system && c.queueRole === 'timer' && mentions(c));
    expect(sends.map((c) => c.crashed ?? 'ok')).toEqual(['before', 'ok']);
    expect(timers.length).toBeGreaterThan(0);
    expect(timers[0]?.seq).toBeLessThan(sends[1]?.seq ?? 0);
    expect(JSON.stringify(timers[0]?.input)).toContain(String(header?.deadline));
  });
});
