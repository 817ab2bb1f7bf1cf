import { DeleteObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { aws } from '../../support/clients.ts';
import { FaninUnderTest } from '../../support/fanin.ts';

/**
 * Issue 11, item 8: a body kept in S3 can disappear while state still points at it (a lifecycle
 * rule shorter than the state's life, an operator's delete). The stack refuses such a lifecycle at
 * synth; if a body is gone all the same, the aggregate must end, once, with a clear failed outcome —
 * not stay `completing` forever.
 */
describe('stored bodies that are gone', () => {
  let fanin: FaninUnderTest;

  beforeAll(async () => {
    fanin = await FaninUnderTest.start(
      [{ name: 'kept', fanOut: { type: 'none' }, completion: { strategy: 'all' } }],
      // Any reply body over 100 bytes is kept in S3 (state/…) instead of in its item.
      { claimCheckThresholdBytes: 200_000, overrides: { maxReplyBytes: 100 } },
    );
  });
  afterAll(() => fanin.stop());

  it('an aggregate whose stored reply body is gone ends failed with the reason, once, and closes', async () => {
    // Prepare: one reply stored in S3, then its object deleted behind fanin's back
    await fanin.sendRequest({ definition: 'kept', aggregateId: 'gone-1', expected: 2 });
    await fanin.drain();
    await fanin.sendReply(
      { text: 'x'.repeat(300) },
      { 'fanin-aggregate-id': 'gone-1', 'fanin-reply-id': 'a' },
    );
    await fanin.drain();
    const bucket = fanin.provisioned.bucketName as string;
    const { Contents = [] } = await aws.s3.send(
      new ListObjectsV2Command({ Bucket: bucket, Prefix: 'state/' }),
    );
    expect(Contents.length).toBeGreaterThan(0);
    for (const object of Contents)
      await aws.s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: object.Key }));

    // Act: the last reply completes it
    await fanin.sendReply({ n: 2 }, { 'fanin-aggregate-id': 'gone-1', 'fanin-reply-id': 'b' });
    await fanin.drain();
    fanin.clock.advance(fanin.ctx.completionLeaseMs + 1);
    await fanin.sweep();
    await fanin.drain();

    // Assess (mutant killed: a missing object rethrown instead of failing the aggregate — it then
    // stays completing and every sweep fails)
    const { output } = fanin.expectExactlyOneTerminalOutput('gone-1');
    expect(output).toMatchObject({ type: 'fanin.aggregate.failed', outcome: 'failed' });
    expect(String(output.reason)).toMatch(/stored body of the aggregate is gone/);
    expect(await fanin.ctx.store.getHeader('gone-1')).toMatchObject({ status: 'closed', outcome: 'failed' });
  });
});
