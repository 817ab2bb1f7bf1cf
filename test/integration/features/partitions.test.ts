import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FaninClient } from '../../../shared/client/fanin-client.ts';
import { NoPartitionAvailableError } from '../../../shared/errors.ts';
import { aws } from '../../support/clients.ts';
import { FaninUnderTest, queueDepth } from '../../support/fanin.ts';

/**
 * A partitioned destination: one name over N queues, routed by policy, with partitions
 * unavailable when send-disabled or at their high message threshold. Each test has a topology of
 * its own: the depths one test asserts cannot include what another left behind.
 */
describe('partitioned reply destination', () => {
  let fanin: FaninUnderTest;
  let client: FaninClient;
  let bank: string;

  beforeEach(async () => {
    fanin = await FaninUnderTest.start(
      [
        {
          name: 'quote',
          fanOut: { type: 'recipient-list' },
          completion: { strategy: 'all' },
          timeoutSeconds: 600,
        },
      ],
      { replyPartitions: 3, partitioning: { highThreshold: 5, highWatermark: 5, lowWatermark: 1 } },
    );
    bank = await fanin.targetQueue('bank');
    client = new FaninClient({ sqs: aws.sqs, replies: fanin.destination() });
  });
  afterEach(() => fanin.stop());

  it('routings made at once with a cold cache share one read of the registry and of each partition depth', async () => {
    // Kills the mutant "every caller reads on a cache miss" (the ten requests of a batch each
    // made a registry Query and a GetQueueAttributes per partition: 2.9 and 1.8 per aggregate).
    // Prepare
    const destination = fanin.destination();
    const since = fanin.probe.now;

    // Act
    await Promise.all(
      Array.from({ length: 10 }, (_, i) => destination.choose({ kind: 'affinity', key: `cold-${i}` })),
    );

    // Assess
    const calls = fanin.probe.callsAfter(since);
    expect(calls.filter((c) => c.name === 'DynamoDB.Query')).toHaveLength(1);
    expect(calls.filter((c) => c.name === 'SQS.GetQueueAttributes')).toHaveLength(
      fanin.topology.replyPartitions.length,
    );
  });

  it('affinity: every reply of an aggregate lands in its partition; with it disabled they go elsewhere and it still completes', async () => {
    // Prepare
    await fanin.sendRequest({ definition: 'quote', aggregateId: 'q-1', recipients: Array(4).fill(bank) });
    await fanin.drain();
    const subs = await client.receive(fanin.targetUrl(bank));
    expect(subs).toHaveLength(4);
    fanin.consumers.clear();

    // Act: two replies while the partition is available, two after it is disabled
    const before = await Promise.all(subs.slice(0, 2).map((s) => client.reply(s, { ok: s.replyId })));
    const home = before[0]?.partition ?? -1;
    await fanin.destination().setEnabled(home, false);
    const after = await Promise.all(
      subs
        .slice(2)
        .map((s) =>
          new FaninClient({ sqs: aws.sqs, replies: fanin.destination() }).reply(s, { ok: s.replyId }),
        ),
    );

    // Assess
    expect(before.every((r) => r.partition === home && r.queueUrl === subs[0]?.replyTo)).toBe(true);
    expect(after.map((r) => r.partition)).not.toContain(home);
    expect(new Set(after.map((r) => r.partition)).size).toBe(1);
    fanin.consumers.add(0).add(1).add(2);
    await fanin.drain();
    expect(await fanin.outputs('completed')).toMatchObject([{ aggregateId: 'q-1', counts: { received: 4 } }]);
    await fanin.destination().setEnabled(home, true);
    for (const s of subs) await client.ack(s);
  });

  it('a partition at its high threshold is skipped; with every partition unavailable the send fails with each reason and sends nothing', async () => {
    // Prepare: consumers stopped, partition 0 filled to its threshold (5)
    fanin.consumers.clear();
    const destination = fanin.destination();
    const [p0, p1, p2] = fanin.provisioned.replyQueueUrls;
    for (let i = 0; i < 5; i += 1) {
      await aws.sqs.send(new SendMessageCommand({ QueueUrl: p0, MessageBody: '{}' }));
    }
    await destination.setEnabled(2, false);

    // Act
    const routed = await destination.send({ body: '{}' }, { kind: 'prefer-local', local: 0 });
    for (let i = 0; i < 4; i += 1) await destination.send({ body: '{}' }, { kind: 'balanced' });
    destination.invalidate();
    const failure = await destination.send({ body: '{}' }, { kind: 'balanced' }).catch((e: unknown) => e);

    // Assess
    expect(routed.partition).toBe(1);
    expect(failure).toBeInstanceOf(NoPartitionAvailableError);
    expect((failure as NoPartitionAvailableError).partitions).toEqual([
      { index: 0, reason: 'at-high-threshold' },
      { index: 1, reason: 'at-high-threshold' },
      { index: 2, reason: 'send-disabled' },
    ]);
    expect([await queueDepth(p0 ?? ''), await queueDepth(p1 ?? ''), await queueDepth(p2 ?? '')]).toEqual([
      5, 5, 0,
    ]);

    // a whole batch is routed before anything is sent: one unroutable message sends none
    await destination.setEnabled(2, true);
    const batchFailure = await destination
      .sendBatch(
        Array.from({ length: 7 }, () => ({
          message: { body: '{}' },
          policy: { kind: 'affinity', key: 'x' } as const,
        })),
      )
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(batchFailure).toBeUndefined();
    expect(await queueDepth(p2 ?? '')).toBe(7);
    destination.invalidate();
    const none = await destination
      .sendBatch([{ message: { body: '{}' }, policy: { kind: 'balanced' } }])
      .catch((e: unknown) => e);
    expect(none).toBeInstanceOf(NoPartitionAvailableError);
    expect(await queueDepth(p2 ?? '')).toBe(7);
  });
});
