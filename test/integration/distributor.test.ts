import { SendMessageBatchCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sqsClient } from '../../shared/aws/clients.ts';
import { FaninUnderTest, queueDepth } from '../support/fanin.ts';
import { runCli } from '../support/runtime.ts';

const AGGREGATES = 100;
const REPLIES = 10;

/**
 * Seed 004: the distributor copies from the backlog to a partition only up to its high watermark
 * and refills it at its low watermark, so a subscriber that arrives late is not starved by one
 * that took everything; a stalled partition's excess goes back and is processed elsewhere.
 */
describe('watermark distributor', () => {
  let fanin: FaninUnderTest;

  beforeAll(async () => {
    fanin = await FaninUnderTest.start(
      [{ name: 'batch', fanOut: { type: 'none' }, completion: { strategy: 'all' }, timeoutSeconds: 3600 }],
      { replyPartitions: 2, partitioning: { highWatermark: 100, lowWatermark: 20, stallSeconds: 30 } },
    );
  });
  afterAll(() => fanin.stop());

  async function openAggregates(prefix: string): Promise<void> {
    for (let a = 0; a < AGGREGATES; a += 1) {
      await fanin.sendRequest({ definition: 'batch', aggregateId: `${prefix}-${a}`, expected: REPLIES });
    }
    fanin.consumers.clear();
    await fanin.drain();
  }

  async function fillBacklog(prefix: string): Promise<void> {
    const entries = [];
    for (let a = 0; a < AGGREGATES; a += 1) {
      for (let r = 0; r < REPLIES; r += 1) {
        entries.push({
          Id: String(entries.length % 10),
          MessageBody: JSON.stringify({ a, r }),
          MessageAttributes: {
            'fanin-aggregate-id': { DataType: 'String', StringValue: `${prefix}-${a}` },
            'fanin-reply-id': { DataType: 'String', StringValue: String(r) },
          },
        });
      }
    }
    for (let i = 0; i < entries.length; i += 10) {
      await sqsClient().send(
        new SendMessageBatchCommand({
          QueueUrl: fanin.provisioned.queueUrls.backlog,
          Entries: entries.slice(i, i + 10),
        }),
      );
    }
  }

  it('a partition whose consumer starts late receives work within a bounded number of cycles, and nothing is lost or counted twice', async () => {
    // Prepare: 1,000 replies in the backlog; a consumer only on partition 0
    await openAggregates('s');
    await fillBacklog('s');
    const distributor = fanin.distributor();
    let processed1 = 0;
    let cyclesUntilFed: number | undefined;

    // Act
    for (let cycle = 1; cycle <= 60; cycle += 1) {
      const report = await distributor.cycle();
      if (cycle > 3 && cyclesUntilFed === undefined && processed1 > 0) cyclesUntilFed = cycle - 3;
      for (let b = 0; b < 3; b += 1) await fanin.consumePartition(0);
      if (cycle >= 3) {
        // partition 1's consumer starts at cycle 3
        for (let b = 0; b < 3; b += 1) processed1 += await fanin.consumePartition(1);
      }
      fanin.clock.advance(10_000);
      if (report.backlogEmpty && (await queueDepth(fanin.provisioned.queueUrls.backlog)) === 0) {
        const left =
          (await queueDepth(fanin.provisioned.replyQueueUrls[0] ?? '')) +
          (await queueDepth(fanin.provisioned.replyQueueUrls[1] ?? ''));
        if (left === 0) break;
      }
    }

    // Assess
    expect(processed1).toBeGreaterThan(0);
    expect(cyclesUntilFed).toBeLessThanOrEqual(2);
    const completed = await fanin.outputs('completed');
    expect(completed).toHaveLength(AGGREGATES);
    expect(completed.every((c) => (c.counts as { received: number }).received === REPLIES)).toBe(true);
    expect(await fanin.outputs('late')).toEqual([]);
    expect(await fanin.outputs('unknown')).toEqual([]);
  });

  it('a stalled partition keeps its low watermark and its excess is moved to and processed by the healthy one', async () => {
    // Prepare: partition 1 has no consumer; the first cycle fills both to the high watermark
    await openAggregates('t');
    await fillBacklog('t');
    const distributor = fanin.distributor();
    const first = await distributor.cycle();
    expect(first.fed).toEqual({ 0: 100, 1: 100 });

    // Act: partition 0 drains; partition 1 makes no progress for stallSeconds
    for (let b = 0; b < 10; b += 1) await fanin.consumePartition(0);
    fanin.clock.advance(31_000);
    const second = await distributor.cycle();

    // Assess
    expect(second.stalled).toEqual([1]);
    expect(second.evacuated).toEqual({ 1: 80 });
    expect(await queueDepth(fanin.provisioned.replyQueueUrls[1] ?? '')).toBe(20);
    expect(second.fed[0]).toBe(100);
    // everything but the 20 kept on the stalled partition is processed by partition 0
    for (let cycle = 0; cycle < 40; cycle += 1) {
      for (let b = 0; b < 10; b += 1) await fanin.consumePartition(0);
      fanin.clock.advance(10_000);
      await distributor.cycle();
    }
    expect(await queueDepth(fanin.provisioned.queueUrls.backlog)).toBe(0);
    expect(await queueDepth(fanin.provisioned.replyQueueUrls[1] ?? '')).toBe(20);
    const header = await fanin.ctx.store.listOpen('batch');
    const pending = header.reduce((sum, h) => sum + ((h.expected ?? 0) - h.received), 0);
    expect(pending).toBe(20);
    await fanin.outputs('completed');
  });

  it('scale-in: a disabled partition is evacuated and its replies are processed by the others', async () => {
    // Prepare
    fanin.consumers.clear();
    await fanin.sendRequest({ definition: 'batch', aggregateId: 'scale-in', expected: 3 });
    fanin.consumers.clear();
    await fanin.drain();
    await fanin.destination().setEnabled(1, false);
    const before = await queueDepth(fanin.provisioned.replyQueueUrls[1] ?? '');
    for (let r = 0; r < 3; r += 1) {
      await fanin.sendReply({ r }, { 'fanin-aggregate-id': 'scale-in', 'fanin-reply-id': String(r) }, 1);
    }

    // Act
    const distributor = fanin.distributor();
    const moved = await distributor.evacuate(1);
    await distributor.cycle();
    fanin.consumers.add(0);
    await fanin.drain();

    // Assess
    expect(moved).toBe(before + 3);
    expect(await queueDepth(fanin.provisioned.replyQueueUrls[1] ?? '')).toBe(0);
    expect((await fanin.ctx.store.getHeader('scale-in'))?.status).toBe('closed');
  });

  it('scale-in from the command line: evacuate refuses an enabled partition, then moves a disabled one to the backlog; partitions shows the deployed settings', async () => {
    // Prepare: replies waiting on partition 1, whose consumer does not run
    fanin.consumers.clear();
    await fanin.sendRequest({ definition: 'batch', aggregateId: 'cli-scale-in', expected: 4 });
    await fanin.drain();
    await fanin.destination().setEnabled(1, true);
    for (let r = 0; r < 4; r += 1) {
      await fanin.sendReply({ r }, { 'fanin-aggregate-id': 'cli-scale-in', 'fanin-reply-id': String(r) }, 1);
    }
    const partition = fanin.provisioned.replyQueueUrls[1] ?? '';
    const waiting = await queueDepth(partition);
    const stack = ['--stack', fanin.topology.prefix];

    // Act
    const refused = await runCli(['evacuate', '1', ...stack]);
    const disabled = await runCli(['disable', '1', ...stack]);
    const evacuated = await runCli(['evacuate', '1', ...stack, '--json']);
    await fanin.distributor().cycle();
    const view = await runCli(['partitions', ...stack, '--json']);
    fanin.consumers.add(0);
    await fanin.drain();

    // Assess: the view shows the settings this deployment's distributor runs with (stall 30 s, not
    // the default 60), as it recorded them
    expect(JSON.parse(view.stdout).watermarks).toMatchObject({
      low: 20,
      high: 100,
      stallSeconds: 30,
      source: expect.stringContaining("the stack's distributor, recorded"),
    });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('partition 1');
    expect(refused.stderr).toContain('is enabled');
    expect(await queueDepth(partition)).toBe(0);
    expect(disabled.code).toBe(0);
    expect(evacuated.code).toBe(0);
    expect(JSON.parse(evacuated.stdout)).toMatchObject({ partition: 1, moved: waiting, remaining: 0 });
    expect((await fanin.ctx.store.getHeader('cli-scale-in'))?.status).toBe('closed');
    const [result] = (await fanin.outputs('completed')).filter((o) => o.aggregateId === 'cli-scale-in');
    expect(result).toMatchObject({ counts: { received: 4 } });
  }, 60_000);
});
