import type { S3Client } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import {
  ClaimCheckRefusedError,
  POINTER_CLASS,
  S3ClaimCheck,
} from '../../../../shared/adapters/s3-claim-check.ts';

const KIB = 1024;

/**
 * What the claim check buffers of an object whose size S3 does not state up front (no
 * `ContentLength`, as a chunked response has none): an S3 client that streams 4 MiB in 64 KiB
 * chunks and counts what was pulled from it. An emulator always states the length, so only a
 * stream stands in for this case.
 */
describe('the claim check reading an object of unstated size', () => {
  it('stops reading and refuses once more than its maximum has arrived, buffering no more than that', async () => {
    // Prepare
    let pulled = 0;
    async function* body() {
      for (let i = 0; i < 64; i += 1) {
        pulled += 64 * KIB;
        yield new Uint8Array(64 * KIB).fill(0x20);
      }
    }
    const s3 = { send: async () => ({ Body: body() }) } as unknown as S3Client;
    const claimCheck = new S3ClaimCheck({ s3, bucket: 'fanin-payloads', maxPayloadBytes: 1024 * KIB });
    const pointer = JSON.stringify([
      POINTER_CLASS,
      { s3BucketName: 'fanin-payloads', s3Key: 'incoming/endless' },
    ]);

    // Act
    const decoded = claimCheck.decode(pointer, { ExtendedPayloadSize: '100' });

    // Assess (mutant killed: the body read whole whatever its size — all 4 MiB are pulled and returned)
    await expect(decoded).rejects.toBeInstanceOf(ClaimCheckRefusedError);
    await expect(decoded).rejects.toThrow('more than the 1048576 fanin reads');
    expect(pulled).toBeLessThanOrEqual(1024 * KIB + 64 * KIB);
  });
});
