import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import {
  makeControlHandler,
  makeFanOutHandler,
  makeReplyHandler,
  makeTimerHandler,
} from '../../../functions/handlers.ts';
import { type Args, type CommandIO, withIsoTimes } from '../../../local/cli/io.ts';
import { type LocalConfig, type ResolvedLocalConfig, resolveLocalConfig } from '../../../local/config.ts';
import { QueuePoller } from '../../../local/poller.ts';
import { type Provisioned, provisionQueue, provisionTopology } from '../../../local/provision.ts';
import { runtimeConfigOf } from '../../../local/runtime.ts';
import { runtimeState } from '../../../local/state.ts';
import { createContext } from '../../../shared/app.ts';
import type { AwsClients } from '../../../shared/aws/clients.ts';
import { type Target, targetFromState } from '../../../shared/client/connect.ts';
import type { QueueRef, RuntimeState } from '../../../shared/client/runtime-state.ts';
import type { DefinitionInput } from '../../../shared/engine/definition.ts';
import { topologyOptionsOf } from '../../../shared/topology/options.ts';
import { describeTopology, type QueueRole, type Topology } from '../../../shared/topology/topology.ts';
import type { FaninContext } from '../../../shared/use-cases/context.ts';
import {
  clientsOver,
  faultFreeModels,
  type Intercept,
  type ModelClients,
  type Models,
} from '../../../sim/models/index.ts';
import { Random } from '../../../sim/random.ts';

/**
 * A local runtime in memory for the unit tests of local/: the configuration resolved as `npm start`
 * resolves it, the topology provisioned by local/provision.ts over the simulation's models of SQS,
 * DynamoDB and S3 (on the wall clock, no chaos), the state the runtime records (local/state.ts), the
 * CLI's target built from it, and the production handlers to deliver what a queue holds, one poll
 * at a time (local/poller.ts). Nothing runs by itself: a test delivers what it wants delivered.
 */
export interface LocalWorld {
  readonly models: Models;
  readonly clients: ModelClients;
  readonly config: ResolvedLocalConfig;
  readonly topology: Topology;
  readonly provisioned: Provisioned;
  readonly state: RuntimeState;
  readonly target: Target;
  readonly context: () => FaninContext;
  /** Delivers what waits on a queue of fanin (a role, or `reply-<n>`) to its handler; @returns records handled. */
  deliver(queue: QueueRole | `reply-${number}`): Promise<number>;
}

export const DEFINITIONS: DefinitionInput[] = [
  {
    name: 'quotes',
    fanOut: { type: 'recipient-list', recipients: ['w-desk-a', 'w-desk-b'] },
    completion: { strategy: 'all' },
    timeoutSeconds: 3600,
  },
  { name: 'orders', completion: { strategy: 'external' }, timeoutSeconds: 3600, unknownTimeoutSeconds: 600 },
  {
    name: 'survey',
    fanOut: { type: 'recipient-list' },
    completion: { strategy: 'all' },
    timeoutSeconds: 3600,
  },
  {
    name: 'auction',
    mode: 'self-starting',
    correlation: { source: 'path', path: '$.auctionId' },
    replyId: { source: 'path', path: '$.bidId' },
    completion: { strategy: 'timeout' },
    timeoutSeconds: 60,
  },
];

/** @param intercept where the SDK clients' calls go (sim/models' `clientsOver`): a test's faults. */
export async function localWorld(
  options: Partial<LocalConfig> = {},
  intercept?: Intercept,
): Promise<LocalWorld> {
  const clock = () => Date.now();
  const random = new Random(7);
  const draw = () => random.next();
  const { eventBridge: _bus, ...models } = faultFreeModels(clock, draw);
  const clients = clientsOver(models, intercept);
  const config = resolveLocalConfig(
    {
      prefix: 'w',
      replyPartitions: 2,
      responderQueues: ['desk-a', 'desk-b'],
      definitions: DEFINITIONS,
      ...options,
    },
    'w.config.json',
  );
  const topology = describeTopology({ ...topologyOptionsOf(config), definitions: config.definitions });
  const provisioned = await provisionTopology(topology, {
    sqs: clients.sqs,
    dynamo: clients.dynamoDb,
    ...(clients.s3 ? { s3: clients.s3 } : {}),
  });
  const responderQueues: QueueRef[] = [];
  for (const name of config.responderQueues) {
    const spec = { ...topology.queues.ingress, name: `w-${name}`, dlqName: `w-${name}-dlq`, fifo: false };
    const { url, dlqUrl } = await provisionQueue(clients.sqs, spec);
    responderQueues.push({ name: spec.name, url, dlqName: spec.dlqName, dlqUrl });
  }
  const state = runtimeState({
    topology,
    provisioned,
    config,
    responderQueues,
    region: 'us-east-1',
    endpoints: {
      AWS_ENDPOINT_URL: 'http://127.0.0.1:4566',
      AWS_REGION: 'us-east-1',
      AWS_ENDPOINT_URL_S3: '',
    },
    emulators: [],
    dashboardUrl: 'http://127.0.0.1:4780',
  });
  const target = targetFromState(state, clients as unknown as AwsClients);
  const runtimeConfig = runtimeConfigOf(topology, provisioned, config);
  const context = () =>
    createContext(runtimeConfig, clients, {
      log: { info: () => undefined, warn: () => undefined, error: () => undefined },
    });
  const handlers: Record<string, (event: SQSEvent) => Promise<SQSBatchResponse>> = {
    ingress: makeFanOutHandler(context),
    timer: makeTimerHandler(context),
    control: makeControlHandler(context),
  };
  const deliver = async (queue: QueueRole | `reply-${number}`) => {
    const reply = /^reply-(\d+)$/.exec(queue);
    const queueUrl = reply
      ? (provisioned.replyQueueUrls[Number(reply[1])] as string)
      : provisioned.queueUrls[queue as QueueRole];
    const handler = reply ? makeReplyHandler(context) : handlers[queue];
    if (!handler) throw new Error(`no handler consumes ${queue}`);
    const poller = new QueuePoller({ sqs: clients.sqs, queueUrl, handler });
    let total = 0;
    for (let n = await poller.pollOnce(); n > 0; n = await poller.pollOnce()) total += n;
    return total;
  };
  return { models, clients, config, topology, provisioned, state, target, context, deliver };
}

/** What a command printed, and the IO it printed through. */
export interface Captured {
  readonly io: CommandIO;
  readonly out: string[];
  readonly err: string[];
  readonly json: unknown[];
}

/** A command's IO over `target`: lines and JSON documents kept in arrays, never a terminal. */
export function capture(target: Target, wantsJson = false, signal = new AbortController().signal): Captured {
  const out: string[] = [];
  const err: string[] = [];
  const json: unknown[] = [];
  return {
    out,
    err,
    json,
    io: {
      out: (line) => out.push(line),
      err: (line) => err.push(line),
      // As the CLI's own IO prints a document: every epoch time with its ISO 8601 form beside it.
      json: (value) => json.push(withIsoTimes(value)),
      wantsJson,
      target: async () => target,
      interactive: false,
      signal,
    },
  };
}

/** A parsed command line: option values by name, then the positional arguments. */
export function args(values: Args['values'] = {}, ...positionals: string[]): Args {
  return { values, positionals };
}
