import { GetObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RawMessage } from '../../../shared/ports.ts';
import { handleReplies } from '../../../shared/use-cases/replies.ts';
import { aws } from '../../support/clients.ts';
import { FaninUnderTest } from '../../support/fanin.ts';

/**
 * What a responder may send on the reply path, read from docs/wire-contract.md alone: the same
 * reply id twice with different bodies, bodies large enough to be kept in S3, reply ids at the
 * contract's 256 characters. The result must hold each reply once, with the body recorded first,
 * and every later build must read that same body. These tests read the stored objects and the
 * publications as sent.
 */
describe('duplicates and long ids on the reply path', () => {
  let fanin: FaninUnderTest;

  beforeAll(async () => {
    fanin = await FaninUnderTest.start(
      [{ name: 'kept', fanOut: { type: 'none' }, completion: { strategy: 'all' } }],
      // Any reply body over 100 bytes is kept in S3 (state/…) instead of in its item.
      { claimCheckThresholdBytes: 200_000, overrides: { maxReplyBytes: 100 } },
    );
  });
  afterAll(() => fanin.stop());

  let sequence = 0;
  const reply = (aggregateId: string, replyId: string, body: unknown): RawMessage => {
    sequence += 1;
    return {
      messageId: `m-${sequence}`,
      body: JSON.stringify(body),
      attributes: { 'fanin-aggregate-id': aggregateId, 'fanin-reply-id': replyId },
      receiveCount: 1,
    };
  };
  const open = async (aggregateId: string, expected: number) => {
    await fanin.sendRequest({ definition: 'kept', aggregateId, expected });
    await fanin.drain();
  };
  const storedBodies = async () => {
    const bucket = fanin.provisioned.bucketName as string;
    const { Contents = [] } = await aws.s3.send(
      new ListObjectsV2Command({ Bucket: bucket, Prefix: 'state/' }),
    );
    const bodies = new Map<string, string>();
    for (const { Key } of Contents) {
      const object = await aws.s3.send(new GetObjectCommand({ Bucket: bucket, Key }));
      bodies.set(String(Key), await (object.Body?.transformToString() ?? Promise.resolve('')));
    }
    return bodies;
  };

  it('a duplicate with another large body never replaces the body recorded first, in S3 or in the result', async () => {
    // Prepare: reply a recorded with a body kept in S3
    await open('dup-big', 2);
    const first = { quote: 'first', pad: 'x'.repeat(300) };
    await handleReplies(fanin.ctx, [reply('dup-big', 'a', first)]);
    const before = await storedBodies();

    // Act: another message with reply id a and another large body, then the last reply
    await handleReplies(fanin.ctx, [reply('dup-big', 'a', { quote: 'second', pad: 'y'.repeat(300) })]);
    await handleReplies(fanin.ctx, [reply('dup-big', 'b', { quote: 'b' })]);

    // Assess (mutant killed, in storable (context.ts): "a stored body's key is its ids alone" — the
    // duplicate's put overwrites the object the first copy's item points at)
    const after = await storedBodies();
    for (const [key, body] of before) expect(after.get(key)).toBe(body);
    const { output } = fanin.expectExactlyOneTerminalOutput('dup-big');
    const result = output.result as { replyId: string; body: unknown }[];
    expect(result.map((r) => r.replyId).sort()).toEqual(['a', 'b']);
    expect(result.find((r) => r.replyId === 'a')?.body).toEqual(first);
  });

  it('a reply id of 256 three-byte characters is kept whole and distinct from one that differs in its last', async () => {
    // Prepare: the contract's longest reply ids, 768 bytes in UTF-8 (a sort key holds 1,024)
    await open('long-ids', 2);
    const stem = '中'.repeat(255);
    const ids = [`${stem}一`, `${stem}二`];

    // Act: each in a batch of its own (each its own item, under its own sort key)
    for (const [i, id] of ids.entries())
      expect((await handleReplies(fanin.ctx, [reply('long-ids', id, { i })])).size).toBe(0);

    // Assess (mutant killed: "a reply's sort key keeps 255 characters of its id"): both are
    // members, not one a duplicate of the other, each with its own body
    const { output } = fanin.expectExactlyOneTerminalOutput('long-ids');
    const result = output.result as { replyId: string; body: { i: number } }[];
    expect(result.map((r) => [r.replyId, r.body.i]).sort()).toEqual([
      [ids[0], 0],
      [ids[1], 1],
    ]);
  });

  it('a reply whose JSON escapes a character SQS refuses goes to the error output, and its aggregate still completes', async () => {
    // Prepare: "\uffff" is plain ASCII on the wire, but parsed and written back it is U+FFFF
    await open('nonchar', 1);
    const odd = { ...reply('nonchar', 'r', {}), body: '{"x":"\\uffff"}' };

    // Act: the odd reply, then a proper one
    expect((await handleReplies(fanin.ctx, [odd])).size).toBe(0);
    expect((await handleReplies(fanin.ctx, [reply('nonchar', 'r', { x: 'ok' })])).size).toBe(0);

    // Assess (mutant killed: "any JSON body is kept" — the result holding U+FFFF is refused by
    // SQS on every attempt and the aggregate stays completing)
    const [error, ...more] = await fanin.outputs('error');
    expect(more).toEqual([]);
    expect(error).toMatchObject({ type: 'fanin.error', source: 'reply' });
    expect(String(error?.reason)).toContain('reply body holds U+FFFF');
    const { output } = fanin.expectExactlyOneTerminalOutput('nonchar');
    expect(output.result).toEqual([expect.objectContaining({ replyId: 'r', body: { x: 'ok' } })]);
  });
});
