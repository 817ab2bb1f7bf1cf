import type { StateTable } from '../../../../shared/adapters/state-table.ts';
import type { FaninClients } from '../../../../shared/app.ts';
import type { AggregateHeader } from '../../../../shared/ports.ts';
import { describeTopology, type Topology } from '../../../../shared/topology/topology.ts';
import {
  clientsOver,
  faultFreeModels,
  type Intercept,
  type ModelService,
} from '../../../../sim/models/index.ts';
import { Random } from '../../../../sim/random.ts';
import { type Models, Storage } from '../../../../sim/storage.ts';

/**
 * The adapters' unit tests run the real SDK v3 clients over the simulation's in-process models
 * (sim/models), provisioned as sim/storage.ts provisions them (the topology's table with its `due`
 * index, its queues with their DLQs and redrive), with the models' chance turned off (no stale
 * read, no duplicate delivery, no TTL deletion), so that each test sees one answer.
 */

/** Epoch ms the tests' clock starts at. */
export const T0 = Date.UTC(2026, 0, 1);

/** A call an adapter made through the SDK, as the models saw it. */
export interface SentCall {
  readonly service: ModelService;
  readonly command: string;
  // biome-ignore lint/suspicious/noExplicitAny: commands of every shape are recorded
  readonly input: any;
}

export interface World {
  readonly models: Models;
  readonly clients: FaninClients;
  readonly topology: Topology;
  readonly storage: Storage;
  /** The state table as the state store's functions take it. */
  readonly table: StateTable;
  /** Every call made through `clients`, oldest first. */
  readonly calls: SentCall[];
  /** The clock the models read (epoch ms); tests move it. */
  now: number;
  /** Every item of the state table, in the document client's native form. */
  items(): Record<string, unknown>[];
}

/**
 * A world of models provisioned for a topology (prefix `unit`). `intercept` may fail or change a
 * call (it is given the model's answer as `call`), as the simulation's scheduler does.
 */
export interface WorldOptions {
  readonly intercept?: Intercept;
  /** Queues to create beside the topology's (the recipients). */
  readonly targets?: string[];
}

export function world(options: WorldOptions = {}): World {
  const random = new Random(7);
  const draw = () => random.next();
  const topology = describeTopology({ prefix: 'unit', definitions: [] });
  const state = { now: T0 };
  const clock = () => state.now;
  const models: Models = faultFreeModels(clock, draw, 30);
  const storage = new Storage(models, topology, true, true, options.targets ?? []);
  const calls: SentCall[] = [];
  const intercept: Intercept = options.intercept ?? ((_s, _c, _i, call) => call());
  const clients = clientsOver(models, (service, command, input, call) => {
    calls.push({ service, command, input });
    return intercept(service, command, input, call);
  });
  const table: StateTable = {
    client: clients.dynamo,
    tableName: topology.tableName,
    dueIndex: topology.table.indexes[0]?.name ?? 'due',
  };
  return {
    models,
    clients,
    topology,
    storage,
    table,
    calls,
    get now() {
      return state.now;
    },
    set now(value: number) {
      state.now = value;
    },
    items: () => models.dynamodb.items(topology.tableName),
  };
}

/** An open header as the fan-out writes it: expecting `expected` replies, timing out a minute after T0. */
export function openHeader(aggregateId: string, fields: Partial<AggregateHeader> = {}): AggregateHeader {
  return {
    aggregateId,
    definition: 'orders',
    status: 'open',
    expected: 3,
    received: 0,
    lateCount: 0,
    openedAt: T0,
    deadline: T0 + 60_000,
    params: { timeoutSeconds: 60 },
    requestId: `req-${aggregateId}`,
    ...fields,
  };
}

/** An error of the SDK's shape, named as a service names it (a throttle, a timeout). */
export function awsError(name: string, message = name): Error {
  return Object.assign(new Error(message), { name, $metadata: { httpStatusCode: 400 } });
}
