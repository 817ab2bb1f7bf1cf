import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ReceiveMessageCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadLocalConfig } from '../../../local/config.ts';
import { LocalRuntime, runtimeConfigOf } from '../../../local/runtime.ts';
import { ownSenderId } from '../../../local/sender-id.ts';
import { SENT_AT_ATTRIBUTE } from '../../../shared/adapters/sqs-queues.ts';
import { createDistributor } from '../../../shared/app.ts';
import { QueueRole } from '../../../shared/topology/topology.ts';
import { aws } from '../../support/clients.ts';
import { EMULATOR_SENDER, FaninUnderTest, takeAll } from '../../support/fanin.ts';

/**
 * The distributor built from a configuration keeps a moved reply's first send time
 * (`fanin-origin-sent-at`) only on a copy its configuration's `trustedMovers` sent
 * (docs/security.md, "Who may date a reply"): a reply it moved before, moved again, still arrived
 * when SQS first accepted it; a time any other sender put there is replaced by the copy's own
 * `SentTimestamp`. The emulator names every sender alike (`000000000000`), so the copy on the
 * backlog stands for one the distributor sent when its sender is trusted, and for a responder's
 * when it is not.
 */
describe("the distributor's trusted movers, from the configuration", () => {
  let fanin: FaninUnderTest;

  beforeAll(async () => {
    fanin = await FaninUnderTest.start([
      { name: 'pair', fanOut: { type: 'none' }, completion: { strategy: 'all' }, timeoutSeconds: 60 },
    ]);
  });
  afterAll(() => fanin.stop());

  /** Puts one reply on the backlog claiming it was first sent at `early`; returns what a cycle moved out of it. */
  async function moved(trustedMovers: readonly string[] | undefined, early: number) {
    const backlog = fanin.config.queueUrls[QueueRole.BACKLOG];
    for (const url of fanin.config.replyQueueUrls) await takeAll(url);
    await aws.sqs.send(
      new SendMessageCommand({
        QueueUrl: backlog,
        MessageBody: '{"v":1}',
        MessageAttributes: {
          'fanin-aggregate-id': { DataType: 'String', StringValue: `movers-${early}` },
          'fanin-reply-id': { DataType: 'String', StringValue: '0' },
          [SENT_AT_ATTRIBUTE]: { DataType: 'Number', StringValue: String(early) },
        },
      }),
    );
    const { trustedMovers: _, ...config } = fanin.config;
    const distributor = createDistributor(
      { ...config, ...(trustedMovers ? { trustedMovers } : {}) },
      fanin.clients,
    );
    await distributor.cycle();
    const copies = [];
    for (const url of fanin.config.replyQueueUrls) {
      const { Messages = [] } = await aws.sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: url,
          MaxNumberOfMessages: 10,
          MessageAttributeNames: ['All'],
          MessageSystemAttributeNames: ['SentTimestamp'],
        }),
      );
      copies.push(...Messages);
    }
    expect(copies).toHaveLength(1);
    return copies[0];
  }

  it('keeps the first send time on a copy its own sender sent, when the configuration names that sender', async () => {
    // GIVEN a distributor whose configuration trusts the emulator's sender (the local runtime's)
    const early = Date.now() - 120_000;
    // WHEN it moves a copy carrying its first send time
    const copy = await moved([EMULATOR_SENDER], early);
    // THEN the partition's copy still says when SQS first accepted the reply (mutant killed: the
    // configuration's trustedMovers not given to the distributor's moves)
    expect(copy?.MessageAttributes?.[SENT_AT_ATTRIBUTE]?.StringValue).toBe(String(early));
  });

  it("replaces a time it cannot trust with the copy's own SentTimestamp", async () => {
    // GIVEN a distributor that trusts no sender (a configuration without trustedMovers)
    const early = Date.now() - 120_000;
    const before = Date.now();
    // WHEN it moves a copy claiming an early first send time
    const copy = await moved(undefined, early);
    // THEN the claim is replaced by when SQS accepted the backlog's copy, never kept
    const stamped = Number(copy?.MessageAttributes?.[SENT_AT_ATTRIBUTE]?.StringValue);
    expect(stamped).toBeGreaterThanOrEqual(before - 1000);
    expect(stamped).not.toBe(early);
  });

  it('the local runtime trusts the SenderId its endpoint gives its own messages', async () => {
    // GIVEN the emulator the project starts WHEN the runtime asks which sender it is
    const sender = await ownSenderId(aws.sqs, `${fanin.topology.prefix}-movers`);
    // THEN it is the emulator's one sender, and the configuration the runtime's handlers and
    // distributor are built from names it (mutant killed: the runtime's sender left out)
    expect(sender).toBe(EMULATOR_SENDER);
    expect(
      runtimeConfigOf(fanin.topology, fanin.provisioned, {}, undefined, [EMULATOR_SENDER]).trustedMovers,
    ).toEqual([EMULATOR_SENDER]);
    expect(runtimeConfigOf(fanin.topology, fanin.provisioned, {}).trustedMovers).toBeUndefined();
  });

  it("the local runtime's handlers and distributor are built trusting that sender", async () => {
    // GIVEN the repository's configuration, under a prefix of its own
    const config = await loadLocalConfig(
      join(process.cwd(), 'fanin.config.ts'),
      `movers${Date.now() % 100000}`,
    );
    // WHEN the runtime starts on the emulator
    const runtime = await LocalRuntime.start({
      config,
      stateFile: join(await mkdtemp(join(tmpdir(), 'fanin-movers-')), 'runtime.json'),
      dashboardPort: false,
      log: () => undefined,
      logOutputs: false,
    });
    try {
      // THEN its context trusts the emulator's sender (mutant killed: the probed sender not passed on)
      expect(runtime.ctx.trustedMovers).toEqual([EMULATOR_SENDER]);
    } finally {
      await runtime.stop();
    }
  });
});
