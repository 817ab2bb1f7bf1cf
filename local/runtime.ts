import type { SQSClient } from '@aws-sdk/client-sqs';
import { makeDistributorHandler, makeSweeperHandler } from '../functions/handlers.ts';
import { queueDepth } from '../shared/adapters/sqs-queues.ts';
import { createContext, createDistributor, replyDestination } from '../shared/app.ts';
import { type AwsClients, createClients } from '../shared/aws/clients.ts';
import type { QueueRef, RuntimeState } from '../shared/client/runtime-state.ts';
import type { RuntimeConfig } from '../shared/config.ts';
import type { PartitionedDestination } from '../shared/partitions/destination.ts';
import type { Distributor } from '../shared/partitions/distributor.ts';
import { topologyOptionsOf } from '../shared/topology/options.ts';
import { describeTopology, type QueueSpec, type Topology } from '../shared/topology/topology.ts';
import type { FaninContext } from '../shared/use-cases/context.ts';
import type { ResolvedLocalConfig } from './config.ts';
import { type Consumer, observeOutputs, startConsumers } from './consumers.ts';
import { DashboardServer } from './dashboard/server.ts';
import { type RunningEmulators, startEmulators } from './emulators.ts';
import { aggregateView } from './fates.ts';
import { LiveFigures } from './live-figures.ts';
import { type Provisioned, provisionEventBus, provisionQueue, provisionTopology } from './provision.ts';
import { ownSenderId } from './sender-id.ts';
import { removeState, runtimeState, writeState } from './state.ts';
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

/**
 * fanin on one machine: the emulators (unless `AWS_ENDPOINT_URL` points elsewhere), the topology
 * provisioned from the same description as the CDK stack, every handler behind a poller with the
 * topology's event-source settings (one per reply partition), the sweeper and the distributor on
 * their schedules, and the dashboard.
 *
 * Layering: the runtime only wires; the handlers (`functions/handlers.ts`) call the use cases,
 * exactly as the Lambda entry points do. It is the composition root of `npm start`: it builds the
 * AWS clients once, when it knows where the services are, and passes them to everything it starts.
 */
export class LocalRuntime {
  public readonly topology: Topology;
  public readonly provisioned: Provisioned;
  public readonly state: RuntimeState;
  public readonly metrics: LiveFigures;
  public readonly ctx: FaninContext;
  /** The clients of this process (the emulators started here, else the SDK's standard settings). */
  public readonly clients: AwsClients;
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
    clients: AwsClients;
    topology: Topology;
    provisioned: Provisioned;
    state: RuntimeState;
    metrics: LiveFigures;
    ctx: FaninContext;
    consumers: Consumer[];
    destination: PartitionedDestination;
    distributor: Distributor;
    dashboard: DashboardServer | undefined;
  }) {
    this.options = parts.options;
    this.emulators = parts.emulators;
    this.clients = parts.clients;
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
    const topology = describeTopology({ ...topologyOptionsOf(config), definitions: config.definitions });
    const wantsEventBridge = [...topology.definitions.values()].some((d) => d.outputs.eventBridge);
    const emulators = await startEmulators({ eventBridge: wantsEventBridge });
    // This process's clients, built once: no process-wide client, no change to process.env.
    const clients = createClients(emulators.connection);
    let dashboard: DashboardServer | undefined;
    try {
      if (emulators.started.length > 0) {
        log(`emulators: ${emulators.started.map((e) => `${e.name} ${e.url}`).join(', ')} (in memory)`);
      } else {
        log(`no emulators started: using ${describeEndpoints()}`);
      }
      const provisioned = await provisionTopology(topology, {
        sqs: clients.sqs,
        dynamo: clients.dynamoDb,
        ...(config.claimCheck ? { s3: clients.s3 } : {}),
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
        const { url, dlqUrl } = await provisionQueue(clients.sqs, spec);
        responderQueues.push({ name: spec.name, url, dlqName: spec.dlqName, dlqUrl });
      }
      // The output bus for definitions with `outputs.eventBridge`, when an EventBridge endpoint exists.
      let eventBusName: string | undefined;
      if (wantsEventBridge && !emulators.eventBridgeAvailable) {
        log(`EventBridge outputs are off: ${emulators.eventBridgeUnavailableReason}`);
      } else if (wantsEventBridge) {
        eventBusName = await provisionEventBus(clients.eventBridge, `${topology.prefix}-outputs`);
      }
      // The distributor here sends as this process does: its copies' SenderId is ours.
      const sender = await ownSenderId(clients.sqs, topology.prefix).catch(() => undefined);
      if (sender === undefined) log('the SQS endpoint gave no SenderId: moved replies arrive when moved');
      const runtimeConfig = runtimeConfigOf(
        topology,
        provisioned,
        config,
        eventBusName,
        sender ? [sender] : [],
      );
      const metrics = new LiveFigures({
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
        outputs: observeOutputs(base.outputs, metrics, (record) => {
          if (logOutputs) log(`output ${record.role}: ${record.summary}`);
        }),
      };
      const consumers = startConsumers(
        topology,
        provisioned,
        () => ctx,
        clients.sqs,
        options.pollWaitSeconds ?? 2,
      );
      const destination = replyDestination(runtimeConfig, clients);
      const distributor = createDistributor(runtimeConfig, clients);
      const dashboardPort = options.dashboardPort ?? config.dashboardPort;
      if (dashboardPort !== false) {
        dashboard = await DashboardServer.start({
          port: dashboardPort,
          fallbackToFreePort: options.dashboardPort === undefined,
          snapshot: () => metrics.snapshot(),
          // The history, and each recipient's fate where the definition has `responders`.
          history: (aggregateId) => aggregateView(ctx.store, aggregateId, { definitions: ctx.definitions }),
          aggregates: () => ctx.store.listActivePage({ limit: 50 }),
        });
      }
      const state = runtimeState({
        topology,
        provisioned,
        config,
        responderQueues,
        region: await clients.sqs.config.region(),
        // Where this process's clients go, as the SDK's variables, for a CLI or a demo process.
        endpoints: { ...process.env, ...emulators.env },
        emulators: emulators.started,
        dashboardUrl: dashboard?.url ?? null,
      });
      const runtime = new LocalRuntime({
        options,
        emulators,
        clients,
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
      clients.destroy();
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
    const { sqs } = this.clients;
    const [partitions, backlogDepth, active, dlqs] = await Promise.all([
      this.destination.status(true),
      depthOf(sqs, this.provisioned.queueUrls.backlog),
      listActive(this.clients.dynamo, this.provisioned.tableName),
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
      this.clients.destroy();
      await this.emulators.stop();
    })();
    return this.stopping;
  }
}

function depthOf(sqs: SQSClient, queueUrl: string): Promise<number | null> {
  return queueDepth(sqs, queueUrl).then(
    (d) => d.depth,
    () => null,
  );
}

function describeEndpoints(): string {
  const set = Object.entries(process.env).filter(([name]) => name.startsWith('AWS_ENDPOINT_URL'));
  return set.length > 0
    ? set.map(([name, value]) => `${name}=${value}`).join(', ')
    : 'AWS (no endpoint override)';
}

/**
 * What the local runtime's handlers are configured with, as a deployed stack's are from its
 * environment (infra/handler-environment.ts): the provisioned names, and the completion lease the
 * topology derives from `functionTimeoutSeconds` (on AWS, `FANIN_LEASE_SECONDS`), so a lease never
 * runs out while an invocation may still be running, locally as on AWS; and the distributor's
 * sender (`trustedMovers`, the stack's `FANIN_TRUSTED_MOVERS`: locally, this process's own
 * `SenderId`, local/sender-id.ts).
 */
export function runtimeConfigOf(
  topology: Topology,
  provisioned: Pick<Provisioned, 'tableName' | 'queueUrls' | 'replyQueueUrls' | 'bucketName'>,
  config: Pick<ResolvedLocalConfig, 'claimCheckThresholdBytes'>,
  eventBusName?: string,
  trustedMovers: readonly string[] = [],
): RuntimeConfig {
  return {
    tableName: provisioned.tableName,
    queueUrls: provisioned.queueUrls,
    replyQueueUrls: provisioned.replyQueueUrls,
    definitions: topology.definitions,
    partitioning: topology.partitioning,
    completionLeaseSeconds: topology.completionLeaseSeconds,
    ...(provisioned.bucketName ? { bucketName: provisioned.bucketName } : {}),
    ...(config.claimCheckThresholdBytes ? { claimCheckThresholdBytes: config.claimCheckThresholdBytes } : {}),
    ...(eventBusName ? { eventBusName } : {}),
    ...(trustedMovers.length > 0 ? { trustedMovers } : {}),
  };
}
