import { ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { startFauxqs } from 'fauxqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ClaimCheckError,
  ClaimCheckRefusedError,
  POINTER_CLASS,
  PRODUCER_PREFIX,
  S3ClaimCheck,
} from '../../../shared/adapters/s3-claim-check.ts';
import { FaninClient } from '../../../shared/client/fanin-client.ts';
import { BadMessageError } from '../../../shared/errors.ts';
import { aws } from '../../support/clients.ts';
import { FaninUnderTest, takeAll } from '../../support/fanin.ts';

const MIB = 1024 * 1024;

/**
 * Two delivery paths: small payloads inline in SQS, large ones by claim check in S3 in
 * the SQS Extended Client's pointer format; each path fails on its own.
 */
describe('claim check', () => {
  let fanin: FaninUnderTest;
  let worker: string;
  let client: FaninClient;
  let claimCheck: S3ClaimCheck;

  beforeAll(async () => {
    fanin = await FaninUnderTest.start(
      [
        {
          name: 'render',
          fanOut: { type: 'splitter', itemsPath: '$.pages', target: 'placeholder' },
          completion: { strategy: 'all' },
          timeoutSeconds: 600,
        },
      ],
      { claimCheckThresholdBytes: 64 * 1024 },
    );
    worker = await fanin.targetQueue('worker');
    const render = fanin.topology.definitions.get('render');
    if (render?.fanOut?.type === 'splitter') Object.assign(render.fanOut, { target: worker });
    fanin.buildContext();
    claimCheck = new S3ClaimCheck({
      s3: aws.s3,
      bucket: fanin.provisioned.bucketName ?? '',
      thresholdBytes: 64 * 1024,
    });
    client = new FaninClient({
      sqs: aws.sqs,
      ingressQueueUrl: fanin.provisioned.queueUrls.ingress,
      replies: fanin.destination(),
      claimCheck,
    });
  });
  afterAll(() => fanin.stop());

  it('a 5 MiB payload round-trips: request, sub-request, reply and result all travel by claim check', async () => {
    // Prepare
    const big = 'x'.repeat(5 * MIB);
    await client.sendRequest(
      'render',
      {
        pages: [
          { page: 1, data: big },
          { page: 2, data: 'small' },
        ],
      },
      { aggregateId: 'r-1' },
    );
    await fanin.drain();

    // Act
    const subs = await client.receive(fanin.targetUrl(worker));
    for (const sub of subs) {
      const page = sub.body as { page: number; data: string };
      await client.reply(sub, { page: page.page, length: page.data.length, echo: page.data });
      await client.ack(sub);
    }
    await fanin.drain();

    // Assess
    expect(subs.map((s) => (s.body as { data: string }).data.length).sort((a, b) => a - b)).toEqual([
      5,
      5 * MIB,
    ]);
    const [output] = await client.receive(fanin.provisioned.queueUrls.completed);
    const result =
      (output?.body as { result: { body: { length: number; echo: string } }[] } | undefined)?.result ?? [];
    expect(result.map((r) => r.body.length)).toEqual([5 * MIB, 5]);
    expect(result[0]?.body.echo).toBe(big);
    // The producer's and the responder's objects under incoming/ (the only prefix fanin follows
    // pointers to), the sub-request under requests/, the result under outputs/.
    const keys = (
      (await aws.s3.send(new ListObjectsV2Command({ Bucket: fanin.provisioned.bucketName }))).Contents ?? []
    ).map((o) => (o.Key ?? '').replace(/[^/]*$/, ''));
    expect(new Set(keys)).toEqual(new Set(['incoming/', 'requests/', 'outputs/', 'state/']));
  });

  it('reads a message an Extended Client library wrote under the producer prefix (pointer body + ExtendedPayloadSize)', async () => {
    // Prepare: what the Java/Python Extended Client puts on the queue for a large reply
    await fanin.sendRequest({ definition: 'render', aggregateId: 'r-2', pages: [{ page: 1 }] });
    await fanin.drain();
    const [sub] = await takeAll(fanin.targetUrl(worker));
    const payload = JSON.stringify({ from: 'java', data: 'y'.repeat(300_000) });
    await aws.s3.send(
      new PutObjectCommand({ Bucket: fanin.provisioned.bucketName, Key: 'incoming/ext-1', Body: payload }),
    );
    const attrs = sub?.MessageAttributes ?? {};

    // Act
    await aws.sqs.send(
      new SendMessageCommand({
        QueueUrl: attrs['fanin-reply-to']?.StringValue,
        MessageBody: JSON.stringify([
          POINTER_CLASS,
          { s3BucketName: fanin.provisioned.bucketName, s3Key: 'incoming/ext-1' },
        ]),
        MessageAttributes: {
          'fanin-aggregate-id': { DataType: 'String', StringValue: 'r-2' },
          'fanin-reply-id': { DataType: 'String', StringValue: '0' },
          ExtendedPayloadSize: { DataType: 'Number', StringValue: String(payload.length) },
        },
      }),
    );
    await fanin.drain();

    // Assess
    const [output] = await client.receive(fanin.provisioned.queueUrls.completed);
    expect((output?.body as { result: { body: { from: string } }[] } | undefined)?.result[0]?.body.from).toBe(
      'java',
    );
  });

  it('with S3 unreachable, large sends fail at once with a clear error while small ones keep flowing', async () => {
    // Prepare: a claim check whose S3 is a stopped emulator (nothing listens on its port)
    const stopped = await startFauxqs({ port: 0, logger: false });
    const deadEndpoint = stopped.address;
    await stopped.stop();
    const deadS3 = new S3Client({ endpoint: deadEndpoint, forcePathStyle: true, maxAttempts: 1 });
    const broken = new FaninClient({
      sqs: aws.sqs,
      ingressQueueUrl: fanin.provisioned.queueUrls.ingress,
      claimCheck: new S3ClaimCheck({ s3: deadS3, bucket: 'gone', thresholdBytes: 64 * 1024 }),
    });

    // Act
    const large = await broken
      .sendRequest('render', { pages: [{ data: 'z'.repeat(100_000) }] })
      .catch((e: unknown) => e);
    const small = await broken.sendRequest('render', { pages: [{ data: 'ok' }] }, { aggregateId: 'r-3' });

    // Assess
    expect(large).toBeInstanceOf(ClaimCheckError);
    expect((large as Error).message).toContain('s3://gone/');
    expect(small).toEqual(expect.any(String));
    await fanin.drain();
    expect((await fanin.ctx.store.getHeader('r-3'))?.expected).toBe(1);
    await takeAll(fanin.targetUrl(worker));
  });

  it('decode follows a pointer only into its own bucket and under the accepted prefixes, refusing the rest as bad input', async () => {
    // Prepare
    const bucket = fanin.provisioned.bucketName ?? '';
    await aws.s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'incoming/ok', Body: '{"ok":true}' }));
    const size = { ExtendedPayloadSize: '11' };
    const at = (s3BucketName: string, s3Key: string) =>
      JSON.stringify([POINTER_CLASS, { s3BucketName, s3Key }]);

    // Act
    const refused = await Promise.all(
      [
        at('another-bucket', 'incoming/ok'),
        at(bucket, 'state/0123'),
        at(bucket, 'outputs/0123'),
        at(bucket, 'incoming/'),
      ].map((body) => claimCheck.decode(body, size).catch((e: unknown) => e)),
    );

    // Assess
    expect(PRODUCER_PREFIX).toBe('incoming/');
    expect(await claimCheck.decode(at(bucket, 'incoming/ok'), size)).toBe('{"ok":true}');
    for (const error of refused) {
      expect(error).toBeInstanceOf(ClaimCheckRefusedError);
      expect(error).toBeInstanceOf(BadMessageError);
    }
    expect((refused[0] as Error).message).toContain('s3://another-bucket/incoming/ok refused');
    expect((refused[1] as Error).message).toContain('only name a key under incoming/');
  });
});
