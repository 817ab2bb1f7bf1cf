import { SendMessageCommand } from '@aws-sdk/client-sqs';
import type { SQSEvent } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeReplyHandler } from '../../../functions/handlers.ts';
import { QueuePoller } from '../../../local/poller.ts';
import { AggregateStatus } from '../../../shared/engine/constants.ts';
import type { RawMessage } from '../../../shared/ports.ts';
import { handleReplies } from '../../../shared/use-cases/replies.ts';
import { expireAggregate } from '../../../shared/use-cases/timers.ts';
import { aws } from '../../support/clients.ts';
import { FaninUnderTest } from '../../support/fanin.ts';

/**
 * Packs (docs/data-plane.md, "Packs"): the replies of one aggregate that share a batch are
 * recorded as one item, so a reply id may end up recorded in two items (a pack, then redelivered
 * alone or grouped differently). These tests read the table itself, below anything that could
 * hide a second copy, and the publications as sent, below FIFO deduplication.
 */
describe('replies of one aggregate in one batch', () => {
  let fanin: FaninUnderTest;
  const target = `packs-${Math.random().toString(36).slice(2, 8)}`;

  beforeAll(async () => {
    fanin = await FaninUnderTest.start([
      { name: 'packed', fanOut: { type: 'none' }, completion: { strategy: 'all' } },
      // Over LARGE_FAN_OUT index replies: "all arrived" is seen through range counts of blocks.
      {
        name: 'large',
        fanOut: { type: 'splitter', itemsPath: '$.items', target },
        completion: { strategy: 'all' },
        timeoutSeconds: 3600,
      },
    ]);
    await fanin.targetQueue(target, true);
  });
  afterAll(() => fanin.stop());

  const reply = (aggregateId: string, replyId: string, body: unknown = { r: replyId }): RawMessage => ({
    messageId: `m-${aggregateId}-${replyId}-${JSON.stringify(body).length}`,
    body: JSON.stringify(body),
    attributes: { 'fanin-aggregate-id': aggregateId, 'fanin-reply-id': replyId },
    receiveCount: 1,
  });
  const open = async (aggregateId: string, expected: number) => {
    await fanin.sendRequest({ definition: 'packed', aggregateId, expected });
    await fanin.drain();
  };
  const itemsOf = async (aggregateId: string) =>
    (await fanin.scanState()).filter((i) => i.pk === `A#${aggregateId}`).map((i) => String(i.sk));
  const resultIds = (aggregateId: string) => {
    const { output } = fanin.expectExactlyOneTerminalOutput(aggregateId);
    return (output.result as { replyId: string }[]).map((r) => r.replyId).sort();
  };

  it('are recorded in one item, and the result holds each of them once', async () => {
    await open('pack-1', 10);
    const batch = Array.from({ length: 10 }, (_, i) => reply('pack-1', `r${i}`));

    const failed = await handleReplies(fanin.ctx, batch);

    // Mutant killed: "each reply its own item" (planWrites never packs) — ten R# items, no Q#.
    expect(failed.size).toBe(0);
    const items = await itemsOf('pack-1');
    expect(items.filter((sk) => sk.startsWith('Q#'))).toHaveLength(1);
    expect(items.filter((sk) => sk.startsWith('R#'))).toHaveLength(0);
    expect(resultIds('pack-1')).toEqual(batch.map((m) => m.attributes['fanin-reply-id']).sort());
  });

  it('a reply recorded in a pack and redelivered alone counts once: the aggregate waits for its last reply', async () => {
    await open('pack-2', 4);
    await handleReplies(fanin.ctx, [reply('pack-2', 'a'), reply('pack-2', 'b'), reply('pack-2', 'c')]);

    // Act: b comes again on its own (a redelivery), before the fourth reply
    await handleReplies(fanin.ctx, [reply('pack-2', 'b')]);

    // Both copies are in the table …
    const items = await itemsOf('pack-2');
    expect(items.filter((sk) => sk.startsWith('Q#'))).toHaveLength(1);
    expect(items).toContain('R#b');
    // … and the read counts reply ids, not items (mutant killed: "the read keeps every copy" —
    // four copies of three replies complete the aggregate of four).
    expect((await fanin.ctx.store.getHeader('pack-2'))?.status).toBe(AggregateStatus.OPEN);
    fanin.expectNoTerminalOutput('pack-2');

    await handleReplies(fanin.ctx, [reply('pack-2', 'd')]);
    expect(resultIds('pack-2')).toEqual(['a', 'b', 'c', 'd']);
    const { output } = fanin.expectExactlyOneTerminalOutput('pack-2');
    expect(output).toMatchObject({ counts: { received: 4 } });
  });

  it('a batch redelivered whole finds its pack and writes nothing more', async () => {
    await open('pack-3', 3);
    const batch = [reply('pack-3', 'a'), reply('pack-3', 'b')];
    await handleReplies(fanin.ctx, batch);

    await handleReplies(fanin.ctx, batch);

    // Mutant killed: "a pack whose key is taken records all its members again alone".
    const items = await itemsOf('pack-3');
    expect(items.filter((sk) => sk.startsWith('Q#') || sk.startsWith('R#'))).toEqual(['Q#a']);
    expect((await fanin.ctx.store.readAggregate('pack-3')).replies.map((r) => r.replyId).sort()).toEqual([
      'a',
      'b',
    ]);
  });

  it('a pack grouped differently on redelivery records the replies the first pack does not hold', async () => {
    await open('pack-4', 3);
    await handleReplies(fanin.ctx, [reply('pack-4', 'a'), reply('pack-4', 'b')]);

    // Act: a redelivered with a new reply c — the same pack key (its smallest id, a) is taken
    await handleReplies(fanin.ctx, [reply('pack-4', 'a'), reply('pack-4', 'c')]);

    // Mutant killed: "a failed pack put leaves every member a duplicate" — c is then lost and the
    // aggregate of three never completes.
    expect(await itemsOf('pack-4')).toContain('R#c');
    expect(resultIds('pack-4')).toEqual(['a', 'b', 'c']);
  });

  it('a copy recorded after the seal never changes the result a resumer builds again', async () => {
    // Prepare: a and b arrive in one batch; the owner seals the aggregate, then dies before publishing
    await open('pack-5', 2);
    const healthy = fanin.ctx;
    fanin.ctx = {
      ...healthy,
      outputs: { publish: () => Promise.reject(new Error('the owner died before publishing')) },
    };
    await handleReplies(fanin.ctx, [
      reply('pack-5', 'a', { quote: 'first' }),
      reply('pack-5', 'b', { quote: 'b' }),
    ]).catch(() => undefined);
    fanin.ctx = healthy;
    const sealed = await healthy.store.getHeader('pack-5');
    expect(sealed).toMatchObject({ status: AggregateStatus.COMPLETING, members: ['a', 'b'] });

    // Act: a stalled invocation records another message with reply id a, taken before the seal
    // (an earlier receivedAt) and with another body; then the lease runs out and a resumer
    // builds the result again
    const stalled = await healthy.store.putReply('pack-5', {
      replyId: 'a',
      payload: JSON.stringify({ quote: 'second' }),
      receivedAt: (sealed?.openedAt ?? 0) - 1,
      expiresAt: Math.floor(healthy.clock() / 1000) + 3600,
      messageId: 'm-stalled',
    });
    expect(stalled).toBe('recorded');
    fanin.clock.advance(healthy.completionLeaseMs + 1);
    await expireAggregate(healthy, 'pack-5', false);

    // Assess (mutant killed: "the read ignores the seal's sources" — the resumer takes the
    // earliest copy, or a member's own item, and publishes quote "second")
    const { output } = fanin.expectExactlyOneTerminalOutput('pack-5');
    const result = output.result as { replyId: string; body: { quote: string } }[];
    expect(result.find((r) => r.replyId === 'a')?.body).toEqual({ quote: 'first' });
  });

  it('a seal whose pack sources would crowd the header keeps them beside it, and every reader gets them back', async () => {
    // Prepare: 10,000 members read from 5,000 small packs (about 125 KB of sources encoded)
    await open('pack-sources', 10_000);
    const sources = Object.fromEntries(
      Array.from({ length: 5_000 }, (_, i) => [
        `Q#${String(2 * i).padStart(10, '0')}`,
        [String(2 * i), String(2 * i + 1)],
      ]),
    );
    const members = Array.from({ length: 10_000 }, (_, i) => String(i));
    const at = fanin.clock.now;

    // Act
    const sealed = await fanin.ctx.store.seal('pack-sources', {
      outcome: 'completed' as never,
      members,
      sources,
      at,
      lease: 'l',
      leaseUntil: at + 60_000,
    });
    const reread = await fanin.ctx.store.getHeader('pack-sources');

    // Assess: the seal names each member's pack, so a copy recorded later cannot change a rebuilt
    // result (dropping them, as a 128 KB cap once did, loses that)
    expect(sealed?.status).toBe(AggregateStatus.COMPLETING);
    expect(sealed?.sources).toEqual(sources);
    expect(reread?.sources).toEqual(sources);
    expect(reread?.members).toEqual(members);
  });

  it('a large fan-out whose replies come in packs completes when its last block is in', async () => {
    // Prepare: a splitter of 200 items (blocks of 32 index ids, counted by range reads)
    await fanin.sendRequest({
      definition: 'large',
      aggregateId: 'pack-large',
      items: Array.from({ length: 200 }, (_, i) => i),
    });
    await fanin.drain();
    expect((await fanin.ctx.store.getHeader('pack-large'))?.expected).toBe(200);

    // Act: the replies arrive ten to a batch (so each batch is one or two packs, split at a block's end)
    for (let first = 0; first < 200; first += 10) {
      const batch = Array.from({ length: 10 }, (_, i) => reply('pack-large', String(first + i)));
      expect((await handleReplies(fanin.ctx, batch)).size).toBe(0);
    }

    // Assess (mutant killed: "a block's range count ignores packs" — no block is ever seen
    // complete, and the aggregate stays open with every reply in)
    const items = await itemsOf('pack-large');
    expect(items.filter((sk) => sk.startsWith('R#'))).toHaveLength(0);
    const { output } = fanin.expectExactlyOneTerminalOutput('pack-large');
    expect(output).toMatchObject({ counts: { received: 200 } });
  });
});

describe('a reply partition with a batching window and a batch size above ten', () => {
  let fanin: FaninUnderTest;

  beforeAll(async () => {
    fanin = await FaninUnderTest.start(
      [{ name: 'windowed', fanOut: { type: 'none' }, completion: { strategy: 'all' } }],
      { replyPartitions: 1, replyBatchingWindowSeconds: 3, replyBatchSize: 100 },
    );
  });
  afterAll(() => fanin.stop());

  it('takes the replies of several aggregates sent one by one in one invocation, each aggregate’s in one pack', async () => {
    // Prepare: three aggregates of ten; the partition's event source as the topology describes it
    const ids = ['win-a', 'win-b', 'win-c'];
    for (const aggregateId of ids)
      await fanin.sendRequest({ definition: 'windowed', aggregateId, expected: 10 });
    await fanin.drain();
    const spec = fanin.topology.replyConsumers[0];
    expect(spec).toMatchObject({ batchSize: 100, maxBatchingWindowSeconds: 3 });
    const batches: number[] = [];
    const handle = makeReplyHandler(() => fanin.ctx);
    const poller = new QueuePoller({
      sqs: aws.sqs,
      queueUrl: fanin.provisioned.replyQueueUrls[0] as string,
      handler: async (event: SQSEvent) => {
        batches.push(event.Records.length);
        return handle(event);
      },
      batchSize: spec?.batchSize ?? 10,
      maxBatchingWindowSeconds: spec?.maxBatchingWindowSeconds ?? 0,
    });

    // Act: thirty replies, each sent on its own, round-robin over the aggregates (independent responders)
    for (let i = 0; i < 10; i += 1)
      for (const aggregateId of ids)
        await aws.sqs.send(
          new SendMessageCommand({
            QueueUrl: fanin.provisioned.replyQueueUrls[0],
            MessageBody: JSON.stringify({ i }),
            MessageAttributes: {
              'fanin-aggregate-id': { DataType: 'String', StringValue: aggregateId },
              'fanin-reply-id': { DataType: 'String', StringValue: String(i) },
            },
          }),
        );
    let taken = 0;
    while (taken < 30) {
      const polled = await poller.pollOnce(1);
      if (polled === 0) break;
      taken += polled;
    }

    // Assess: one invocation took all thirty (at batch size 10 it takes three); each aggregate
    // completed from one pack of its ten replies
    expect(batches).toEqual([30]);
    for (const aggregateId of ids) {
      const items = (await fanin.scanState())
        .filter((i) => i.pk === `A#${aggregateId}`)
        .map((i) => String(i.sk))
        .filter((sk) => sk.startsWith('Q#') || sk.startsWith('R#'));
      expect(items).toEqual(['Q#0000000000']);
      const { output } = fanin.expectExactlyOneTerminalOutput(aggregateId);
      expect(output).toMatchObject({ counts: { received: 10 } });
    }
  });
});
