import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createDistributor } from '../../../shared/app.ts';
import { FaninUnderTest, queueDepth } from '../../support/fanin.ts';
import { idleLongPollsAtOnce } from '../../support/long-polls.ts';
import { runCli } from '../../support/runtime.ts';

/**
 * Scale-in through the command line against a deployed topology (`--stack`): `fanin evacuate`
 * refuses an enabled partition and moves a disabled one's replies to the backlog, for the
 * distributor to give to the others (docs/partitions.md, docs/cli.md). The distributor's own
 * moves are in test/integration/features/distributor.test.ts; this one spawns the CLI, so it sits
 * with the tooling tests.
 */
describe('scale-in from the command line', () => {
  let fanin: FaninUnderTest;
  let abort: AbortController;

  beforeEach(async () => {
    abort = new AbortController();
    fanin = await FaninUnderTest.start(
      [{ name: 'batch', fanOut: { type: 'none' }, completion: { strategy: 'all' }, timeoutSeconds: 3600 }],
      { replyPartitions: 2, partitioning: { highWatermark: 100, lowWatermark: 20, stallSeconds: 30 } },
    );
  });
  afterEach(async () => {
    abort.abort();
    await fanin.stop();
  });

  /** This topology's distributor on the test clock; its long polls that find nothing come back at once. */
  function distributor() {
    return createDistributor(
      fanin.config,
      { ...fanin.clients, sqs: idleLongPollsAtOnce(fanin.clients.sqs) },
      fanin.clock.read,
    );
  }

  const partitionUrl = (index: number): string => fanin.provisioned.replyQueueUrls[index] ?? '';

  it('evacuate refuses an enabled partition, then moves a disabled one to the backlog; partitions shows the deployed settings', async () => {
    // Prepare: replies waiting on partition 1, whose consumer does not run
    fanin.consumers.clear();
    await fanin.sendRequest({ definition: 'batch', aggregateId: 'cli-scale-in', expected: 4 });
    await fanin.drain();
    await fanin.destination().setEnabled(1, true);
    for (let r = 0; r < 4; r += 1) {
      await fanin.sendReply({ r }, { 'fanin-aggregate-id': 'cli-scale-in', 'fanin-reply-id': String(r) }, 1);
    }
    const partition = partitionUrl(1);
    const waiting = await queueDepth(partition);
    const stack = ['--stack', fanin.topology.prefix];

    // Act
    const refused = await runCli(['evacuate', '1', ...stack]);
    const disabled = await runCli(['disable', '1', ...stack]);
    const evacuated = await runCli(['evacuate', '1', ...stack, '--json']);
    await distributor().cycle({ signal: abort.signal });
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
  }, 120_000);
});
