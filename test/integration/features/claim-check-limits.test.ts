import { PutObjectCommand } from '@aws-sdk/client-s3';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  ClaimCheckRefusedError,
  MAX_POINTER_PAYLOAD_BYTES,
  POINTER_CLASS,
  S3ClaimCheck,
} from '../../../shared/adapters/s3-claim-check.ts';
import { aws } from '../../support/clients.ts';
import { FaninUnderTest } from '../../support/fanin.ts';

const MIB = 1024 * 1024;

/**
 * A producer's claim-check pointer may name an object of any size (the Extended Client allows
 * 2 GB): fanin reads one only up to its documented maximum, checking the size the message declares
 * before asking S3 and the object's real size before reading its body, and refuses anything
 * beyond as bad input with the reason (the error output, never the DLQ).
 */
describe('a claim-check pointer to a payload beyond the maximum', () => {
  let fanin: FaninUnderTest;

  beforeAll(async () => {
    fanin = await FaninUnderTest.start(
      [{ name: 'big', fanOut: { type: 'none' }, completion: { strategy: 'all' }, timeoutSeconds: 60 }],
      { claimCheckThresholdBytes: 262_144 },
    );
  });
  afterEach(() => {
    fanin.buildContext();
  });
  afterAll(() => fanin.stop());

  /** Puts `payload` under `key` of fanin's bucket and sends a request pointing at it, declaring `declared` bytes. */
  const sendPointerRequest = async (key: string, payload: string, declared: number) => {
    const bucket = fanin.provisioned.bucketName as string;
    await aws.s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: payload }));
    await aws.sqs.send(
      new SendMessageCommand({
        QueueUrl: fanin.provisioned.queueUrls.ingress,
        MessageBody: JSON.stringify([POINTER_CLASS, { s3BucketName: bucket, s3Key: key }]),
        MessageAttributes: { ExtendedPayloadSize: { DataType: 'Number', StringValue: String(declared) } },
      }),
    );
  };
  /** The system's own S3 client (its calls are the probe's). */
  const systemS3 = () => {
    const { s3 } = fanin.clients;
    if (!s3) throw new Error('this run has no payload bucket');
    return s3;
  };
  const errorsFrom = async (source: string) =>
    (await fanin.outputs('error')).filter((o) => o.type === 'fanin.error' && o.source === source);
  const readsOf = (since: number, key: string) =>
    fanin.probe
      .callsAfter(since)
      .filter((c) => c.system && c.name === 'S3.GetObject' && (c.input as { Key?: string }).Key === key);

  it('is refused by the size it declares by the claim check itself, for every reader of pointers, before S3 is asked', async () => {
    // Prepare: a small object, a pointer to it declaring 3 GB (what the client and the CLI decode too)
    const bucket = fanin.provisioned.bucketName as string;
    await aws.s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'incoming/declared-3gb', Body: '{}' }));
    const claimCheck = new S3ClaimCheck({ s3: systemS3(), bucket });
    const since = fanin.probe.now;

    // Act
    const decoded = claimCheck.decode(
      JSON.stringify([POINTER_CLASS, { s3BucketName: bucket, s3Key: 'incoming/declared-3gb' }]),
      { ExtendedPayloadSize: '3000000000' },
    );

    // Assess (mutant killed: the claim check's declared size unchecked — it reads the object)
    await expect(decoded).rejects.toThrow(
      `its payload declares 3000000000 bytes, more than the ${MAX_POINTER_PAYLOAD_BYTES} fanin reads`,
    );
    await expect(decoded).rejects.toBeInstanceOf(ClaimCheckRefusedError);
    expect(readsOf(since, 'incoming/declared-3gb')).toEqual([]);
  });

  it('is refused by the object’s real size when it declares less, before its body is read', async () => {
    // Prepare: a maximum of 1 MiB; a 2 MiB request that declares 100 bytes
    fanin.buildContext({
      payloads: new S3ClaimCheck({
        s3: systemS3(),
        bucket: fanin.provisioned.bucketName as string,
        maxPayloadBytes: MIB,
      }),
    });
    const request = JSON.stringify({
      definition: 'big',
      aggregateId: 'real-huge',
      expected: 1,
      padding: 'x'.repeat(2 * MIB),
    });
    await sendPointerRequest('incoming/real-huge', request, 100);

    // Act
    await fanin.drain();

    // Assess (mutant killed: the object's ContentLength unchecked — the body is read up to the
    // maximum before it is refused, and the reason cannot say the object's size)
    const errors = await errorsFrom('ingress');
    const error = errors.find((e) => String(e.reason).includes('incoming/real-huge'));
    expect(String(error?.reason)).toContain(
      `its payload is ${Buffer.byteLength(request)} bytes, more than the ${MIB} fanin reads`,
    );
    expect(await fanin.ctx.store.getHeader('real-huge')).toBeUndefined();
    expect(await fanin.deadLetters()).toEqual({});
  });

  it('naming an object that is not there goes to the error output with the reason, not round to the DLQ', async () => {
    // Prepare: a pointer under incoming/ to a key nobody wrote (S3 reads its writes: it will not appear)
    const bucket = fanin.provisioned.bucketName as string;
    await aws.sqs.send(
      new SendMessageCommand({
        QueueUrl: fanin.provisioned.queueUrls.ingress,
        MessageBody: JSON.stringify([
          POINTER_CLASS,
          { s3BucketName: bucket, s3Key: 'incoming/never-written' },
        ]),
        MessageAttributes: { ExtendedPayloadSize: { DataType: 'Number', StringValue: '100' } },
      }),
    );

    // Act
    await fanin.drain();

    // Assess (mutant killed: a missing object retried like an S3 failure)
    const error = (await errorsFrom('ingress')).find((e) =>
      String(e.reason).includes('incoming/never-written'),
    );
    expect(String(error?.reason)).toContain('refused: no such object');
    expect(await fanin.deadLetters()).toEqual({});
  });

  it('declaring a size that is not a whole number of bytes is refused before S3 is asked', async () => {
    // Prepare
    const bucket = fanin.provisioned.bucketName as string;
    await aws.s3.send(
      new PutObjectCommand({ Bucket: bucket, Key: 'incoming/declared-negative', Body: '{}' }),
    );
    const claimCheck = new S3ClaimCheck({ s3: systemS3(), bucket });
    const since = fanin.probe.now;

    // Act
    const decoded = claimCheck.decode(
      JSON.stringify([POINTER_CLASS, { s3BucketName: bucket, s3Key: 'incoming/declared-negative' }]),
      { ExtendedPayloadSize: '-1' },
    );

    // Assess (mutant killed: any declared size taken)
    await expect(decoded).rejects.toThrow('its declared size -1 is not a whole number of bytes');
    await expect(decoded).rejects.toBeInstanceOf(ClaimCheckRefusedError);
    expect(readsOf(since, 'incoming/declared-negative')).toEqual([]);
  });
});
