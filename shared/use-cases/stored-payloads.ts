import { createHash } from 'node:crypto';
import { BadMessageError } from '../errors.ts';
import type { RawMessage, StoredPayload } from '../ports.ts';

import type { FaninContext } from './context.ts';

/**
 * Payloads as the use cases keep and read them: a claim-check pointer resolved to its body, and
 * JSON text kept inline in the state store or, too large for an item, in S3.
 */

/**
 * Resolves a claim-check pointer to the real body, so every handler sees the payload whichever
 * path it travelled. A pointer without a claim-check store configured is a bad message.
 */
export async function resolvePayload(ctx: FaninContext, message: RawMessage): Promise<RawMessage> {
  const pointer = ['ExtendedPayloadSize', 'SQSLargePayloadSize', 'AWSOffloadedPayloadSize'].some(
    (a) => a in message.attributes,
  );
  if (!pointer) return message;
  if (!ctx.payloads)
    throw new BadMessageError('the message is a claim-check pointer but no payload bucket is configured');
  return { ...message, body: await ctx.payloads.decode(message.body, message.attributes) };
}

/**
 * JSON text as the state store keeps it: inline when it fits an item, otherwise in S3 under a
 * key derived from `key` and the text itself, and referenced. A retry of the same payload writes
 * the same object; a different payload under the same ids (a duplicate reply with another body,
 * a request refused because its aggregate id is taken) writes another object, so nothing that is
 * then refused or ignored can overwrite a body an aggregate already references. Without a
 * payload bucket a payload that does not fit is bad input.
 */
export async function storable(
  ctx: FaninContext,
  key: string,
  json: string,
  what: string,
): Promise<StoredPayload> {
  const size = Buffer.byteLength(json);
  if (size <= ctx.maxReplyBytes) return { payload: json };
  if (!ctx.payloads) {
    throw new BadMessageError(
      `${what} is ${size} bytes; at most ${ctx.maxReplyBytes} are kept without a payload bucket`,
    );
  }
  const objectKey = `state/${createHash('sha256').update(key).update('\u0000').update(json).digest('hex')}`;
  return { payload: '', payloadRef: await ctx.payloads.put(objectKey, json) };
}

/** Reads back what {@link storable} kept. */
export async function loadStored(ctx: FaninContext, stored: StoredPayload): Promise<string> {
  if (!stored.payloadRef) return stored.payload;
  if (!ctx.payloads) {
    throw new Error(
      `s3://${stored.payloadRef.s3BucketName}/${stored.payloadRef.s3Key} needs a payload bucket`,
    );
  }
  return ctx.payloads.get(stored.payloadRef);
}
