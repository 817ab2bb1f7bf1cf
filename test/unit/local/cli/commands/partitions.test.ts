import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { beforeEach, describe, expect, it } from 'vitest';
import { disable, enable, evacuate, partitions } from '../../../../../local/cli/commands/partitions.ts';
import { CommandError, UsageError } from '../../../../../local/cli/io.ts';
import { args, capture, type LocalWorld, localWorld } from '../../world.ts';

/**
 * The partition commands' own fast test (`partitions`, `enable`, `disable`, `evacuate`) over a
 * local runtime in memory with two reply partitions: the table and --json they print, the indexes
 * they refuse, evacuation into the backlog. test/integration/tooling/cli.test.ts runs them as
 * processes against the emulators.
 */

let world: LocalWorld;
beforeEach(async () => {
  world = await localWorld();
});

describe('fanin partitions', () => {
  it('prints one row per partition, the backlog and the watermarks with where they come from', async () => {
    const { io, out } = capture(world.target);

    expect(await partitions.run(io, args())).toBe(0);

    expect(out[0]).toMatch(
      /^PARTITION\s+DEPTH\s+VISIBLE\s+IN FLIGHT\s+ENABLED\s+AVAILABLE\s+CONSUMED\s+DLQ\s+DISTRIBUTOR$/,
    );
    expect(out[1]).toMatch(/^0 w-reply-0\s+0\s+0\s+0\s+yes\s+yes\s+as replies arrive\s+0\s+not seen yet$/);
    expect(out[2]).toMatch(/^1 w-reply-1\s/);
    expect(out[3]).toBe('backlog w-backlog: 0 waiting');
    expect(out[4]).toMatch(/^watermarks: low \d+, high \d+; high threshold \d+ .* — from .+/);
  });

  it('--json says which partitions are drained on a schedule', async () => {
    const drained = await localWorld({ replyDrainIntervalSeconds: 60 });
    const { io, json } = capture(drained.target, true);

    await partitions.run(io, args());

    const report = json[0] as { partitions: { index: number; drained: boolean; enabled: boolean }[] };
    expect(report.partitions.map((p) => [p.index, p.drained, p.enabled])).toEqual([
      [0, true, true],
      [1, true, true],
    ]);
  });
});

describe('fanin enable and disable', () => {
  it('turns sends to a partition off and on, confirming with its state', async () => {
    const off = capture(world.target);
    await disable.run(off.io, args({}, '1'));
    expect(off.out).toEqual([
      expect.stringMatching(/^partition 1 \(w-reply-1\) is send-disabled; available: no \(.+\), depth 0$/),
    ]);

    const on = capture(world.target, true);
    await enable.run(on.io, args({}, '1'));
    expect(on.json[0]).toMatchObject({ index: 1, enabled: true, available: true });
  });

  it.each(['-1', '1.5', 'one'])('refuses the partition index %s as a usage error', async (index) => {
    const run = disable.run(capture(world.target).io, args({}, index));
    await expect(run).rejects.toBeInstanceOf(UsageError);
    await expect(run).rejects.toThrow(`partition index must be an integer >= 0 (given "${index}")`);
  });

  it('fails with exit 1 for a partition there is not', async () => {
    await expect(disable.run(capture(world.target).io, args({}, '5'))).rejects.toBeInstanceOf(CommandError);
  });
});

describe('fanin evacuate', () => {
  it('refuses an enabled partition unless --force, naming the command that disables it', async () => {
    await expect(evacuate.run(capture(world.target).io, args({}, '0'))).rejects.toThrow(
      'partition 0 (w-reply-0) is enabled: producers would keep refilling it. Disable it first (fanin disable 0), or pass --force',
    );
  });

  it('refuses a partition there is not', async () => {
    await expect(evacuate.run(capture(world.target).io, args({}, '2'))).rejects.toThrow(
      'there is no reply partition 2 (partitions 0 to 1)',
    );
  });

  it('moves the waiting messages of a disabled partition to the backlog', async () => {
    await disable.run(capture(world.target).io, args({}, '1'));
    for (const n of [1, 2, 3]) {
      await world.clients.sqs.send(
        new SendMessageCommand({
          QueueUrl: world.provisioned.replyQueueUrls[1],
          MessageBody: JSON.stringify({ n }),
          MessageGroupId: `g${n}`,
          MessageDeduplicationId: `d${n}`,
        }),
      );
    }
    const { io, out, err } = capture(world.target);

    await evacuate.run(io, args({}, '1'));

    expect(out[0]).toBe(
      'moved 3 message(s) from w-reply-1 to w-backlog; the distributor feeds them to the enabled partitions',
    );
    expect(err.at(-1)).toBe('moved 3');
    const json = capture(world.target, true);
    await partitions.run(json.io, args());
    expect(json.json[0]).toMatchObject({ backlog: { depth: 3 } });
  });

  it('says there was nothing to move from an empty partition', async () => {
    const { io, err, json } = capture(world.target, true);

    await evacuate.run(io, args({ force: true }, '0'));

    expect(err.at(-1)).toBe('nothing to move: w-reply-0 has no waiting message');
    expect(json[0]).toMatchObject({ partition: 0, name: 'w-reply-0', moved: 0, backlog: 'w-backlog' });
  });
});
