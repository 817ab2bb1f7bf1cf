import { describe, expect, it } from 'vitest';
import { BadMessageError } from '../../../../shared/errors.ts';
import type { PayloadPointer, PayloadStore, RawMessage } from '../../../../shared/ports.ts';
import { loadStored, resolvePayload, storable } from '../../../../shared/use-cases/stored-payloads.ts';
import { memoryContext } from '../../../support/memory-store.ts';

/**
 * Payloads as the use cases keep them (docs/data-plane.md; docs/wire-contract.md, "Large
 * messages"): a claim-check pointer resolved to its body; JSON inline when it fits an item, else
 * in S3 under a key of its ids and its text, so a retry writes the same object and another body
 * under the same ids never overwrites one an aggregate references.
 */

/** A payload bucket in memory: what was put, by key. */
function aBucket(): PayloadStore & { objects: Map<string, string> } {
  const objects = new Map<string, string>();
  return {
    objects,
    decode: async (body) => `resolved:${body}`,
    put: async (key, payload): Promise<PayloadPointer> => {
      objects.set(key, payload);
      return { s3BucketName: 'payloads', s3Key: key };
    },
    get: async (pointer) => {
      const payload = objects.get(pointer.s3Key);
      if (payload === undefined) throw new Error(`no object ${pointer.s3Key}`);
      return payload;
    },
  };
}

function aMessage(attributes: Record<string, string>): RawMessage {
  return {
    messageId: 'm-1',
    body: '["software.amazon.payloadoffloading.PayloadS3Pointer",{}]',
    attributes,
    receiveCount: 1,
  };
}

describe('resolving a claim-check pointer', () => {
  it('leaves a message that is not a pointer as it came', async () => {
    const { ctx } = memoryContext([], { payloads: aBucket() });
    const message = aMessage({ 'fanin-aggregate-id': 'a' });
    expect(await resolvePayload(ctx, message)).toBe(message);
  });

  it.each(['ExtendedPayloadSize', 'SQSLargePayloadSize', 'AWSOffloadedPayloadSize'])(
    'resolves a pointer marked by %s to its body',
    async (attribute) => {
      const { ctx } = memoryContext([], { payloads: aBucket() });
      const resolved = await resolvePayload(ctx, aMessage({ [attribute]: '300000' }));
      expect(resolved.body).toBe('resolved:["software.amazon.payloadoffloading.PayloadS3Pointer",{}]');
      expect(resolved.messageId).toBe('m-1');
    },
  );

  it('refuses a pointer as bad input when no payload bucket is configured', async () => {
    const { ctx } = memoryContext([]);
    const resolving = resolvePayload(ctx, aMessage({ ExtendedPayloadSize: '300000' }));
    await expect(resolving).rejects.toBeInstanceOf(BadMessageError);
    await expect(resolving).rejects.toThrow('claim-check pointer but no payload bucket is configured');
  });
});

describe('keeping JSON text', () => {
  it('keeps it inline up to the largest body an item keeps', async () => {
    const { ctx } = memoryContext([], { maxReplyBytes: 10, payloads: aBucket() });
    expect(await storable(ctx, 'k', '"12345678"', 'reply body')).toEqual({ payload: '"12345678"' });
  });

  it('refuses a larger one without a payload bucket, saying its size and the limit', async () => {
    const { ctx } = memoryContext([], { maxReplyBytes: 10 });
    const storing = storable(ctx, 'k', '"123456789"', 'reply body');
    await expect(storing).rejects.toBeInstanceOf(BadMessageError);
    await expect(storing).rejects.toThrow(
      'reply body is 11 bytes; at most 10 are kept without a payload bucket',
    );
  });

  it('measures bytes, not characters', async () => {
    const { ctx } = memoryContext([], { maxReplyBytes: 10 });
    expect(await storable(ctx, 'k', '"éééé"', 'reply body')).toEqual({ payload: '"éééé"' });
    await expect(storable(ctx, 'k', '"ééééé"', 'reply body')).rejects.toThrow('is 12 bytes');
  });

  it('puts a larger one in S3 under state/, the same key for a retry and another for another body', async () => {
    const bucket = aBucket();
    const { ctx } = memoryContext([], { maxReplyBytes: 4, payloads: bucket });
    const first = await storable(ctx, 'reply\u0000a\u00000', '{"rate":3}', 'reply body');
    const retry = await storable(ctx, 'reply\u0000a\u00000', '{"rate":3}', 'reply body');
    const other = await storable(ctx, 'reply\u0000a\u00000', '{"rate":4}', 'reply body');
    expect(first.payload).toBe('');
    expect(first.payloadRef?.s3Key).toMatch(/^state\/[0-9a-f]{64}$/);
    expect(retry.payloadRef).toEqual(first.payloadRef);
    expect(other.payloadRef?.s3Key).not.toBe(first.payloadRef?.s3Key);
    expect(bucket.objects.size).toBe(2);
    expect(await loadStored(ctx, first)).toBe('{"rate":3}');
    expect(await loadStored(ctx, other)).toBe('{"rate":4}');
  });

  it('puts the same body under other ids elsewhere', async () => {
    const { ctx } = memoryContext([], { maxReplyBytes: 4, payloads: aBucket() });
    const a = await storable(ctx, 'reply\u0000a\u00000', '{"rate":3}', 'reply body');
    const b = await storable(ctx, 'reply\u0000a\u00001', '{"rate":3}', 'reply body');
    expect(a.payloadRef?.s3Key).not.toBe(b.payloadRef?.s3Key);
  });
});

describe('reading kept JSON back', () => {
  it('reads an inline payload without the bucket', async () => {
    const { ctx } = memoryContext([]);
    expect(await loadStored(ctx, { payload: '{"a":1}' })).toBe('{"a":1}');
  });

  it('needs the bucket for a payload kept in S3, and says which object', async () => {
    const { ctx } = memoryContext([]);
    await expect(
      loadStored(ctx, { payload: '', payloadRef: { s3BucketName: 'b', s3Key: 'state/x' } }),
    ).rejects.toThrow('s3://b/state/x needs a payload bucket');
  });
});
