import { brotliCompressSync, brotliDecompressSync, constants } from 'node:zlib';

/**
 * How a reply's payload is stored in its DynamoDB item. DynamoDB bills a write by the item's size
 * in 1 KB units, and a reply item is written once, when the reply is recorded (it expires by TTL,
 * never rewritten at close): a payload that compresses below a unit boundary costs a unit less,
 * and reads of the reply set cost less too. JSON replies of about a kilobyte compress to roughly half with Brotli
 * in text mode (quality 5: tens of microseconds per kilobyte, nearly the ratio of the slowest
 * setting), so a 1 KB reply item costs one unit instead of two.
 *
 * A payload is stored compressed (`payloadBr`, binary) only when that is smaller; otherwise as it
 * came (`payload`, a string). Items written either way, or by an older fanin, read back the same.
 */

/** Below this many bytes a payload is stored as it is: compressing it cannot save a write unit. */
export const COMPRESS_FROM_BYTES = 256;

/** The attributes that hold a payload in an item: exactly one of them. */
export type EncodedPayload = { readonly payload: string } | { readonly payloadBr: Uint8Array };

/** The smaller of the payload as it is and compressed. */
export function encodePayload(payload: string): EncodedPayload {
  const bytes = Buffer.byteLength(payload);
  if (bytes < COMPRESS_FROM_BYTES) return { payload };
  const compressed = brotliCompressSync(payload, {
    params: {
      [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
      [constants.BROTLI_PARAM_QUALITY]: 5,
      [constants.BROTLI_PARAM_SIZE_HINT]: bytes,
    },
  });
  return compressed.length < bytes ? { payloadBr: new Uint8Array(compressed) } : { payload };
}

/** The payload of an item written with {@link encodePayload} (or with a plain `payload`). */
export function decodePayload(item: Readonly<Record<string, unknown>>): string {
  const compressed = item.payloadBr;
  if (compressed instanceof Uint8Array) return brotliDecompressSync(compressed).toString('utf8');
  return String(item.payload ?? '');
}
