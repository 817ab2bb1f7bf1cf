import { SendMessageBatchCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createDistributor } from '../../../shared/app.ts';
import { aws } from '../../support/clients.ts';
import { eachFailpoint, expectClosedCleanly, InjectedCrash } from '../../support/failpoints.ts';
import { FaninUnderTest, queueDepth } from '../../support/fanin.ts';

/**
 * The failpoint matrix beyond the reply and fan-out paths (crash-recovery.test.ts): the timeout,
 * the consolidation of unknown replies, and redistribution. In each scenario every external call
 * is crashed in turn; after redelivery, the sweeper and the next distributor cycle, every
 * aggregate ends with exactly one terminal output holding every accepted reply, and nothing is
 * left in state but its tombstone.
 */
describe('fault matrix', () => {
  let fanin: FaninUnderTest;

  beforeAll(async () => {
    fanin = await FaninUnderTest.start(
      [
        { name: 'deadline', fanOut: { type: 'none' }, completion: { strategy: 'all' }, timeoutSeconds: 60 },
        {
          name: 'early',
          fanOut: { type: 'none' },
          completion: { strategy: 'all' },
          timeoutSeconds: 600,
          unknownTimeoutSeconds: 300,
        },
      ],
      { replyPartitions: 2, partitioning: { highWatermark: 10, lowWatermark: 2, stallSeconds: 30 } },
    );
  });
  afterAll(() => fanin.stop());

  it('timeout: a crash at any call of the expiry leaves exactly one timed-out output listing the missing reply', async () => {
    // A fan-out killed before its end comes back after the ingress queue's visibility timeout,
    // past this deadline: replies sent after that arrive after the deadline, and are late.
    const repliesSentAt = new Map<string, number>();
    const afterDeadline = new Set<string>();
    const runs = await eachFailpoint(
      fanin,
      async (id) => {
        await fanin.sendRequest({ definition: 'deadline', aggregateId: id, expected: 3 });
        await fanin.drain();
        repliesSentAt.set(id, fanin.clock.now);
        for (const r of ['0', '2'])
          await fanin.sendReply({ r }, { 'fanin-aggregate-id': id, 'fanin-reply-id': r });
        await fanin.drain();
        fanin.clock.advance(61_000);
        await fanin.sweep().catch((error: unknown) => {
          if (!(error instanceof AggregateError || error instanceof InjectedCrash)) throw error;
        });
      },
      async (id) => {
        const timedOut = await fanin.outputs('timed-out');
        expect(timedOut.map((o) => o.aggregateId)).toEqual([id]);
        const late = (repliesSentAt.get(id) ?? 0) >= Number(timedOut[0]?.openedAt) + 60_000;
        if (late) afterDeadline.add(id);
        expect(timedOut[0]).toMatchObject({
          counts: { received: late ? 0 : 2, expected: 3 },
          missing: late ? [{ replyId: '0' }, { replyId: '1' }, { replyId: '2' }] : [{ replyId: '1' }],
        });
        const lateOutputs = new Set((await fanin.outputs('late')).map((o) => o.replyId));
        expect([...lateOutputs].sort()).toEqual(late ? ['0', '2'] : []);
        expect(await fanin.outputs('completed')).toEqual([]);
        await expectClosedCleanly(fanin, id);
      },
    );
    expect(runs).toBeGreaterThan(8);
    // Both kinds of run happened: replies on time, and replies after a fan-out's late return
    expect(afterDeadline.size).toBeGreaterThan(0);
    expect(afterDeadline.size).toBeLessThan(runs);
  });

  it('unknown consolidation: a crash at any call while held replies are consolidated loses none of them', async () => {
    const runs = await eachFailpoint(
      fanin,
      async (id) => {
        for (const r of ['0', '1']) {
          await fanin.sendReply(
            { early: r },
            { 'fanin-aggregate-id': id, 'fanin-reply-id': r, 'fanin-definition': 'early' },
          );
        }
        await fanin.drain();
        await fanin.sendRequest({ definition: 'early', aggregateId: id, expected: 3 });
        await fanin.drain();
        await fanin.sendReply(
          { late: '2' },
          { 'fanin-aggregate-id': id, 'fanin-reply-id': '2', 'fanin-definition': 'early' },
        );
        await fanin.drain();
      },
      async (id) => {
        // a crash before the reply was held or consolidated is redelivered; the sweeper settles held ones
        fanin.clock.advance(301_000);
        await fanin.sweep();
        await fanin.drain();
        const completed = await fanin.outputs('completed');
        expect(completed.map((o) => o.aggregateId)).toEqual([id]);
        expect(completed[0]).toMatchObject({ counts: { received: 3 } });
        expect(await fanin.outputs('unknown')).toEqual([]);
        expect(await fanin.outputs('late')).toEqual([]);
        await expectClosedCleanly(fanin, id);
      },
    );
    expect(runs).toBeGreaterThan(10);
  });
});

/**
 * Redistribution (the distributor part of the matrix), on a topology of its own: a test that times
 * out cannot leave its messages or its cycles behind for another test, and its cycles stop on a
 * signal aborted after it.
 */
describe('fault matrix: redistribution', () => {
  let fanin: FaninUnderTest;
  let abort: AbortController;

  beforeEach(async () => {
    abort = new AbortController();
    fanin = await FaninUnderTest.start(
      [{ name: 'deadline', fanOut: { type: 'none' }, completion: { strategy: 'all' }, timeoutSeconds: 60 }],
      { replyPartitions: 2, partitioning: { highWatermark: 10, lowWatermark: 2, stallSeconds: 30 } },
    );
  });
  afterEach(async () => {
    abort.abort();
    await fanin.stop();
  });

  it('a distributor crash at any SQS call loses no reply and counts none twice, replies without a reply id included', async () => {
    const healthySqs = aws.sqs;
    const signal = abort.signal;
    for (let k = 1; ; k += 1) {
      // Prepare: three aggregates whose replies all wait in the backlog; the third's carry no
      // fanin-reply-id (their identity is their SQS message id) and one of its five never comes
      const ids = [0, 1, 2].map((a) => `move-${k}-${a}`);
      const [complete1, complete2, partial] = ids as [string, string, string];
      fanin.consumers.clear();
      for (const id of ids) await fanin.sendRequest({ definition: 'deadline', aggregateId: id, expected: 5 });
      await fanin.drain();
      const entries = ids.flatMap((id) =>
        (id === partial ? [0, 1, 2, 3] : [0, 1, 2, 3, 4]).map((r) => ({
          Id: '0',
          MessageBody: JSON.stringify({ r }),
          MessageAttributes: {
            'fanin-aggregate-id': { DataType: 'String' as const, StringValue: id },
            ...(id === partial
              ? {}
              : { 'fanin-reply-id': { DataType: 'String' as const, StringValue: String(r) } }),
          },
        })),
      );
      for (let i = 0; i < entries.length; i += 10) {
        await healthySqs.send(
          new SendMessageBatchCommand({
            QueueUrl: fanin.provisioned.queueUrls.backlog,
            Entries: entries.slice(i, i + 10).map((e, j) => ({ ...e, Id: String(j) })),
          }),
        );
      }

      // Act: one cycle that crashes at its k-th SQS call, then healthy cycles and consumers
      let calls = 0;
      const crashing = new Proxy(healthySqs, {
        get(target, property, receiver) {
          const value = Reflect.get(target, property, receiver);
          if (property !== 'send' || typeof value !== 'function') return value;
          return (...args: unknown[]) => {
            calls += 1;
            if (calls === k) return Promise.reject(new InjectedCrash(`sqs call ${k}`));
            return (value as (...a: unknown[]) => unknown).apply(target, args);
          };
        },
      }) as SQSClient;
      await createDistributor(fanin.config, { ...fanin.clients, sqs: crashing }, fanin.clock.read, {
        moveVisibilitySeconds: 1,
      })
        .cycle({ signal })
        .catch((error: unknown) => {
          if (!(error instanceof InjectedCrash)) throw error;
        });
      // A failed depth read is not an exception (the partition counts as unreachable): the
      // failpoint was hit when the cycle made at least k calls.
      const crashed = calls >= k;
      // A move that died in flight leaves its messages invisible at the source for one (real) second.
      if (crashed) await new Promise((resolve) => setTimeout(resolve, 1_100));
      const distributor = createDistributor(fanin.config, fanin.clients, fanin.clock.read);
      fanin.consumers.add(0).add(1);
      for (let cycle = 0; cycle < 6; cycle += 1) {
        fanin.clock.advance(31_000); // in-flight messages of the crashed cycle: visible again
        const report = await distributor.cycle({ signal });
        await fanin.drain();
        if (report.backlogEmpty && (await queueDepth(fanin.provisioned.queueUrls.backlog)) === 0) break;
      }
      const completed = await fanin.outputs('completed');
      fanin.clock.advance(61_000);
      await fanin.sweep();

      // Assess: the two whole aggregates completed with 5 each; the third waited for its fifth
      // reply and timed out with the four that came, each counted once
      expect(completed.map((o) => o.aggregateId).sort()).toEqual([complete1, complete2]);
      expect(completed.every((o) => (o.counts as { received: number }).received === 5)).toBe(true);
      const timedOut = await fanin.outputs('timed-out');
      expect(timedOut.map((o) => o.aggregateId)).toEqual([partial]);
      expect(timedOut[0]).toMatchObject({ counts: { received: 4, expected: 5 } });
      for (const id of ids) await expectClosedCleanly(fanin, id);
      expect(await fanin.outputs('late')).toEqual([]);
      if (!crashed) {
        expect(k).toBeGreaterThan(5);
        return;
      }
    }
  }, 300_000);
});
