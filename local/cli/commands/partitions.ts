import { queueDepth } from '../../../shared/adapters/sqs-queues.ts';
import { destinationOf, runtimeConfigOf, type Target } from '../../../shared/client/connect.ts';
import { createDistributor } from '../../../shared/partitions/reply-destination.ts';
import { formatDuration } from '../../describe.ts';
import { type Args, type Command, CommandError, Progress, table, UsageError } from '../io.ts';
import * as specs from '../specs.ts';

async function depth(target: Target, url: string | undefined): Promise<number | null> {
  if (!url) return null;
  return queueDepth(target.clients.sqs, url).then(
    (d) => d.depth,
    () => null,
  );
}

/** Every partition's figures: what `partitions` prints and `enable`/`disable` confirm with. */
async function partitionReport(target: Target) {
  const [statuses, backlog, dlqDepths] = await Promise.all([
    // The registry state comes with each partition's status: one read of the partition items.
    destinationOf(target).status(true),
    depth(target, target.queues.backlog.url),
    Promise.all(target.replyPartitions.map((p) => depth(target, p.dlqUrl))),
  ]);
  const { lowWatermark, highWatermark, highThreshold, stallSeconds } = target.partitioning;
  // Partitions drained on a schedule (replyDrainIntervalSeconds): no consumer between two drains.
  const drained = new Set(target.partitioning.drained ?? []);
  return {
    watermarks: {
      low: lowWatermark,
      high: highWatermark,
      highThreshold,
      stallSeconds,
      source: target.partitioningSource,
    },
    backlog: { name: target.queues.backlog.name, depth: backlog },
    partitions: statuses.map((s) => {
      const state = s.state;
      return {
        index: s.index,
        name: target.replyPartitions[s.index]?.name ?? s.queueUrl,
        queueUrl: s.queueUrl,
        depth: s.depth ?? null,
        visible: s.visible ?? null,
        inFlight: s.inFlight ?? null,
        enabled: s.enabled,
        drained: drained.has(s.index),
        available: s.available,
        reason: s.reason ?? null,
        detail: s.detail ?? null,
        dlqDepth: dlqDepths[s.index] ?? null,
        distributor: {
          lastDepth: state?.lastDepth ?? null,
          lastProgressAt: state?.lastProgressAt ?? null,
        },
      };
    }),
  };
}

/** `fanin partitions`: the reply destination. */
export const partitions: Command = {
  ...specs.partitions,
  async run(io) {
    const report = await partitionReport(await io.target());
    if (io.wantsJson) {
      io.json(report);
      return 0;
    }
    const now = Date.now();
    for (const line of table([
      [
        'PARTITION',
        'DEPTH',
        'VISIBLE',
        'IN FLIGHT',
        'ENABLED',
        'AVAILABLE',
        'CONSUMED',
        'DLQ',
        'DISTRIBUTOR',
      ],
      ...report.partitions.map((p) => [
        `${p.index} ${p.name}`,
        String(p.depth ?? '?'),
        String(p.visible ?? '?'),
        String(p.inFlight ?? '?'),
        p.enabled ? 'yes' : 'no',
        p.available ? 'yes' : `no (${p.reason})`,
        p.drained ? 'drained on a schedule' : 'as replies arrive',
        String(p.dlqDepth ?? '?'),
        p.distributor.lastProgressAt === null
          ? 'not seen yet'
          : `depth ${p.distributor.lastDepth} after its last cycle; progress ${formatDuration(now - p.distributor.lastProgressAt)} ago`,
      ]),
    ])) {
      io.out(line);
    }
    io.out(`backlog ${report.backlog.name}: ${report.backlog.depth ?? '?'} waiting`);
    io.out(
      `watermarks: low ${report.watermarks.low}, high ${report.watermarks.high}; high threshold ${report.watermarks.highThreshold} (at or above it a partition takes no new messages); stalled after ${report.watermarks.stallSeconds} s without progress — from ${report.watermarks.source}`,
    );
    return 0;
  },
};

function partitionIndex(args: Args, verb: string): number {
  const text = args.positionals[0];
  if (text === undefined) throw new UsageError(`${verb} needs a partition index`);
  const index = Number(text);
  if (!Number.isInteger(index) || index < 0)
    throw new UsageError(`partition index must be an integer >= 0 (given "${text}")`);
  return index;
}

function toggle(enabled: boolean): Command {
  const verb = enabled ? 'enable' : 'disable';
  return {
    ...(enabled ? specs.enable : specs.disable),
    async run(io, args) {
      const index = partitionIndex(args, verb);
      const target = await io.target();
      try {
        await destinationOf(target).setEnabled(index, enabled);
      } catch (error) {
        throw new CommandError((error as Error).message);
      }
      const report = await partitionReport(target);
      const partition = report.partitions.find((p) => p.index === index);
      if (io.wantsJson) io.json(partition);
      else
        io.out(
          `partition ${index} (${partition?.name}) is ${enabled ? 'enabled' : 'send-disabled'}; available: ${
            partition?.available ? 'yes' : `no (${partition?.reason})`
          }, depth ${partition?.depth ?? '?'}`,
        );
      return 0;
    },
  };
}

/** `fanin enable <n>`. */
export const enable = toggle(true);
/** `fanin disable <n>`. */
export const disable = toggle(false);

/** `fanin evacuate <n>`: a disabled partition's waiting messages go to the backlog (scale-in, step 2). */
export const evacuate: Command = {
  ...specs.evacuate,
  async run(io, args) {
    const index = partitionIndex(args, 'evacuate');
    const target = await io.target();
    const before = (await partitionReport(target)).partitions.find((p) => p.index === index);
    if (!before) {
      throw new CommandError(
        `there is no reply partition ${index} (partitions 0 to ${target.replyPartitions.length - 1})`,
      );
    }
    if (!target.queues.backlog.url) {
      throw new CommandError(
        `this stack has no backlog queue (${target.queues.backlog.name}) to evacuate into`,
      );
    }
    if (before.enabled && args.values.force !== true) {
      throw new CommandError(
        `partition ${index} (${before.name}) is enabled: producers would keep refilling it. Disable it first (fanin disable ${index}), or pass --force`,
      );
    }
    const waiting = before.visible ?? 0;
    const progress = new Progress(
      io,
      `evacuate ${before.name} -> ${target.queues.backlog.name}`,
      waiting || undefined,
    );
    progress.update(0);
    let moved: number;
    try {
      moved = await createDistributor(runtimeConfigOf(target), target.clients).evacuate(index, {
        onBatch: (count) => progress.update(count, Math.max(waiting, count)),
        stop: () => io.signal.aborted,
        signal: io.signal,
      });
    } catch (error) {
      progress.finish('stopped');
      throw new CommandError((error as Error).message);
    }
    progress.finish(
      moved === 0 ? `nothing to move: ${before.name} has no waiting message` : `moved ${moved}`,
    );
    const after = (await partitionReport(target)).partitions.find((p) => p.index === index);
    const result = {
      partition: index,
      name: before.name,
      moved,
      backlog: target.queues.backlog.name,
      remaining: after?.depth ?? null,
      inFlight: after?.inFlight ?? null,
    };
    if (io.wantsJson) io.json(result);
    else {
      io.out(
        `moved ${moved} message(s) from ${before.name} to ${target.queues.backlog.name}; the distributor feeds them to the enabled partitions`,
      );
      if (result.inFlight)
        io.out(`${result.inFlight} message(s) are still held by a consumer: they finish there or come back`);
    }
    return 0;
  },
};
