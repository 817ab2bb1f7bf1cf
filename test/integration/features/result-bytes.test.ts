import { DeleteCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { aws } from '../../support/clients.ts';
import { FaninUnderTest } from '../../support/fanin.ts';

/**
 * Every copy of a result — on the completed queue and on the bus, first sent or rebuilt by a
 * resumer after a failed channel or a crash between channels — is the same bytes. The custom
 * expression reads the clock and random functions, the parts most likely to differ between
 * builds. The probe records each SQS send and each PutEvents entry as sent (below any
 * deduplication); EventBridge is answered by the probe's stand-in.
 */
describe('a rebuilt result is byte-identical to the sealed one on every channel', () => {
  let fanin: FaninUnderTest;
  let n = 0;
  const nextId = () => `bytes-${++n}-${Date.now().toString(36)}`;

  beforeAll(async () => {
    fanin = await FaninUnderTest.start([
      {
        name: 'stamped',
        fanOut: { type: 'none' },
        completion: { strategy: 'all' },
        outputs: { eventBridge: true },
        timeoutSeconds: 3600,
        aggregation: {
          algorithm: 'custom',
          expression:
            '{ "at": $millis(), "now": $now(), "draw": $random(), "order": $shuffle(replyIds), "total": $sum(replies.x) }',
        },
      },
    ]);
    fanin.eventBusName = 'fanin-test-bus';
    fanin.probe.stubEventBridge();
    fanin.buildContext();
  });
  afterAll(() => fanin.stop());

  async function openWithReplies(id: string, count: number): Promise<void> {
    await fanin.sendRequest({ definition: 'stamped', aggregateId: id, expected: count });
    await fanin.drain();
    for (let r = 0; r < count - 1; r += 1) {
      await fanin.sendReply(
        { x: 0.1 * (r + 1) },
        { 'fanin-aggregate-id': id, 'fanin-reply-id': String(r), 'fanin-definition': 'stamped' },
      );
    }
    await fanin.drain();
  }

  const lastReply = (id: string, count: number) =>
    fanin.sendReply(
      { x: 0.1 * count },
      { 'fanin-aggregate-id': id, 'fanin-reply-id': String(count - 1), 'fanin-definition': 'stamped' },
    );

  const copies = (id: string) => fanin.publications(id).filter((p) => p.body.id === `${id}/result`);

  it('after an EventBridge retry, the event a resumer rebuilds is the bytes the queue got from the owner', async () => {
    // Kills the mutant "custom expression evaluated without fixed inputs" ($millis() read at each build).
    // Prepare: EventBridge refuses until healed
    const id = nextId();
    await openWithReplies(id, 3);
    const heal = fanin.probe.failEvery({ name: 'EventBridge.PutEvents' });

    // Act: the last reply completes it; the event fails; later, healed, the sweeper resumes
    await lastReply(id, 3);
    await fanin.drain();
    heal();
    fanin.clock.advance(fanin.ctx.completionLeaseMs + 1);
    await fanin.sweep();
    await fanin.drain();

    // Assess: one copy per channel, the same text, stamped with the seal's time
    const sent = copies(id);
    expect(sent.map((p) => p.channel).sort()).toEqual(['completed', 'eventbridge']);
    expect(sent[1]?.text).toBe(sent[0]?.text);
    const body = sent[0]?.body as { closedAt: number; result: { at: number; now: string } };
    expect(body.result.at).toBe(body.closedAt);
    expect(body.result.now).toBe(new Date(body.closedAt).toISOString());
  });

  it('after a crash between the queue and the bus, every copy the resumer sends is the bytes the owner sent first', async () => {
    // Kills the mutant "custom expression evaluated without fixed inputs" ($millis() read at each build).
    // Prepare: the owner dies right after its SQS send, before the event and before recording it
    const id = nextId();
    await openWithReplies(id, 3);
    fanin.probe.crashAt({ name: 'SQS.SendMessage', queueRole: 'completed' }, 'after');

    // Act: the last reply completes it, the owner crashes; after the lease, the resumer finishes
    await lastReply(id, 3);
    await fanin.consumePartition(0);
    expect(fanin.probe.disarm(), 'the owner crashed after its SQS send').toBeDefined();
    fanin.clock.advance(fanin.ctx.completionLeaseMs + 1);
    await fanin.sweep();
    await fanin.drain();

    // Assess: the queue got it twice (the resumer cannot know the first went out), the bus once,
    // and all three are the same text
    const sent = copies(id);
    expect(sent.filter((p) => p.channel === 'completed')).toHaveLength(2);
    expect(sent.filter((p) => p.channel === 'eventbridge')).toHaveLength(1);
    expect(new Set(sent.map((p) => p.text)).size).toBe(1);
    expect(await fanin.ctx.store.getHeader(id)).toMatchObject({ status: 'closed' });
  });

  it('a resumer that finds a sealed member’s item gone publishes nothing and alarms, never a result with fewer members', async () => {
    // Kills the mutant "a resumer builds from whatever members it finds" (no check of the count against the seal).
    // Prepare: sealed with three members, the owner dead before any send; then one member's item vanishes
    const id = nextId();
    await openWithReplies(id, 3);
    fanin.probe.crashAt({ name: 'SQS.SendMessage', queueRole: 'completed' }, 'before');
    await lastReply(id, 3);
    await fanin.consumePartition(0);
    expect(fanin.probe.disarm(), 'the owner crashed before its SQS send').toBeDefined();
    // The last reply came alone: its own item (the first two share a pack)
    const member = (await fanin.scanState()).find((i) => i.pk === `A#${id}` && i.sk === 'R#0000000002');
    expect(member, 'reply 2 has its own item').toBeDefined();
    await aws.dynamo.send(
      new DeleteCommand({ TableName: fanin.provisioned.tableName, Key: { pk: member?.pk, sk: member?.sk } }),
    );
    const before = fanin.alarms('completion-stuck').length;

    // Act: after the lease, the sweeper resumes
    fanin.clock.advance(fanin.ctx.completionLeaseMs + 1);
    await fanin.sweep().catch(() => 0);
    await fanin.drain();

    // Assess: no copy of any result, still completing, alarmed
    expect(copies(id)).toEqual([]);
    expect(await fanin.ctx.store.getHeader(id)).toMatchObject({ status: 'completing' });
    expect(fanin.alarms('completion-stuck').length).toBeGreaterThan(before);
  });
});
