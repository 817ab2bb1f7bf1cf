import { SendMessageBatchCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handleRequest } from '../../../shared/use-cases/fan-out.ts';
import type { Publication } from '../../support/aws-probe.ts';
import { aws } from '../../support/clients.ts';
import { expectInvariants } from '../../support/failpoints.ts';
import { FaninUnderTest, takeAll } from '../../support/fanin.ts';

const KB = 1024;
/** SQS's largest message; the body leaves room for the attributes. */
const SQS_MAX_BODY = 1024 * KB - 4 * KB;

/**
 * Size limits end in an outcome, never in the DLQ and never stuck: DynamoDB's 400 KB item and
 * 4 MB transaction, SQS's 1 MiB message, the 2 KB partition key, and a fan-out too large for one
 * invocation's time.
 */
describe('size matrix', () => {
  let withBucket: FaninUnderTest;
  let withoutBucket: FaninUnderTest;
  let n = 0;
  const nextId = (name: string) => `${name}-${++n}-${Date.now().toString(36)}`;
  const target = `adv-big-${Math.random().toString(36).slice(2, 8)}`;
  const definitions = [
    {
      name: 'big',
      fanOut: { type: 'none' as const },
      completion: { strategy: 'all' as const },
      timeoutSeconds: 3600,
      unknownTimeoutSeconds: 600,
    },
    {
      name: 'wide',
      fanOut: { type: 'splitter' as const, itemsPath: '$.items', target },
      completion: { strategy: 'all' as const },
      timeoutSeconds: 3600,
    },
  ];

  beforeAll(async () => {
    withBucket = await FaninUnderTest.start(definitions, { claimCheckThresholdBytes: 200 * KB });
    withoutBucket = await FaninUnderTest.start(definitions);
    await withBucket.targetQueue(target, true);
  });
  afterAll(async () => {
    await withBucket.stop();
    await withoutBucket.stop();
  });

  const routed = (fanin: FaninUnderTest, messageId: string): Publication[] =>
    fanin.probe.published.filter(
      (p) => (p.body.message as { messageId?: unknown } | undefined)?.messageId === messageId,
    );
  const body = (bytes: number, tag: string) => ({ tag, pad: 'p'.repeat(bytes - 40) });

  it('20 held replies of 300 KB (over the 4 MB transaction limit) are consolidated when their aggregate opens and end in one result', async () => {
    // Kills the mutant "consolidate every held reply in one transaction".
    // Prepare: 20 replies before their aggregate
    const fanin = withBucket;
    const id = nextId('held20');
    for (let r = 0; r < 20; r += 1) {
      await fanin.sendReply(body(300 * KB, `h${r}`), {
        'fanin-aggregate-id': id,
        'fanin-reply-id': String(r),
        'fanin-definition': 'big',
      });
    }
    await fanin.drain();

    // Act
    await fanin.sendRequest({ definition: 'big', aggregateId: id, expected: 20 });
    await fanin.drain();

    // Assess
    const output = await expectInvariants(fanin, id, { mode: 'strict' });
    expect(output).toMatchObject({
      type: 'fanin.aggregate.completed',
      counts: { expected: 20, received: 20 },
    });
  }, 180_000);

  it.each([300 * KB, 500 * KB, SQS_MAX_BODY])(
    'an inline reply body of %i bytes is recorded through the claim check with a bucket, and goes to the error output with a reason without one',
    async (bytes) => {
      // Kills the mutant "store any inline body in the reply item".
      for (const fanin of [withBucket, withoutBucket]) {
        // Prepare
        const id = nextId('inline');
        await fanin.sendRequest({ definition: 'big', aggregateId: id, expected: 1 });
        await fanin.drain();

        // Act
        const messageId = await fanin.sendReply(body(bytes, 'big'), {
          'fanin-aggregate-id': id,
          'fanin-reply-id': '0',
          'fanin-definition': 'big',
        });
        await fanin.drain();

        // Assess: recorded (through the claim check, or inline when it fits an item), or refused
        // to the error output with a reason; never the DLQ, never left in the queue
        const errors = routed(fanin, messageId).filter((p) => p.channel === 'error');
        if (fanin === withBucket || errors.length === 0) {
          // Without a bucket a body that fits an item is kept inline; its result may then be
          // too large for SQS, which fails the aggregate with a reason (a documented outcome).
          const output = await expectInvariants(fanin, id, {
            mode: 'strict',
            expectError: fanin === withoutBucket,
          });
          expect(output).toMatchObject({ counts: { received: 1 } });
          if (output.type === 'fanin.aggregate.failed') expect(output.reason).toEqual(expect.any(String));
          else expect(output.type).toBe('fanin.aggregate.completed');
          expect(errors).toEqual([]);
        } else {
          expect(errors).toHaveLength(1);
          expect(errors[0]?.body.reason).toEqual(expect.any(String));
          fanin.expectNoTerminalOutput(id);
          expect(await fanin.deadLetters()).toEqual({});
        }
      }
    },
    120_000,
  );

  it('an aggregate id of 3 KB goes to the error output with a reason, as a request and as a reply', async () => {
    // Kills the mutant "use any aggregate id as the partition key".
    const fanin = withoutBucket;
    const id = `a${'x'.repeat(3 * KB)}`;
    // Act
    await fanin.sendRequest({ definition: 'big', aggregateId: id, expected: 1 });
    const replyId = await fanin.sendReply({ r: 0 }, { 'fanin-aggregate-id': id, 'fanin-reply-id': '0' });
    await fanin.drain();

    // Assess
    const requestErrors = fanin
      .published('error')
      .filter((p) => (p.body.message as { body?: string } | undefined)?.body?.includes(id));
    expect(requestErrors.length).toBeGreaterThanOrEqual(1);
    const replyFate = routed(fanin, replyId);
    expect(replyFate.map((p) => p.channel)).toEqual([expect.stringMatching(/^(error|unknown)$/)]);
    for (const p of [...requestErrors, ...replyFate]) expect(p.body.reason).toEqual(expect.any(String));
    expect(await fanin.deadLetters()).toEqual({});
    expect((await fanin.unfinishedHeaders()).filter((h) => String(h.pk).includes(id))).toEqual([]);
  });

  /**
   * Runs the fan-out as Lambda invocations whose time runs out after two chunks each (the
   * use case then queues the rest), until the ingress queue stays empty. @returns invocations
   */
  async function invokeUntilDone(fanin: FaninUnderTest): Promise<number> {
    let invocations = 0;
    for (;;) {
      const requests = await takeAll(fanin.provisioned.queueUrls.ingress);
      if (requests.length === 0) return invocations;
      for (const m of requests) {
        invocations += 1;
        let checks = 0;
        const attributes: Record<string, string> = {};
        for (const [k, v] of Object.entries(m.MessageAttributes ?? {})) {
          if (v.StringValue !== undefined) attributes[k] = v.StringValue;
        }
        await handleRequest(
          fanin.ctx,
          { messageId: m.MessageId ?? '', body: m.Body ?? '', attributes, receiveCount: 1 },
          { remainingTimeMs: () => (++checks <= 2 ? 60_000 : 1_000) },
        );
      }
      expect(invocations).toBeLessThan(100);
    }
  }

  it('a fan-out continued in another invocation is the same request, also when the producer set no request id', async () => {
    // Kills the mutant "requeue the continuation without its request id" (refused as another request).
    const fanin = withBucket;
    const id = nextId('cont');
    await fanin.sendRequest({
      definition: 'wide',
      aggregateId: id,
      items: Array.from({ length: 2_000 }, (_, i) => i),
    });

    // Act
    const invocations = await invokeUntilDone(fanin);
    const replyIds = (await takeAll(fanin.targetUrl(target))).map(
      (m) => m.MessageAttributes?.['fanin-reply-id']?.StringValue ?? '',
    );

    // Assess
    expect(invocations).toBeGreaterThan(1);
    const refused = fanin.published('error').filter((p) => JSON.stringify(p.body).includes(id));
    expect(refused.map((p) => p.body.reason)).toEqual([]);
    expect(new Set(replyIds).size).toBe(2_000);
    expect(replyIds).toHaveLength(2_000);
  }, 120_000);

  it('a fan-out of 10,000 makes progress across invocations when time runs out, sends each sub-request once, and completes with 10,000 replies', async () => {
    // Kills the mutant "dispatched is all-or-nothing" (each retry resends everything).
    const fanin = withBucket;
    const id = nextId('wide');
    const items = Array.from({ length: 10_000 }, (_, i) => i);
    await fanin.sendRequest({ definition: 'wide', aggregateId: id, items }, { 'fanin-request-id': id });

    // Act: invocations whose time runs out after two checks each, until nothing is queued again
    const invocations = await invokeUntilDone(fanin);
    expect(invocations).toBeGreaterThan(1);
    // a continuation is the same request: never refused as another one using the aggregate id
    const refused = fanin.published('error').filter((p) => JSON.stringify(p.body).includes(id));
    expect(refused.map((p) => p.body.reason)).toEqual([]);
    // The responder answers every sub-request, ten replies per batch call
    const subRequests = await takeAll(fanin.targetUrl(target));
    const replyIds = subRequests.map((m) => m.MessageAttributes?.['fanin-reply-id']?.StringValue ?? '');
    expect(new Set(replyIds).size).toBe(10_000);
    const seen = new Map<string, number>();
    for (const r of replyIds) seen.set(r, (seen.get(r) ?? 0) + 1);
    const resent = [...seen].filter(([, count]) => count > 1).map(([r]) => Number(r));
    expect(
      resent.length,
      `sub-requests sent more than once: ${resent.length}, from ${Math.min(...resent)} to ${Math.max(...resent)}`,
    ).toBe(0);
    for (let i = 0; i < subRequests.length; i += 10) {
      const batch = subRequests.slice(i, i + 10);
      const replyTo = batch[0]?.MessageAttributes?.['fanin-reply-to']?.StringValue ?? '';
      await aws.sqs.send(
        new SendMessageBatchCommand({
          QueueUrl: replyTo,
          Entries: batch.map((m, j) => ({
            Id: String(j),
            MessageBody: '{}',
            MessageAttributes: Object.fromEntries(
              Object.entries(m.MessageAttributes ?? {})
                .filter(([k]) => k.startsWith('fanin-'))
                .map(([k, v]) => [k, { DataType: 'String', StringValue: v.StringValue ?? '' }]),
            ),
          })),
        }),
      );
    }
    await fanin.drain();

    // Assess
    const { output } = fanin.expectExactlyOneTerminalOutput(id, 'strict');
    expect(output).toMatchObject({
      type: 'fanin.aggregate.completed',
      counts: { expected: 10_000, received: 10_000 },
    });
  }, 600_000);
});
