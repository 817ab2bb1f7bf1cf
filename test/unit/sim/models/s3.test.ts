import { describe, expect, it } from 'vitest';
import { S3ClaimCheck } from '../../../../shared/adapters/s3-claim-check.ts';
import { clientsOver, DynamoDbModel, S3Model, SqsModel } from '../../../../sim/models/index.ts';
import { T0, world } from './fixtures.ts';

/**
 * The S3 model's own fast test: the body read once as the claim check reads it, and lifecycle
 * expiration, which fauxqs does not model at all (the conformance test covers put, get, head and
 * NoSuchKey).
 */

describe('the S3 model', () => {
  it('gives a body the claim check reads as a stream, once, and expires objects only after their lifecycle days', async () => {
    const w = world([0.99]);
    const s3 = new S3Model({ ...w, expireAfterDays: { '': 2 } });
    s3.handle('CreateBucketCommand', { Bucket: 'b' });
    const clients = clientsOver({ dynamodb: new DynamoDbModel(w), sqs: new SqsModel(w), s3 });
    const claimCheck = new S3ClaimCheck({ s3: clients.s3 as NonNullable<typeof clients.s3>, bucket: 'b' });
    const payload = 'é'.repeat(100_000);
    const pointer = await claimCheck.put('incoming/p', payload);
    const body = JSON.stringify(['software.amazon.payloadoffloading.PayloadS3Pointer', pointer]);
    expect(await claimCheck.decode(body, { ExtendedPayloadSize: String(Buffer.byteLength(payload)) })).toBe(
      payload,
    );
    const { Body } = s3.handle('GetObjectCommand', { Bucket: 'b', Key: 'incoming/p' });
    await Body.transformToString();
    await expect(Body.transformToString()).rejects.toThrow('already been transformed');
    // Due at the midnight UTC after two days; a sweep may spare it, a full one deletes it.
    const day = 24 * 3600 * 1000;
    const due = Math.ceil((T0 + 2 * day) / day) * day;
    expect(s3.expireAll(due - 1)).toBe(0);
    expect(s3.expireSome(due)).toBe(0);
    expect(s3.expireAll(due)).toBe(1);
    expect(s3.keys('b')).toEqual([]);
  });

  it('expires an object at the midnight UTC after its creation plus the days of the rule, as S3 documents', () => {
    // S3's example: created 2014-01-15 10:30 UTC with a 3-day rule, expired from 2014-01-19 00:00 UTC.
    let now = Date.parse('2014-01-15T10:30:00Z');
    const s3 = new S3Model({ clock: () => now, random: () => 0, expireAfterDays: { 'incoming/': 3 } });
    s3.handle('CreateBucketCommand', { Bucket: 'b' });
    s3.handle('PutObjectCommand', { Bucket: 'b', Key: 'incoming/x', Body: 'x' });
    s3.handle('PutObjectCommand', { Bucket: 'b', Key: 'kept/y', Body: 'y' });
    now = Date.parse('2014-01-18T23:59:59.999Z');
    expect(s3.expireAll()).toBe(0);
    now = Date.parse('2014-01-19T00:00:00Z');
    expect(s3.expireAll()).toBe(1);
    expect(s3.keys('b')).toEqual(['kept/y']);
  });

  it('applies the shorter expiration when two rules match a key', () => {
    let now = Date.parse('2014-01-15T10:30:00Z');
    const s3 = new S3Model({ clock: () => now, random: () => 0, expireAfterDays: { '': 10, 'tmp/': 1 } });
    s3.handle('CreateBucketCommand', { Bucket: 'b' });
    s3.handle('PutObjectCommand', { Bucket: 'b', Key: 'tmp/x', Body: 'x' });
    s3.handle('PutObjectCommand', { Bucket: 'b', Key: 'other', Body: 'y' });
    now = Date.parse('2014-01-17T00:00:00Z');
    expect(s3.expireAll()).toBe(1);
    expect(s3.keys('b')).toEqual(['other']);
  });

  it('says NoSuchKey for a missing key and NoSuchBucket for a missing bucket', () => {
    const s3 = new S3Model(world());
    s3.handle('CreateBucketCommand', { Bucket: 'b' });
    expect(() => s3.handle('GetObjectCommand', { Bucket: 'b', Key: 'none' })).toThrow(
      expect.objectContaining({ name: 'NoSuchKey' }),
    );
    expect(() => s3.handle('GetObjectCommand', { Bucket: 'none', Key: 'k' })).toThrow(
      expect.objectContaining({ name: 'NoSuchBucket' }),
    );
  });
});
