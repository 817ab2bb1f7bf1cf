import { randomUUID } from 'node:crypto';
import { GetObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import type { MessageAttributeValue } from '@aws-sdk/client-sqs';
import { BadMessageError, FaninError } from '../errors.ts';

/** The pointer class of AWS's SQS Extended Client libraries (Java, Python, .NET). */
export const POINTER_CLASS = 'software.amazon.payloadoffloading.PayloadS3Pointer';
/** The attribute the Extended Client sets to the original payload size (Number). */
export const PAYLOAD_SIZE_ATTRIBUTE = 'ExtendedPayloadSize';
/** Older and sibling libraries' names for the same attribute; read, never written. */
const LEGACY_SIZE_ATTRIBUTES = ['SQSLargePayloadSize', 'AWSOffloadedPayloadSize'] as const;
/** The Extended Client's default threshold: 256 KiB of body and attributes. */
export const DEFAULT_THRESHOLD_BYTES = 262_144;
/**
 * The largest payload fanin reads through a claim-check pointer in a message: 16 MiB, the bound
 * the use cases also check the declared size against. The Extended Client allows 2 GB, but a
 * payload is held in memory whole (parsed, evaluated, kept in state; a handler has 512 MB by
 * default), so a pointer beyond this is bad input: refused with the reason before its object is
 * read, whatever size it declares, and never more than this many bytes of it are buffered.
 */
export const MAX_POINTER_PAYLOAD_BYTES = 16 * 1024 * 1024;

/**
 * Where producers put large payloads: the only keys a pointer in a message fanin consumes
 * (request, reply, control) may name, and the only prefix producers are granted.
 */
export const PRODUCER_PREFIX = 'incoming/';
/** Where fanin puts large sub-requests, for responders to read. */
export const SUB_REQUEST_PREFIX = 'requests/';
/** Where fanin puts large outputs, for consumers of the output queues to read. */
export const OUTPUT_PREFIX = 'outputs/';
/** Where fanin keeps large stored bodies (state that only fanin reads; never readable through a pointer). */
export const STATE_PREFIX = 'state/';
/**
 * What a reader of fanin's messages (a responder, a consumer of the outputs, the CLI) may follow
 * pointers to: what fanin writes for others and what producers write. Never {@link STATE_PREFIX}.
 */
export const READER_PREFIXES: readonly string[] = [PRODUCER_PREFIX, SUB_REQUEST_PREFIX, OUTPUT_PREFIX];

/**
 * A pointer that names an object the reader may not follow: another bucket, or a key outside
 * the accepted prefixes (e.g. another aggregate's stored body under `state/`, or an output).
 * Bad input: it goes to the error output with the reason and is never retried.
 */
export class ClaimCheckRefusedError extends BadMessageError {
  public constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'ClaimCheckRefusedError';
  }
}

/** The claim-check path failed (S3 unreachable, object missing): large messages only. */
export class ClaimCheckError extends FaninError {
  public constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'ClaimCheckError';
  }
}

/** An S3 location. */
export interface PayloadPointer {
  readonly s3BucketName: string;
  readonly s3Key: string;
}

/**
 * The two delivery paths over SQS and S3: inline, and by claim check. A payload up to the threshold travels
 * inline; a larger one is put in S3 and the SQS body carries the Extended Client's pointer
 * (`["software.amazon.payloadoffloading.PayloadS3Pointer", {"s3BucketName": …, "s3Key": …}]`
 * with attribute `ExtendedPayloadSize`), so Java/Python Extended Client readers understand
 * fanin's large messages and fanin reads theirs. Each path fails on its own: with S3 down, a
 * large send fails at once with a {@link ClaimCheckError} while small ones go on inline; a
 * message is never switched from one path to the other.
 */
export class S3ClaimCheck {
  private readonly s3: S3Client;
  private readonly bucket: string;
  private readonly threshold: number;
  private readonly keyPrefix: string;
  private readonly readablePrefixes: readonly string[];
  private readonly maxPayloadBytes: number;

  public constructor(options: {
    readonly s3: S3Client;
    readonly bucket: string;
    /** @default 262,144 (the Extended Client's) */
    readonly thresholdBytes?: number;
    /** Prefix of the keys {@link encode} generates. @default PRODUCER_PREFIX ('incoming/') */
    readonly keyPrefix?: string;
    /**
     * The key prefixes {@link decode} follows pointers to, in this bucket only. fanin's use
     * cases keep the default; readers of fanin's own messages pass {@link READER_PREFIXES}.
     * @default [PRODUCER_PREFIX]
     */
    readonly readablePrefixes?: readonly string[];
    /** The largest payload {@link decode} reads through a pointer. @default MAX_POINTER_PAYLOAD_BYTES (16 MiB) */
    readonly maxPayloadBytes?: number;
  }) {
    this.s3 = options.s3;
    this.bucket = options.bucket;
    this.threshold = options.thresholdBytes ?? DEFAULT_THRESHOLD_BYTES;
    this.keyPrefix = options.keyPrefix ?? PRODUCER_PREFIX;
    this.readablePrefixes = options.readablePrefixes ?? [PRODUCER_PREFIX];
    this.maxPayloadBytes = options.maxPayloadBytes ?? MAX_POINTER_PAYLOAD_BYTES;
  }

  /** Size of a message as SQS counts it: body plus attribute names, types and values. */
  public static messageSize(
    body: string,
    attributes: Readonly<Record<string, MessageAttributeValue>> = {},
  ): number {
    let size = Buffer.byteLength(body);
    for (const [name, value] of Object.entries(attributes)) {
      size += Buffer.byteLength(name) + Buffer.byteLength(value.DataType ?? '');
      size +=
        value.StringValue !== undefined
          ? Buffer.byteLength(value.StringValue)
          : (value.BinaryValue?.byteLength ?? 0);
    }
    return size;
  }

  /** True when a message of this size takes the claim-check path. */
  public isLarge(body: string, attributes?: Readonly<Record<string, MessageAttributeValue>>): boolean {
    return S3ClaimCheck.messageSize(body, attributes) > this.threshold;
  }

  /**
   * Prepares a message for SQS: small ones unchanged; large ones stored in S3 and replaced by a
   * pointer. Throws {@link ClaimCheckError} when S3 refuses — never falls back to inline.
   */
  public async encode(
    body: string,
    attributes: Readonly<Record<string, MessageAttributeValue>> = {},
    key = `${this.keyPrefix}${randomUUID()}`,
  ): Promise<{ body: string; attributes: Record<string, MessageAttributeValue>; pointer?: PayloadPointer }> {
    if (!this.isLarge(body, attributes)) return { body, attributes: { ...attributes } };
    const pointer = await this.put(key, body);
    return {
      pointer,
      body: JSON.stringify([POINTER_CLASS, pointer]),
      attributes: {
        ...attributes,
        [PAYLOAD_SIZE_ATTRIBUTE]: { DataType: 'Number', StringValue: String(Buffer.byteLength(body)) },
      },
    };
  }

  /**
   * The real body of a received message: fetched from S3 when it is a pointer. A message is
   * untrusted, so its pointer is followed only into this bucket and under `prefixes`, and only to
   * a payload of at most `maxPayloadBytes`: the size the message declares (`ExtendedPayloadSize`)
   * is checked before S3 is asked, the object's real size (`ContentLength`) before its body is
   * read, and the body is read no further than the maximum whatever S3 says.
   *
   * @param prefixes the key prefixes a pointer may name (default: the constructor's `readablePrefixes`)
   * @throws ClaimCheckRefusedError for a pointer elsewhere or to a payload beyond the maximum (bad
   *   input), ClaimCheckError when S3 fails
   */
  public async decode(
    body: string,
    attributes: Readonly<Record<string, string>> = {},
    prefixes: readonly string[] = this.readablePrefixes,
  ): Promise<string> {
    const pointer = S3ClaimCheck.pointerOf(body, attributes);
    if (!pointer) return body;
    this.check(pointer, prefixes);
    const declared = declaredSize(attributes);
    if (declared !== undefined && !(Number.isInteger(declared) && declared >= 0))
      throw new ClaimCheckRefusedError(
        `claim-check pointer to s3://${pointer.s3BucketName}/${pointer.s3Key} refused: its declared size ${declared} is not a whole number of bytes`,
      );
    if (declared !== undefined && declared > this.maxPayloadBytes)
      throw this.tooLarge(pointer, 'declares', declared);
    try {
      return await this.read(pointer, this.maxPayloadBytes);
    } catch (error) {
      // S3 reads its writes: an object a producer points at and that is not there will not appear
      // on a redelivery, so the message is bad input rather than a retry into the DLQ.
      if (error instanceof ClaimCheckError && (error.cause as Error | undefined)?.name === 'NoSuchKey') {
        throw new ClaimCheckRefusedError(
          `claim-check pointer to s3://${pointer.s3BucketName}/${pointer.s3Key} refused: no such object`,
          { cause: error },
        );
      }
      throw error;
    }
  }

  private tooLarge(pointer: PayloadPointer, how: 'declares' | 'is', bytes: number): ClaimCheckRefusedError {
    return new ClaimCheckRefusedError(
      `claim-check pointer to s3://${pointer.s3BucketName}/${pointer.s3Key} refused: its payload ${how} ${bytes} bytes, more than the ${this.maxPayloadBytes} fanin reads`,
    );
  }

  /**
   * Reads an object of at most `maxBytes`: refused by its `ContentLength` before the body is
   * read, and cut off (the download aborted) once more than `maxBytes` have arrived.
   */
  private async read(pointer: PayloadPointer, maxBytes: number): Promise<string> {
    const abort = new AbortController();
    try {
      const { Body, ContentLength } = await this.s3.send(
        new GetObjectCommand({ Bucket: pointer.s3BucketName, Key: pointer.s3Key }),
        { abortSignal: abort.signal },
      );
      if (!Body) throw new Error('empty object');
      if (ContentLength !== undefined && ContentLength > maxBytes) {
        abort.abort();
        throw this.tooLarge(pointer, 'is', ContentLength);
      }
      const chunks: Uint8Array[] = [];
      let bytes = 0;
      for await (const chunk of Body as AsyncIterable<Uint8Array>) {
        bytes += chunk.byteLength;
        if (bytes > maxBytes) {
          abort.abort();
          throw this.tooLarge(pointer, 'is', bytes);
        }
        chunks.push(chunk);
      }
      return Buffer.concat(chunks).toString('utf8');
    } catch (error) {
      if (error instanceof ClaimCheckRefusedError) throw error;
      throw new ClaimCheckError(
        `reading the large payload s3://${pointer.s3BucketName}/${pointer.s3Key} failed: ${(error as Error).message}`,
        { cause: error },
      );
    }
  }

  /** Throws {@link ClaimCheckRefusedError} unless the pointer names this bucket and a key under one of `prefixes`. */
  public check(pointer: PayloadPointer, prefixes: readonly string[] = this.readablePrefixes): void {
    const where = `s3://${pointer.s3BucketName}/${pointer.s3Key}`;
    if (pointer.s3BucketName !== this.bucket) {
      throw new ClaimCheckRefusedError(
        `claim-check pointer to ${where} refused: only objects of fanin's payload bucket ${this.bucket} are read`,
      );
    }
    const key = pointer.s3Key;
    const clean = !key.split('/').some((segment) => segment === '..' || segment === '.');
    if (!clean || !prefixes.some((prefix) => key.startsWith(prefix) && key.length > prefix.length)) {
      throw new ClaimCheckRefusedError(
        `claim-check pointer to ${where} refused: a pointer may only name a key under ${prefixes.join(' or ')}`,
      );
    }
  }

  /** The pointer a body carries, if it is one (with a size attribute, as the Extended Client writes). */
  public static pointerOf(
    body: string,
    attributes: Readonly<Record<string, string>> = {},
  ): PayloadPointer | undefined {
    const marked = [PAYLOAD_SIZE_ATTRIBUTE, ...LEGACY_SIZE_ATTRIBUTES].some(
      (name) => attributes[name] !== undefined,
    );
    if (!marked || !body.startsWith('[')) return undefined;
    try {
      const parsed: unknown = JSON.parse(body);
      if (!Array.isArray(parsed) || parsed[0] !== POINTER_CLASS) return undefined;
      const pointer = parsed[1] as Partial<PayloadPointer> | undefined;
      if (typeof pointer?.s3BucketName !== 'string' || typeof pointer.s3Key !== 'string') return undefined;
      return { s3BucketName: pointer.s3BucketName, s3Key: pointer.s3Key };
    } catch {
      return undefined;
    }
  }

  /** Stores a payload under a key of this bucket (idempotent for a given key and content). */
  public async put(key: string, payload: string): Promise<PayloadPointer> {
    try {
      await this.s3.send(
        new PutObjectCommand({
          Bucket: this.bucket,
          Key: key,
          Body: payload,
          ContentType: 'application/json',
        }),
      );
    } catch (error) {
      throw new ClaimCheckError(
        `storing a large payload in s3://${this.bucket}/${key} failed: ${(error as Error).message}`,
        {
          cause: error,
        },
      );
    }
    return { s3BucketName: this.bucket, s3Key: key };
  }

  /** Reads a stored payload. */
  public async get(pointer: PayloadPointer): Promise<string> {
    try {
      const { Body } = await this.s3.send(
        new GetObjectCommand({ Bucket: pointer.s3BucketName, Key: pointer.s3Key }),
      );
      if (!Body) throw new Error('empty object');
      return await Body.transformToString();
    } catch (error) {
      throw new ClaimCheckError(
        `reading the large payload s3://${pointer.s3BucketName}/${pointer.s3Key} failed: ${(error as Error).message}`,
        { cause: error },
      );
    }
  }
}

/** The payload size a pointer message declares (`ExtendedPayloadSize` or a legacy name), if a number. */
function declaredSize(attributes: Readonly<Record<string, string>>): number | undefined {
  for (const name of [PAYLOAD_SIZE_ATTRIBUTE, ...LEGACY_SIZE_ATTRIBUTES]) {
    const value = attributes[name];
    if (value === undefined) continue;
    const size = Number(value);
    if (Number.isFinite(size)) return size;
  }
  return undefined;
}
