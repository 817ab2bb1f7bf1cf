import {
  GetQueueUrlCommand,
  ListQueuesCommand,
  QueueDoesNotExist,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { DynamoPartitionRegistry } from '../adapters/dynamo-partition-registry.ts';
import { S3ClaimCheck } from '../adapters/s3-claim-check.ts';
import { type AwsClients, type Connection, configuredEndpoints, createClients } from '../aws/clients.ts';
import type { RuntimeConfig } from '../config.ts';
import { type Definition, parseDefinitions } from '../engine/definition.ts';
import { FaninError } from '../errors.ts';
import type { PartitionedDestination } from '../partitions/destination.ts';
import { REPLY_DESTINATION, replyDestination } from '../partitions/reply-destination.ts';
import { describeTopology, type Partitioning, QueueRole, resolvePartitioning } from '../topology/topology.ts';
import { FaninClient } from './fanin-client.ts';
import { processAlive, type QueueRef, type RuntimeState, readState } from './runtime-state.ts';

/**
 * What the CLI and the demos' processes talk to: the local runtime (found through its state file)
 * or a deployed stack (found by its prefix, with the SDK's standard configuration), and the AWS
 * clients that reach it, built once when the target is resolved.
 */
export interface Target {
  readonly kind: 'local' | 'stack';
  /** The clients of this process for this target; `clients.destroy()` when done with it. */
  readonly clients: AwsClients;
  readonly prefix: string;
  readonly tableName: string;
  readonly bucketName?: string;
  readonly claimCheckThresholdBytes?: number;
  readonly queues: Readonly<Record<QueueRole, QueueRef>>;
  readonly replyPartitions: readonly QueueRef[];
  /** Responder queues the local runtime created; empty for a stack. */
  readonly responderQueues: readonly QueueRef[];
  readonly partitioning: Partitioning;
  /**
   * Where `partitioning` comes from: the runtime's state file, what a stack's distributor last
   * recorded (with when), or the defaults (with why).
   */
  readonly partitioningSource: string;
  /** The definitions, when known (local runtime); a stack's are compiled into its functions. */
  readonly definitions?: ReadonlyMap<string, Definition>;
  /** The local runtime's state, when the target is local. */
  readonly state?: RuntimeState;
}

/** The target could not be found; the message says what to do. */
export class TargetNotFoundError extends FaninError {
  public constructor(message: string) {
    super(message, { retryable: false });
    this.name = 'TargetNotFoundError';
  }
}

/**
 * How this process reaches the services the local runtime used: the endpoints its state file
 * records (its own emulators, or the `AWS_ENDPOINT_URL*` it was started with), its region unless
 * `env` names one, and, when it started its own emulators (which accept any), dummy credentials
 * unless `env` has some. Nothing is written to `env`: the result goes to `createClients`.
 */
export function connectionOf(state: RuntimeState, env: NodeJS.ProcessEnv = process.env): Connection {
  return {
    endpoints: configuredEndpoints(state.endpoints),
    ...(env.AWS_REGION ? {} : { region: state.region }),
    ...(state.emulators.length > 0 && !env.AWS_ACCESS_KEY_ID
      ? { credentials: { accessKeyId: 'test', secretAccessKey: 'test' } }
      : {}),
  };
}

/** Options of {@link resolveTarget}. */
export interface ResolveOptions {
  /** The state file of a local runtime. */
  readonly stateFile: string;
  /**
   * The prefix of a deployed stack (its output `<id>Prefix`), in any case: the example stack's
   * prefix is its name in lower case, so `FaninDev` finds `fanindev-*`. When set, the state file
   * is not read.
   */
  readonly stack?: string;
  /** The stack's claim-check bucket (CloudFormation names it; see the stack's outputs). */
  readonly bucket?: string;
}

/**
 * Finds the target: a deployed stack when `stack` is given, else the local runtime of the state
 * file. For a stack, queue URLs come from `GetQueueUrl` on the topology's names and the reply
 * partitions from `ListQueues` (so their number need not be known); the table name is the
 * topology's. The target's clients are built here, once: for a stack with the SDK's standard
 * configuration, for the local runtime with {@link connectionOf} its state.
 */
export async function resolveTarget(options: ResolveOptions): Promise<Target> {
  if (options.stack !== undefined) {
    const clients = createClients();
    try {
      // Prefixes are lower case (topology): a stack's name in any case names its prefix.
      return await resolveStack(options.stack.toLowerCase(), options.bucket, clients);
    } catch (error) {
      clients.destroy();
      throw error;
    }
  }
  const state = await readState(options.stateFile);
  if (!state) {
    throw new TargetNotFoundError(
      `no local runtime: ${options.stateFile} does not exist. Start one (\`npm start\` in the fanin repository), point --state or FANIN_STATE at the state file of one that runs, or pass --stack <prefix> for a deployed stack`,
    );
  }
  // A runtime killed without its shutdown leaves its state file behind: say so, rather than let the
  // first call fail with the SDK's ECONNREFUSED on an emulator's old port.
  if (!processAlive(state.pid)) {
    throw new TargetNotFoundError(
      `the local runtime recorded in ${options.stateFile} (pid ${state.pid}) is not running: it stopped without removing its state file. Start it again (\`npm start\` in the fanin repository), or point --state or FANIN_STATE at the state file of one that runs`,
    );
  }
  return targetFromState(state, createClients(connectionOf(state)));
}

/** The target of a local runtime's state, reached with `clients` (see {@link connectionOf}). */
export function targetFromState(state: RuntimeState, clients: AwsClients): Target {
  return {
    kind: 'local',
    clients,
    prefix: state.prefix,
    tableName: state.tableName,
    ...(state.bucketName ? { bucketName: state.bucketName } : {}),
    ...(state.claimCheckThresholdBytes ? { claimCheckThresholdBytes: state.claimCheckThresholdBytes } : {}),
    queues: state.queues,
    replyPartitions: state.replyPartitions,
    responderQueues: state.responderQueues,
    partitioning: state.partitioning,
    partitioningSource: 'the local runtime',
    definitions: parseDefinitions(state.definitions),
    state,
  };
}

async function resolveStack(
  prefix: string,
  bucket: string | undefined,
  clients: AwsClients,
): Promise<Target> {
  // The names depend only on the prefix (and FIFO-ness, found below); definitions do not matter.
  const { sqs } = clients;
  const partitions = await discoverPartitions(sqs, prefix);
  const fifo = partitions[0]?.name.endsWith('.fifo') ?? false;
  const topology = describeTopology({
    prefix,
    replyPartitions: Math.max(1, partitions.length),
    fifoReplies: fifo,
    definitions: [],
  });
  // Look every queue up at once, then judge in the topology's order, so the message is the same
  // on every run and names every missing queue, not whichever lookup happened to fail first.
  const found = await Promise.all(
    Object.entries(topology.queues).map(async ([role, spec]) => ({
      role: role as QueueRole,
      spec,
      url: await queueUrl(sqs, spec.name),
      dlqUrl: await queueUrl(sqs, spec.dlqName),
    })),
  );
  // Older stacks have no backlog queue; that one may be missing.
  const missing = found
    .filter((q) => q.url === undefined && q.role !== QueueRole.BACKLOG)
    .map((q) => q.spec.name);
  if (missing.length > 0) {
    throw new TargetNotFoundError(
      `${missing.length === 1 ? 'queue' : 'queues'} ${missing.join(', ')} not found: is a fanin stack with prefix "${prefix}" deployed in this account and region (${await sqs.config.region()})? The prefix is the stack's output <id>Prefix (docs/configuration.md, "Names and outputs")`,
    );
  }
  const queues: Partial<Record<QueueRole, QueueRef>> = {};
  for (const { role, spec, url, dlqUrl } of found) {
    if (url === undefined) continue;
    queues[role] = { name: spec.name, url, dlqName: spec.dlqName, ...(dlqUrl ? { dlqUrl } : {}) };
  }
  if (partitions.length === 0) {
    throw new TargetNotFoundError(`no reply partitions (${prefix}-reply-<n>) found for stack "${prefix}"`);
  }
  queues[QueueRole.BACKLOG] ??= { name: topology.queues.backlog.name, url: '', dlqName: '' };
  const { partitioning, partitioningSource } = await deployedPartitioning(clients, topology.tableName);
  return {
    kind: 'stack',
    clients,
    prefix,
    tableName: topology.tableName,
    ...(bucket ? { bucketName: bucket } : {}),
    queues: queues as Record<QueueRole, QueueRef>,
    replyPartitions: partitions,
    responderQueues: [],
    partitioning,
    partitioningSource,
  };
}

/**
 * A stack's partitioning settings live in its functions' configuration; its distributor records
 * them in the table each cycle. Before its first cycle, or without read access to that item, the
 * defaults stand in, and the source says so.
 */
async function deployedPartitioning(
  clients: AwsClients,
  tableName: string,
): Promise<{ partitioning: Partitioning; partitioningSource: string }> {
  try {
    const registry = new DynamoPartitionRegistry({ client: clients.dynamo, tableName });
    const recorded = await registry.loadSettings(REPLY_DESTINATION);
    if (recorded) {
      const { recordedAt, ...settings } = recorded;
      return {
        partitioning: resolvePartitioning(settings),
        partitioningSource: `the stack's distributor, recorded ${new Date(recordedAt).toISOString()}`,
      };
    }
    return {
      partitioning: resolvePartitioning({}),
      partitioningSource: "defaults: the stack's distributor has not recorded its settings yet",
    };
  } catch (error) {
    return {
      partitioning: resolvePartitioning({}),
      partitioningSource: `defaults: the recorded settings could not be read (${(error as Error).name}: ${(error as Error).message})`,
    };
  }
}

async function discoverPartitions(sqs: SQSClient, prefix: string): Promise<QueueRef[]> {
  const pattern = new RegExp(`/${escapeRegExp(prefix)}-reply-(\\d+)(\\.fifo)?$`);
  const found: { index: number; url: string; fifo: boolean }[] = [];
  let NextToken: string | undefined;
  do {
    const page = await sqs.send(
      new ListQueuesCommand({ QueueNamePrefix: `${prefix}-reply-`, MaxResults: 1000, NextToken }),
    );
    for (const url of page.QueueUrls ?? []) {
      const match = pattern.exec(url);
      if (match) found.push({ index: Number(match[1]), url, fifo: match[2] !== undefined });
    }
    NextToken = page.NextToken;
  } while (NextToken);
  found.sort((a, b) => a.index - b.index);
  return Promise.all(
    found.map(async ({ index, url, fifo }) => {
      const suffix = fifo ? '.fifo' : '';
      const dlqName = `${prefix}-reply-${index}-dlq${suffix}`;
      const dlqUrl = await queueUrl(sqs, dlqName);
      return { name: `${prefix}-reply-${index}${suffix}`, url, dlqName, ...(dlqUrl ? { dlqUrl } : {}) };
    }),
  );
}

/** A queue's URL, or undefined when it does not exist. */
export async function queueUrl(sqs: SQSClient, name: string): Promise<string | undefined> {
  try {
    return (await sqs.send(new GetQueueUrlCommand({ QueueName: name }))).QueueUrl;
  } catch (error) {
    if (error instanceof QueueDoesNotExist || (error as Error).name.includes('NonExistentQueue')) {
      return undefined;
    }
    throw error;
  }
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The handlers' configuration of a target, for the shared factories (reply destination, distributor). */
export function runtimeConfigOf(target: Target): RuntimeConfig {
  return {
    tableName: target.tableName,
    queueUrls: Object.fromEntries(
      Object.entries(target.queues).map(([role, ref]) => [role, ref.url]),
    ) as Record<QueueRole, string>,
    replyQueueUrls: target.replyPartitions.map((p) => p.url),
    definitions: target.definitions ?? new Map(),
    partitioning: target.partitioning,
    ...(target.bucketName ? { bucketName: target.bucketName } : {}),
    ...(target.claimCheckThresholdBytes ? { claimCheckThresholdBytes: target.claimCheckThresholdBytes } : {}),
  };
}

/** The reply destination of a target. */
export function destinationOf(target: Target): PartitionedDestination {
  return replyDestination(runtimeConfigOf(target), target.clients);
}

/** A {@link FaninClient} for producers and responders of a target: ingress, reply routing, claim check. */
export function faninClientOf(target: Target): FaninClient {
  return new FaninClient({
    sqs: target.clients.sqs,
    ingressQueueUrl: target.queues.ingress.url,
    replies: destinationOf(target),
    ...(target.bucketName
      ? {
          claimCheck: new S3ClaimCheck({
            s3: target.clients.s3,
            bucket: target.bucketName,
            ...(target.claimCheckThresholdBytes ? { thresholdBytes: target.claimCheckThresholdBytes } : {}),
          }),
        }
      : {}),
  });
}
