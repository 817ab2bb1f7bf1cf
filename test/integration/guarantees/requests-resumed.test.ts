import { ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { POINTER_CLASS } from '../../../shared/adapters/s3-claim-check.ts';
import { aws } from '../../support/clients.ts';
import { FaninUnderTest, takeAll } from '../../support/fanin.ts';

/**
 * A request that finds its aggregate already open is a retry only if it is the same request:
 * same request id, definition, expected count, parameters and sub-requests. Anything else is
 * refused to the error output and leaves the aggregate — its definition, its stored request,
 * the bodies it references in the payload bucket — exactly as the first request opened it.
 */
describe('a request resuming an aggregate', () => {
  let fanin: FaninUnderTest;
  let worker: string;
  let serial = 0;
  const nextId = (what: string) => {
    serial += 1;
    return `${what}-${serial}`;
  };

  beforeAll(async () => {
    fanin = await FaninUnderTest.start(
      [
        { name: 'every', fanOut: { type: 'none' }, completion: { strategy: 'all' }, timeoutSeconds: 600 },
        { name: 'fastest', fanOut: { type: 'none' }, completion: { strategy: 'first' }, timeoutSeconds: 600 },
        {
          name: 'noted',
          fanOut: { type: 'none' },
          completion: { strategy: 'all' },
          aggregation: { algorithm: 'custom', expression: 'request.body.note' },
          timeoutSeconds: 600,
        },
        {
          name: 'split',
          fanOut: { type: 'splitter', itemsPath: '$.items', target: 'resumed-worker' },
          completion: { strategy: 'all' },
          timeoutSeconds: 600,
        },
      ],
      // Any stored request over 100 bytes is kept in the payload bucket (state/…).
      { claimCheckThresholdBytes: 200_000, overrides: { maxReplyBytes: 100 } },
    );
    worker = await fanin.targetQueue('resumed-worker', true);
  });
  afterAll(() => fanin.stop());

  /** The error outputs of the ingress whose reason matches. */
  const ingressErrors = async (reason: RegExp) =>
    (await fanin.outputs('error')).filter((e) => e.source === 'ingress' && reason.test(String(e.reason)));

  it('a retried request naming another definition is refused and the aggregate keeps its definition', async () => {
    // Prepare: an `all` aggregate of 3, one reply in
    const id = nextId('switch');
    await fanin.sendRequest({ definition: 'every', aggregateId: id, requestId: 'r-switch', expected: 3 });
    await fanin.drain();
    await fanin.sendReply({ n: 0 }, { 'fanin-aggregate-id': id, 'fanin-reply-id': '0' });
    await fanin.drain();

    // Act: the "retry" names a `first` definition
    await fanin.sendRequest({ definition: 'fastest', aggregateId: id, requestId: 'r-switch', expected: 3 });
    await fanin.drain();

    // Assess (mutant killed: a retry recognised by its request id alone): refused with the reason,
    // nothing published for the aggregate, its header as the first request wrote it
    const errors = await ingressErrors(/retried with another plan/);
    expect(errors).toHaveLength(1);
    expect(String(errors[0]?.reason)).toContain('definition "fastest", not "every"');
    fanin.expectNoTerminalOutput(id);
    expect(await fanin.ctx.store.getHeader(id)).toMatchObject({
      definition: 'every',
      status: 'open',
      expected: 3,
    });

    // and the aggregate still ends by its own definition, when all three are in
    await fanin.sendReply({ n: 1 }, { 'fanin-aggregate-id': id, 'fanin-reply-id': '1' });
    await fanin.sendReply({ n: 2 }, { 'fanin-aggregate-id': id, 'fanin-reply-id': '2' });
    await fanin.drain();
    const { output } = fanin.expectExactlyOneTerminalOutput(id);
    expect(output).toMatchObject({
      completedBy: 'all-arrived',
      definition: 'every',
      counts: { received: 3 },
    });
  });

  it('a retried request with another expected count is refused and the aggregate keeps its count', async () => {
    // Prepare
    const id = nextId('count');
    await fanin.sendRequest({ definition: 'every', aggregateId: id, requestId: 'r-count', expected: 3 });
    await fanin.drain();

    // Act
    await fanin.sendRequest({ definition: 'every', aggregateId: id, requestId: 'r-count', expected: 1 });
    await fanin.drain();
    await fanin.sendReply({ n: 0 }, { 'fanin-aggregate-id': id, 'fanin-reply-id': '0' });
    await fanin.drain();

    // Assess (mutant killed: the digest leaves out the expected count)
    const errors = await ingressErrors(/retried with another plan/);
    expect(errors.map((e) => String(e.reason))).toEqual([expect.stringContaining('expected 1, not 3')]);
    fanin.expectNoTerminalOutput(id);
    expect(await fanin.ctx.store.getHeader(id)).toMatchObject({ status: 'open', expected: 3 });
  });

  it('a retried splitter request with other items is refused and sends no sub-request under the aggregate', async () => {
    // Prepare: the first request's two sub-requests taken by the worker
    const id = nextId('items');
    await fanin.sendRequest({
      definition: 'split',
      aggregateId: id,
      requestId: 'r-items',
      items: [{ a: 1 }, { a: 2 }],
    });
    await fanin.drain();
    const first = await takeAll(fanin.targetUrl(worker));
    expect(first.map((m) => m.Body)).toEqual(['{"a":1}', '{"a":2}']);

    // Act: same id, same count, other bodies
    await fanin.sendRequest({
      definition: 'split',
      aggregateId: id,
      requestId: 'r-items',
      items: [{ a: 9 }, { a: 8 }],
    });
    await fanin.drain();

    // Assess (mutant killed: the digest leaves out the sub-requests' bodies)
    expect(await ingressErrors(/retried with another plan/)).toHaveLength(1);
    expect(await takeAll(fanin.targetUrl(worker))).toEqual([]);
  });

  it('a retry that repeats the request, its JSON keys in another order, resumes the aggregate without an error', async () => {
    // Prepare
    const id = nextId('same');
    await fanin.sendRequest({
      definition: 'split',
      aggregateId: id,
      requestId: 'r-same',
      items: [{ a: 1, b: 2 }],
    });
    await fanin.drain();
    await takeAll(fanin.targetUrl(worker));

    // Act
    await fanin.sendRequest({
      items: [{ b: 2, a: 1 }],
      requestId: 'r-same',
      aggregateId: id,
      definition: 'split',
    });
    await fanin.drain();

    // Assess (mutant killed: object keys hashed in the order they came)
    expect((await fanin.outputs('error')).filter((e) => e.source === 'ingress')).toEqual([]);
    const resent = await takeAll(fanin.targetUrl(worker));
    expect(resent.map((m) => m.MessageAttributes?.['fanin-reply-id']?.StringValue)).toEqual(['0']);
  });

  it.each([
    ['another request id', 'r-thief'],
    ['the same request id', 'r-victim'],
  ])(
    'a request refused for an aggregate id in use under %s leaves the stored request of that aggregate untouched',
    async (_, thiefRequestId) => {
      // Prepare: the victim's request, large enough to be kept in the payload bucket
      const id = nextId('stored');
      const pad = 'v'.repeat(500);
      await fanin.sendRequest({
        definition: 'noted',
        aggregateId: id,
        requestId: 'r-victim',
        expected: 1,
        note: 'victim',
        pad,
      });
      await fanin.drain();
      const bucket = fanin.provisioned.bucketName as string;
      const { Contents = [] } = await aws.s3.send(
        new ListObjectsV2Command({ Bucket: bucket, Prefix: 'state/' }),
      );
      expect(Contents.length).toBeGreaterThan(0);

      // Act: a request for the same aggregate id, refused
      await fanin.sendRequest({
        definition: 'noted',
        aggregateId: id,
        requestId: thiefRequestId,
        expected: 1,
        note: 'thief',
        pad,
      });
      await fanin.drain();
      await fanin.sendReply({ n: 0 }, { 'fanin-aggregate-id': id, 'fanin-reply-id': '0' });
      await fanin.drain();

      // Assess (mutant killed: the stored request's object keyed by the aggregate id alone):
      // the refusal on the error output, the result built from the victim's request
      expect(await ingressErrors(/already in use by another request|retried with another plan/)).toHaveLength(
        1,
      );
      const { output } = fanin.expectExactlyOneTerminalOutput(id);
      expect(output).toMatchObject({ type: 'fanin.aggregate.completed', result: 'victim' });
    },
  );

  it('a duplicate reply with another large body leaves the body its aggregate recorded untouched', async () => {
    // Prepare: reply 0 recorded, its body kept in the payload bucket
    const id = nextId('dup-body');
    await fanin.sendRequest({ definition: 'every', aggregateId: id, expected: 2 });
    await fanin.drain();
    await fanin.sendReply(
      { who: 'first', pad: 'f'.repeat(500) },
      { 'fanin-aggregate-id': id, 'fanin-reply-id': '0' },
    );
    await fanin.drain();

    // Act: the same reply id again, another body (a duplicate: dropped), then the last reply
    await fanin.sendReply(
      { who: 'second', pad: 's'.repeat(500) },
      { 'fanin-aggregate-id': id, 'fanin-reply-id': '0' },
    );
    await fanin.drain();
    await fanin.sendReply({ who: 'last' }, { 'fanin-aggregate-id': id, 'fanin-reply-id': '1' });
    await fanin.drain();

    // Assess (mutant killed: a stored body's object keyed by its ids alone)
    const { output } = fanin.expectExactlyOneTerminalOutput(id);
    expect(output).toMatchObject({
      result: [
        { replyId: '0', body: { who: 'first' } },
        { replyId: '1', body: { who: 'last' } },
      ],
    });
  });

  it('a claim-checked request whose requestId is 450,000 characters goes to the error output, not the DLQ', async () => {
    // Prepare: the request in the payload bucket, as an Extended Client producer sends it
    const id = nextId('long-rid');
    const bucket = fanin.provisioned.bucketName as string;
    const payload = JSON.stringify({
      definition: 'every',
      aggregateId: id,
      requestId: 'r'.repeat(450_000),
      expected: 1,
    });
    await aws.s3.send(new PutObjectCommand({ Bucket: bucket, Key: `incoming/${id}`, Body: payload }));

    // Act
    await aws.sqs.send(
      new SendMessageCommand({
        QueueUrl: fanin.provisioned.queueUrls.ingress,
        MessageBody: JSON.stringify([POINTER_CLASS, { s3BucketName: bucket, s3Key: `incoming/${id}` }]),
        MessageAttributes: {
          ExtendedPayloadSize: { DataType: 'Number', StringValue: String(Buffer.byteLength(payload)) },
        },
      }),
    );
    await fanin.drain();

    // Assess (mutant killed: no bound on the request id)
    const errors = await ingressErrors(/requestId is 450000 characters, more than the 256 allowed/);
    expect(errors).toHaveLength(1);
    expect(await fanin.ctx.store.getHeader(id)).toBeUndefined();
    expect(await fanin.deadLetters()).toEqual({});
  });
});
