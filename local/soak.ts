import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import {
  DeleteMessageBatchCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
} from '@aws-sdk/client-sqs';
import { LocalRuntime } from './runtime.ts';

/** What a soak run measured and whether it held. */
export interface SoakReport {
  readonly minutes: number;
  readonly aggregatesSent: number;
  readonly repliesSent: number;
  readonly duplicatesSent: number;
  readonly completed: number;
  /** Aggregates sent that produced no completed output: must be 0. */
  readonly lost: number;
  /** Completed outputs seen more than once: must be 0. */
  readonly duplicatedOutputs: number;
  /** Aggregates still open at the end: must be 0. */
  readonly openAtEnd: number;
  /** Most open aggregates seen while loaded, and the bound the load allows. */
  readonly maxOpen: number;
  readonly openBound: number;
  /** Heap used (MiB) after warm-up and at the end of the load, and their ratio. */
  readonly heapStartMiB: number;
  readonly heapEndMiB: number;
  readonly heapGrowth: number;
  readonly ok: boolean;
  readonly failures: readonly string[];
}

/** Options of {@link runSoak}. */
export interface SoakOptions {
  /** Load duration. @default 10 */
  readonly minutes?: number;
  /** Aggregates opened per second. @default 5 */
  readonly aggregatesPerSecond?: number;
  /** Replies per aggregate. @default 5 */
  readonly fanOut?: number;
  /** Where progress lines go. @default console.log */
  readonly log?: (line: string) => void;
}

/**
 * A bounded soak on the local runtime: a steady load of aggregates (every reply also sent a
 * second time for one in ten), for a fixed time, then a drain. It holds when memory is steady
 * (heap at the end of the load within 1.5x of the heap after warm-up), open aggregates never
 * exceed what the load allows, no aggregate is lost, no result is emitted twice, and every
 * aggregate is closed at the end. Uses the emulators, or `AWS_ENDPOINT_URL*` when set.
 */
export async function runSoak(options: SoakOptions = {}): Promise<SoakReport> {
  const minutes = options.minutes ?? 10;
  const rate = options.aggregatesPerSecond ?? 5;
  const fanOut = options.fanOut ?? 5;
  const log = options.log ?? console.log;
  const prefix = `soak-${randomBytes(3).toString('hex')}`;
  const dir = await mkdtemp(join(tmpdir(), 'fanin-soak-'));
  const runtime = await LocalRuntime.start({
    config: {
      file: '(soak)',
      prefix,
      replyPartitions: 2,
      fifoReplies: false,
      maxReceiveCount: 5,
      functionTimeoutSeconds: 30,
      partitioning: {},
      definitions: [
        // Replies race their request on purpose: the unknown timeout holds the early ones.
        {
          name: 'soak',
          fanOut: { type: 'none' },
          completion: { strategy: 'all' },
          timeoutSeconds: 300,
          unknownTimeoutSeconds: 60,
        },
      ],
      responderQueues: [],
      claimCheck: false,
      dashboardPort: 0,
      sweepIntervalSeconds: 10,
    },
    stateFile: join(dir, 'runtime.json'),
    dashboardPort: false,
    log: () => undefined,
    logOutputs: false,
  });
  const { sqs } = runtime.clients;
  const ingress = runtime.provisioned.queueUrls.ingress;
  const partitions = runtime.provisioned.replyQueueUrls;
  const completedQueue = runtime.provisioned.queueUrls.completed;
  const sent = new Set<string>();
  const seen = new Map<string, number>();
  let replies = 0;
  let duplicates = 0;
  let maxOpen = 0;
  const heap: number[] = [];
  const failures: string[] = [];

  const collect = async () => {
    for (;;) {
      const { Messages = [] } = await sqs.send(
        new ReceiveMessageCommand({ QueueUrl: completedQueue, MaxNumberOfMessages: 10, WaitTimeSeconds: 0 }),
      );
      if (Messages.length === 0) return;
      for (const m of Messages) {
        const id = String((JSON.parse(m.Body ?? '{}') as { aggregateId?: string }).aggregateId);
        seen.set(id, (seen.get(id) ?? 0) + 1);
      }
      await sqs.send(
        new DeleteMessageBatchCommand({
          QueueUrl: completedQueue,
          Entries: Messages.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle })),
        }),
      );
    }
  };
  let openAtEnd = -1;
  const openCount = async () => (await runtime.ctx.store.listOpen('soak')).length;

  try {
    const end = Date.now() + minutes * 60_000;
    let second = 0;
    while (Date.now() < end) {
      const tick = Date.now();
      const ids = Array.from({ length: rate }, (_, i) => `${prefix}-${second}-${i}`);
      for (let i = 0; i < ids.length; i += 10) {
        await sqs.send(
          new SendMessageBatchCommand({
            QueueUrl: ingress,
            Entries: ids.slice(i, i + 10).map((id, j) => ({
              Id: String(j),
              MessageBody: JSON.stringify({ definition: 'soak', aggregateId: id, expected: fanOut }),
            })),
          }),
        );
      }
      for (const id of ids) sent.add(id);
      // Their replies at once, so some beat their aggregate (held, then consolidated).
      const entries = ids.flatMap((id) =>
        Array.from({ length: fanOut }, (_, r) => {
          const copies = Math.random() < 0.1 ? 2 : 1;
          duplicates += copies - 1;
          return Array.from({ length: copies }, () => ({
            MessageBody: JSON.stringify({ r, pad: 'x'.repeat(200) }),
            MessageAttributes: {
              'fanin-aggregate-id': { DataType: 'String', StringValue: id },
              'fanin-reply-id': { DataType: 'String', StringValue: String(r) },
              'fanin-definition': { DataType: 'String', StringValue: 'soak' },
            },
          }));
        }).flat(),
      );
      replies += entries.length;
      for (let i = 0; i < entries.length; i += 10) {
        await sqs.send(
          new SendMessageBatchCommand({
            QueueUrl: partitions[(i / 10) % partitions.length],
            Entries: entries.slice(i, i + 10).map((e, j) => ({ ...e, Id: String(j) })),
          }),
        );
      }
      second += 1;
      if (second % 5 === 0) {
        await collect();
        const open = await openCount();
        maxOpen = Math.max(maxOpen, open);
        // With --expose-gc (npm run soak), measure live memory, not garbage not yet collected.
        (globalThis as { gc?: () => void }).gc?.();
        heap.push(process.memoryUsage().heapUsed / 2 ** 20);
        log(
          `soak ${second}s: sent ${sent.size}, completed ${seen.size}, open ${open}, heap ${heap.at(-1)?.toFixed(1)} MiB`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, 1000 - (Date.now() - tick))));
    }
    // Drain: everything sent must complete (bounded wait).
    const drainEnd = Date.now() + 120_000;
    while (Date.now() < drainEnd) {
      await collect();
      if ([...sent].every((id) => seen.has(id))) break;
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
    await collect();
    openAtEnd = await openCount();
  } finally {
    await runtime.stop();
    await rm(dir, { recursive: true, force: true });
  }
  const lost = [...sent].filter((id) => !seen.has(id)).length;
  const duplicatedOutputs = [...seen.values()].filter((n) => n > 1).length;
  // Samples after the first third are past warm-up; compare the first and last of them.
  const warm = heap.slice(Math.floor(heap.length / 3));
  const heapStart = warm[0] ?? 0;
  const heapEnd = warm.at(-1) ?? 0;
  const openBound = rate * 30;
  if (lost > 0) failures.push(`${lost} aggregates produced no result`);
  if (duplicatedOutputs > 0) failures.push(`${duplicatedOutputs} results were emitted more than once`);
  if (openAtEnd !== 0) failures.push(`${openAtEnd} aggregates were still open at the end`);
  if (maxOpen > openBound)
    failures.push(`open aggregates reached ${maxOpen}, above the load's bound ${openBound}`);
  if (heapStart > 0 && heapEnd / heapStart > 1.5)
    failures.push(`heap grew ${(heapEnd / heapStart).toFixed(2)}x under steady load`);
  const report: SoakReport = {
    minutes,
    aggregatesSent: sent.size,
    repliesSent: replies,
    duplicatesSent: duplicates,
    completed: seen.size,
    lost,
    duplicatedOutputs,
    openAtEnd,
    maxOpen,
    openBound,
    heapStartMiB: Math.round(heapStart * 10) / 10,
    heapEndMiB: Math.round(heapEnd * 10) / 10,
    heapGrowth: heapStart > 0 ? Math.round((heapEnd / heapStart) * 100) / 100 : 0,
    ok: failures.length === 0,
    failures,
  };
  return report;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { minutes: { type: 'string', default: '10' }, rate: { type: 'string', default: '5' } },
  });
  const report = await runSoak({ minutes: Number(values.minutes), aggregatesPerSecond: Number(values.rate) });
  console.log(JSON.stringify(report, null, 2));
  process.exitCode = report.ok ? 0 : 1;
}

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split('/').pop() ?? '')) {
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  await main();
}
