/**
 * An in-memory, synchronous, deterministic model of the S3 calls fanin makes: CreateBucket,
 * PutObject, GetObject, HeadObject, DeleteObject, with the SDK's error classes (`NoSuchKey`,
 * `NoSuchBucket`, and `NotFound` for a HEAD, whose answer has no body, so the SDK's message is
 * `UnknownError`), a GetObject body that reads like the SDK's (once: by `transformToString()` or
 * as an async iterable of chunks), and the bucket's lifecycle expiration: an object may be deleted at any moment after the
 * midnight UTC that follows its age reaching the rule's days.
 */
import { createHash } from 'node:crypto';
import { BucketAlreadyOwnedByYou, NoSuchBucket, NoSuchKey, NotFound } from '@aws-sdk/client-s3';
import { sdkError, unmodelled } from './errors.ts';

/** Options of {@link S3Model}. */
export interface S3ModelOptions {
  readonly clock: () => number;
  readonly random: () => number;
  /**
   * Lifecycle expiration by key prefix, in days (the stack sets one rule for the whole payload
   * bucket: `{ '': days }`). A prefix applies to every bucket. @default none: objects never expire
   */
  readonly expireAfterDays?: Readonly<Record<string, number>>;
  /** How likely each due object is deleted on one {@link S3Model.expireSome}. @default 0.5 */
  readonly expiryProbability?: number;
}

interface StoredObject {
  readonly body: Uint8Array;
  readonly contentType?: string;
  readonly etag: string;
  readonly lastModified: number;
  readonly metadata: Readonly<Record<string, string>>;
}

const DAY_MS = 24 * 3600 * 1000;

/** True when the S3 command changes state. */
export function isS3Write(commandName: string): boolean {
  return ['PutObjectCommand', 'DeleteObjectCommand', 'CreateBucketCommand'].includes(commandName);
}

/** The body of a GetObject answer: read once, as the SDK's stream is, whole or chunk by chunk. */
export function bodyOf(bytes: Uint8Array): AsyncIterable<Uint8Array> & {
  transformToString(encoding?: BufferEncoding): Promise<string>;
  transformToByteArray(): Promise<Uint8Array>;
} {
  let read = false;
  const take = () => {
    if (read) throw new Error('The stream has already been transformed.');
    read = true;
    return bytes;
  };
  return {
    transformToString: async (encoding: BufferEncoding = 'utf8') => Buffer.from(take()).toString(encoding),
    transformToByteArray: async () => new Uint8Array(take()),
    // As a Node stream of the SDK yields: chunks of at most 64 KiB.
    async *[Symbol.asyncIterator]() {
      const all = take();
      for (let i = 0; i < all.length; i += BODY_CHUNK_BYTES)
        yield new Uint8Array(all.subarray(i, i + BODY_CHUNK_BYTES));
    },
  };
}

/** The chunk size of a body read as a stream. */
const BODY_CHUNK_BYTES = 64 * 1024;

/** The S3 model. */
export class S3Model {
  private readonly buckets = new Map<string, Map<string, StoredObject>>();
  private readonly clock: () => number;
  private readonly random: () => number;
  private readonly rules: Readonly<Record<string, number>>;
  private readonly expiryProbability: number;

  public constructor(options: S3ModelOptions) {
    this.clock = options.clock;
    this.random = options.random;
    this.rules = options.expireAfterDays ?? {};
    this.expiryProbability = options.expiryProbability ?? 0.5;
  }

  /** Runs one command with its SDK input. */
  // biome-ignore lint/suspicious/noExplicitAny: commands of every shape pass through here
  public handle(commandName: string, input: any): any {
    const request = (input ?? {}) as Record<string, unknown>;
    const name = commandName.replace(/Command$/, '');
    if (name === 'CreateBucket') {
      const bucket = String(request.Bucket ?? '');
      if (this.buckets.has(bucket)) {
        throw sdkError(
          BucketAlreadyOwnedByYou,
          'Your previous request to create the named bucket succeeded and you already own it.',
          {},
          409,
        );
      }
      this.buckets.set(bucket, new Map());
      return { Location: `/${bucket}` };
    }
    const objects = this.buckets.get(String(request.Bucket ?? ''));
    if (!objects) {
      if (name === 'HeadObject') throw sdkError(NotFound, 'UnknownError', {}, 404);
      throw sdkError(
        NoSuchBucket,
        'The specified bucket does not exist',
        { BucketName: request.Bucket },
        404,
      );
    }
    const key = String(request.Key ?? '');
    if (Buffer.byteLength(key) > 1024) throw unmodelled('s3', 'KeyTooLongError', 'Your key is too long');
    switch (name) {
      case 'PutObject': {
        const body = toBytes(request.Body);
        const etag = `"${createHash('md5').update(body).digest('hex')}"`;
        objects.set(key, {
          body,
          etag,
          lastModified: this.clock(),
          metadata: { ...((request.Metadata ?? {}) as Record<string, string>) },
          ...(typeof request.ContentType === 'string' ? { contentType: request.ContentType } : {}),
        });
        return { ETag: etag };
      }
      case 'GetObject':
      case 'HeadObject': {
        const object = objects.get(key);
        if (!object) {
          if (name === 'HeadObject') throw sdkError(NotFound, 'UnknownError', {}, 404);
          throw sdkError(NoSuchKey, 'The specified key does not exist.', { Key: key }, 404);
        }
        return {
          ...(name === 'GetObject' ? { Body: bodyOf(new Uint8Array(object.body)) } : {}),
          ContentLength: object.body.length,
          ContentType: object.contentType ?? 'application/octet-stream',
          ETag: object.etag,
          LastModified: new Date(object.lastModified),
          Metadata: { ...object.metadata },
        };
      }
      case 'DeleteObject':
        objects.delete(key);
        return {};
      default:
        throw unmodelled('s3', 'NotImplemented', `the S3 model does not implement ${name}`);
    }
  }

  /** The keys of a bucket's objects. */
  public keys(bucket: string): string[] {
    return [...(this.buckets.get(bucket)?.keys() ?? [])].sort();
  }

  /** An object's content as text, or undefined. */
  public text(bucket: string, key: string): string | undefined {
    const object = this.buckets.get(bucket)?.get(key);
    return object ? Buffer.from(object.body).toString('utf8') : undefined;
  }

  /**
   * Lifecycle at work: deletes, each at the model's random choice, some objects whose expiration
   * has come (the midnight UTC after their age reached a rule's days). @returns how many it deleted
   */
  public expireSome(now = this.clock()): number {
    return this.expire(now, this.expiryProbability);
  }

  /** Lifecycle having caught up: deletes every object whose expiration has come. */
  public expireAll(now = this.clock()): number {
    return this.expire(now, 1);
  }

  private expire(now: number, probability: number): number {
    let deleted = 0;
    for (const objects of this.buckets.values()) {
      for (const [key, object] of [...objects]) {
        const days = Object.entries(this.rules)
          .filter(([prefix]) => key.startsWith(prefix))
          .map(([, d]) => d);
        if (days.length === 0) continue;
        // S3 rounds an expiration up to the next midnight UTC.
        const due = Math.ceil((object.lastModified + Math.min(...days) * DAY_MS) / DAY_MS) * DAY_MS;
        if (due > now) continue;
        if (probability < 1 && this.random() >= probability) continue;
        objects.delete(key);
        deleted += 1;
      }
    }
    return deleted;
  }
}

function toBytes(body: unknown): Uint8Array {
  if (body === undefined || body === null) return new Uint8Array();
  if (typeof body === 'string') return new Uint8Array(Buffer.from(body, 'utf8'));
  if (body instanceof Uint8Array) return new Uint8Array(body);
  throw unmodelled('s3', 'InvalidRequest', 'the S3 model takes string or byte bodies only');
}
