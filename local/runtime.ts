import {
  CreateEventBusCommand,
  type EventBridgeClient,
  ResourceAlreadyExistsException,
} from '@aws-sdk/client-eventbridge';
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import {
  makeControlHandler,
  makeDistributorHandler,
  makeFanOutHandler,
  makeReplyHandler,
  makeSweeperHandler,
  makeTimerHandler,
} from '../functions/handlers.ts';
import { queueDepth } from '../shared/adapters/sqs-queues.ts';
import { createContext, createDistributor, type FaninClients, replyDestination } from '../shared/app.ts';
import {
  documentClient,
  dynamoClient,
  eventBridgeClient,
  resetClients,
  s3Client,
  sqsClient,
} from '../shared/aws/clients.ts';
import type { RuntimeConfig } from '../shared/config.ts';
import { type RunningEmulators, startEmulators } from './emulators.ts';
import { QueuePoller } from './poller.ts';
import { type Provisioned, provisionQueue, provisionTopology } from './provision.ts';
import type { PartitionedDestination } from '../shared/partitions/destination.ts';
import type { Distributor } from '../shared/partitions/distributor.ts';
import type { OutputPublisher } from '../shared/ports.ts';
import {
  type ConsumerSpec,
  describeTopology,
  type QueueRole,
  type QueueSpec,
  type Topology,
} from '../shared/topology/topology.ts';
import type { FaninContext } from '../shared/use-cases/context.ts';
import type { ResolvedLocalConfig } from './config.ts';
import { DashboardServer } from './dashboard/server.ts';
import { type ConsumerSample, Metrics, type OutputRecord } from './metrics.ts';
import { type QueueRef, type RuntimeState, removeState, writeState } from './state.ts';
import { listActive } from './views.ts';

/** Options of {@link LocalRuntime.start}. */
export interface RuntimeOptions {
  readonly config: ResolvedLocalConfig;
  /** Where to record the running runtime (`.fanin/runtime.json`). */
  readonly stateFile: string;
  /** Dashboard port; `false` serves none. @default the config's (4780, or a free port when taken) */
  readonly dashboardPort?: number | false;
  /** Where progress lines go. @default console.log */
  readonly log?: (line: string) => void;
  /** Log every output as it is published. @default true */
  readonly logOutputs?: boolean;
  /** How often depths and counts are sampled for the dashboard, ms. @default 1000 */
  readonly sampleIntervalMs?: number;
  /**
   * Long-poll wait of the pollers, seconds. Lambda's pollers wait 20 s; a shorter wait lets
   * Ctrl-C stop within it, since a receive in flight is let finish rather than aborted (an aborted
   * receive could leave messages invisible for a whole visibility timeout). @default 2
   */
  readonly pollWaitSeconds?: number;
}

/** A consumer of one queue: its poller and what the dashboard calls it. */
interface Consumer {
  readonly name: string;
  readonly role: ConsumerSample['role'];
  readonly poller: QueuePoller;
}

/**
 * fanin on one machine: the emulators (unless `AWS_ENDPOINT_URL` points elsewhere), the topology
 * provisioned from the same description as the CDK stack, every handler behind a poller with the
 * topology's event-source settings (one per reply partition), the sweeper and the distributor on
 * their schedules, and the dashboard.
 *
 * Layering: the runtime only wires; the handlers (`functions/handlers.ts`) call the use cases,
 * exactly as the Lambda entry points do.
 */
export class LocalRuntime {
  public readonly topology: Topology;
  public readonly provisioned: Provisioned;
  public readonly state: RuntimeState;
  public readonly metrics: Metrics;
  public readonly ctx: FaninContext;
  private readonly options: RuntimeOptions;
  private readonly emulators: RunningEmulators;
  private readonly consumers: Consumer[];
  private readonly destination: PartitionedDestination;
  private readonly distributor: Distributor;
  private readonly dashboard: DashboardServer | undefined;
  private readonly timers: NodeJS.Timeout[] = [];
  private readonly running = new Set<Promise<unknown>>();
  private stopping: Promise<void> | undefined;

  private constructor(parts: {
    options: RuntimeOptions;
    emulators: RunningEmulators;
    topology: Topology;
    provisioned: Provisioned;
    state: RuntimeState;
    metrics: Metrics;
    ctx: FaninContext;
    consumers: Consumer[];
    destination: PartitionedDestination;
    distributor: Distributor;
    dashboard: DashboardServer | undefined;
  }) {
    this.options = parts.options;
    this.emulators = parts.emulators;
    this.topology = parts.topology;
    this.provisioned = parts.provisioned;
    this.state = parts.state;
    this.metrics = parts.metrics;
    this.ctx = parts.ctx;
    this.consumers = parts.consumers;
    this.destination = parts.destination;
    this.distributor = parts.distributor;
    this.dashboard = parts.dashboard;
  }

  /** Starts everything; on failure, stops what was started and rethrows. */
  public static async start(options: RuntimeOptions): Promise<LocalRuntime> {
    const log = options.log ?? console.log;
    const { config } = options;
    // Validates the prefix, the partitions and every definition before anything is started.
    const topology = describeTopology({
      prefix: config.prefix,
      replyPartitions: config.replyPartitions,
      fifoReplies: config.fifoReplies,
      maxReceiveCount: config.maxReceiveCount,
      functionTimeoutSeconds: config.functionTimeoutSeconds,
      ...(config.replyBatchingWindowSeconds !== undefined
        ? { replyBatchingWindowSeconds: config.replyBatchingWindowSeconds }
        : {}),
      ...(config.replyConcurrency !== undefined ? { replyConcurrency: config.replyConcurrency } : {}),
      partitioning: config.partitioning,
      definitions: config.definitions,
    });
    const wantsEventBridge = [...topology.definitions.values()].some((d) => d.outputs.eventBridge);
    const emulators = await startEmulators({ eventBridge: wantsEventBridge });
    Object.assign(process.env, emulators.env);
    // Clients created before the endpoints were known would talk to the wrong place.
    resetClients();
    let dashboard: DashboardServer | undefined;
    try {
      if (emulators.started.length > 0) {
        log(`emulators: ${emulators.started.map((e) => `${e.name} ${e.url}`).join(', ')} (in memory)`);
      } else {
        log(`no emulators started: using ${describeEndpoints()}`);
      }
      const provisioned = await provisionTopology(topology, {
        sqs: sqsClient(),
        dynamo: dynamoClient(),
        ...(config.claimCheck ? { s3: s3Client() } : {}),
      });
      const responderQueues: QueueRef[] = [];
      for (const name of config.responderQueues) {
        const spec: QueueSpec = {
          name: `${topology.prefix}-${name}`,
          dlqName: `${topology.prefix}-${name}-dlq`,
          fifo: false,
          visibilityTimeoutSeconds: 30,
          maxReceiveCount: topology.queues.ingress.maxReceiveCount,
        };
        const { url, dlqUrl } = await provisionQueue(sqsClient(), spec);
        responderQueues.push({ name: spec.name, url, dlqName: spec.dlqName, dlqUrl });
      }
      const eventBusName = wantsEventBridge
        ? await createEventBus(emulators, topology.prefix, log)
        : undefined;
      const runtimeConfig: RuntimeConfig = {
        tableName: provisioned.tableName,
        queueUrls: provisioned.queueUrls,
        replyQueueUrls: provisioned.replyQueueUrls,
        definitions: topology.definitions,
        partitioning: topology.partitioning,
        ...(provisioned.bucketName ? { bucketName: provisioned.bucketName } : {}),
        ...(config.claimCheckThresholdBytes
          ? { claimCheckThresholdBytes: config.claimCheckThresholdBytes }
          : {}),
        ...(eventBusName ? { eventBusName } : {}),
      };
      const clients: FaninClients = {
        sqs: sqsClient(),
        dynamo: documentClient(),
        ...(provisioned.bucketName ? { s3: s3Client() } : {}),
        ...(eventBusName ? { eventBridge: eventBridgeClient() } : {}),
      };
      const metrics = new Metrics({
        prefix: topology.prefix,
        watermarks: {
          low: topology.partitioning.lowWatermark,
          high: topology.partitioning.highWatermark,
          highThreshold: topology.partitioning.highThreshold,
        },
      });
      const base = createContext(runtimeConfig, clients);
      const logOutputs = options.logOutputs ?? true;
      const ctx: FaninContext = {
        ...base,
        outputs: observe(
          base.outputs,
          (record) => {
            if (logOutputs) log(`output ${record.role}: ${record.summary}`);
          },
          metrics,
        ),
      };
      const consumers = startConsumers(topology, provisioned, () => ctx, options.pollWaitSeconds ?? 2);
      const destination = replyDestination(runtimeConfig, clients);
      const distributor = createDistributor(runtimeConfig, clients);
      const dashboardPort = options.dashboardPort ?? config.dashboardPort;
      if (dashboardPort !== false) {
        dashboard = await DashboardServer.start({
          port: dashboardPort,
          fallbackToFreePort: options.dashboardPort === undefined,
          snapshot: () => metrics.snapshot(),
        });
      }
      const queueRef = (spec: QueueSpec): QueueRef => ({
        name: spec.name,
        url: provisioned.allQueueUrls[spec.name] ?? '',
        dlqName: spec.dlqName,
        dlqUrl: provisioned.allQueueUrls[spec.dlqName] ?? '',
      });
      const state: RuntimeState = {
        version: 1,
        pid: process.pid,
        startedAt: new Date().toISOString(),
        prefix: topology.prefix,
        region: process.env.AWS_REGION ?? (await sqsClient().config.region()),
        endpoints: Object.fromEntries(
          Object.entries(process.env).filter(
            (entry): entry is [string, string] =>
              entry[0].startsWith('AWS_ENDPOINT_URL') && Boolean(entry[1]),
          ),
        ),
        emulators: emulators.started,
        dashboardUrl: dashboard?.url ?? null,
        tableName: provisioned.tableName,
        bucketName: provisioned.bucketName ?? null,
        claimCheckThresholdBytes: config.claimCheckThresholdBytes ?? null,
        queues: Object.fromEntries(
          Object.entries(topology.queues).map(([role, spec]) => [role, queueRef(spec)]),
        ) as Record<QueueRole, QueueRef>,
        replyPartitions: topology.replyPartitions.map(queueRef),
        responderQueues,
        partitioning: topology.partitioning,
        consumers: topology.consumers,
        sweepIntervalSeconds: config.sweepIntervalSeconds ?? topology.sweepIntervalSeconds,
        configFile: config.file,
        definitions: config.definitions,
      };
      const runtime = new LocalRuntime({
        options,
        emulators,
        topology,
        provisioned,
        state,
        metrics,
        ctx,
        consumers,
        destination,
        distributor,
        dashboard,
      });
      runtime.schedule();
      await writeState(options.stateFile, state);
      return runtime;
    } catch (error) {
      await dashboard?.close();
      await emulators.stop();
      throw error;
    }
  }

  /** The sweeper, the distributor and the sampler on their intervals (EventBridge schedules in AWS). */
  private schedule(): void {
    const log = this.options.log ?? console.log;
    const sweeper = makeSweeperHandler(() => this.ctx);
    const distribute = makeDistributorHandler(() => this.distributor);
    this.every(this.state.sweepIntervalSeconds * 1000, 'sweeper', async () => {
      const { examined } = await sweeper();
      if (examined > 0) log(`sweeper: ${examined} due item(s) examined`);
    });
    this.every(this.topology.partitioning.distributorIntervalSeconds * 1000, 'distributor', async () => {
      const report = await distribute();
      const fed = Object.values(report.fed).reduce((a, b) => a + b, 0);
      const evacuated = Object.values(report.evacuated).reduce((a, b) => a + b, 0);
      if (fed > 0 || evacuated > 0) {
        log(`distributor: fed ${JSON.stringify(report.fed)}, evacuated ${JSON.stringify(report.evacuated)}`);
      }
    });
    // Sampling costs a few dozen requests to the emulators: every tick while a page watches, every
    // fifth otherwise (the history then stays coarse until someone looks).
    let tick = 0;
    const sample = async () => {
      tick += 1;
      if (!this.dashboard?.connected && tick % 5 !== 1) return;
      await this.sample();
      this.dashboard?.push();
    };
    this.every(this.options.sampleIntervalMs ?? 1000, 'sampler', sample, true);
  }

  /**
   * Runs `task` every `ms`; a run still going when the next is due is not doubled (a schedule
   * that overlaps itself would only compete with itself). Errors are logged: the next run retries.
   */
  private every(ms: number, name: string, task: () => Promise<void>, quiet = false): void {
    const log = this.options.log ?? console.log;
    let busy = false;
    const run = () => {
      if (busy || this.stopping) return;
      busy = true;
      const job = task()
        .catch((error: unknown) => {
          if (!quiet) log(`${name} failed: ${(error as Error).message}`);
        })
        .finally(() => {
          busy = false;
          this.running.delete(job);
        });
      this.running.add(job);
    };
    this.timers.push(setInterval(run, ms));
    run();
  }

  private async sample(): Promise<void> {
    const sqs = sqsClient();
    const [partitions, backlogDepth, active, dlqs] = await Promise.all([
      this.destination.status(true),
      depthOf(sqs, this.provisioned.queueUrls.backlog),
      listActive(documentClient(), this.provisioned.tableName),
      Promise.all(
        [
          ...Object.values(this.state.queues),
          ...this.state.replyPartitions,
          ...this.state.responderQueues,
        ].map(async (ref) => ({
          name: ref.dlqName,
          depth: ref.dlqUrl ? ((await depthOf(sqs, ref.dlqUrl)) ?? 0) : 0,
        })),
      ),
    ]);
    const openByDefinition: Record<string, number> = {};
    for (const name of this.topology.definitions.keys()) openByDefinition[name] = 0;
    let completing = 0;
    for (const aggregate of active) {
      if (aggregate.status === 'open') {
        openByDefinition[aggregate.definition] = (openByDefinition[aggregate.definition] ?? 0) + 1;
      } else {
        completing += 1;
      }
    }
    this.metrics.recordSample({
      at: Date.now(),
      partitions: partitions.map((p) => ({
        index: p.index,
        name: this.state.replyPartitions[p.index]?.name ?? String(p.index),
        depth: p.depth ?? null,
        visible: p.visible ?? null,
        inFlight: p.inFlight ?? null,
        enabled: p.enabled,
        available: p.available,
        reason: p.reason ?? null,
      })),
      backlogDepth,
      openByDefinition,
      completing,
      dlqs,
      consumers: this.consumers.map(({ name, role, poller }) => ({ name, role, ...poller.stats })),
    });
  }

  /** Where the runtime's state is recorded. */
  public get stateFile(): string {
    return this.options.stateFile;
  }

  /** The dashboard's address, when it is served. */
  public get dashboardUrl(): string | undefined {
    return this.dashboard?.url;
  }

  /**
   * Stops cleanly: schedules first, then the pollers (each finishes the batch it holds, so nothing
   * is left half-processed), the dashboard, the state file, and last the emulators (their JVM is
   * gone when this resolves). Safe to call more than once.
   */
  public stop(): Promise<void> {
    this.stopping ??= (async () => {
      for (const timer of this.timers) clearInterval(timer);
      await Promise.allSettled(this.consumers.map((c) => c.poller.stop()));
      await Promise.allSettled([...this.running]);
      await this.dashboard?.close();
      await removeState(this.options.stateFile);
      resetClients();
      await this.emulators.stop();
    })();
    return this.stopping;
  }
}

/** One poller per consumed queue, one per reply partition, with the topology's event-source settings. */
function startConsumers(
  topology: Topology,
  provisioned: Provisioned,
  context: () => FaninContext,
  waitTimeSeconds: number,
): Consumer[] {
  const sqs = sqsClient();
  const consumer = (
    name: string,
    role: Consumer['role'],
    queueUrl: string,
    spec: ConsumerSpec,
    handler: (event: SQSEvent) => Promise<SQSBatchResponse>,
  ): Consumer => {
    const poller = new QueuePoller({
      sqs,
      queueUrl,
      handler,
      batchSize: spec.batchSize,
      maxBatchingWindowSeconds: spec.maxBatchingWindowSeconds,
      concurrency: spec.maxConcurrency,
      waitTimeSeconds,
    });
    poller.start();
    return { name, role, poller };
  };
  const { consumers, queues } = topology;
  return [
    consumer(
      queues.ingress.name,
      'fan-out',
      provisioned.queueUrls.ingress,
      consumers.fanOut,
      makeFanOutHandler(context),
    ),
    ...provisioned.replyQueueUrls.map((url, index) =>
      consumer(
        topology.replyPartitions[index]?.name ?? url,
        'reply',
        url,
        topology.replyConsumers[index] ?? consumers.reply,
        makeReplyHandler(context),
      ),
    ),
    consumer(
      queues.timer.name,
      'timer',
      provisioned.queueUrls.timer,
      consumers.timer,
      makeTimerHandler(context),
    ),
    consumer(
      queues.control.name,
      'control',
      provisioned.queueUrls.control,
      consumers.control,
      makeControlHandler(context),
    ),
  ];
}

/** Publishes through `inner`, then records the output (after it really went out). */
function observe(
  inner: OutputPublisher,
  onRecord: (record: OutputRecord) => void,
  metrics: Metrics,
): OutputPublisher {
  return {
    async publish(role, message, options) {
      await inner.publish(role, message, options);
      const record = metrics.recordOutput(role, message);
      if (record) onRecord(record);
    },
  };
}

function depthOf(sqs: SQSClient, queueUrl: string): Promise<number | null> {
  return queueDepth(sqs, queueUrl).then(
    (d) => d.depth,
    () => null,
  );
}

/** The output bus for definitions with `outputs.eventBridge`, when an EventBridge endpoint exists. */
async function createEventBus(
  emulators: RunningEmulators,
  prefix: string,
  log: (line: string) => void,
): Promise<string | undefined> {
  if (!emulators.eventBridgeAvailable) {
    log(`EventBridge outputs are off: ${emulators.eventBridgeUnavailableReason}`);
    return undefined;
  }
  const name = `${prefix}-outputs`;
  const client: EventBridgeClient = eventBridgeClient();
  try {
    await client.send(new CreateEventBusCommand({ Name: name }));
  } catch (error) {
    if (!(error instanceof ResourceAlreadyExistsException)) throw error;
  }
  return name;
}

function describeEndpoints(): string {
  const set = Object.entries(process.env).filter(([name]) => name.startsWith('AWS_ENDPOINT_URL'));
  return set.length > 0
    ? set.map(([name, value]) => `${name}=${value}`).join(', ')
    : 'AWS (no endpoint override)';
}
