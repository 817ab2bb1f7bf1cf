import { type Duration, Token } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type { Topology } from '../shared/topology/topology.ts';

/** The handlers' roles, the keys of `reservedConcurrency` (and of `Fanin.functions`). */
export const FUNCTION_ROLES = ['fanOut', 'reply', 'timer', 'sweeper', 'control', 'distributor'] as const;
export type FunctionRole = (typeof FUNCTION_ROLES)[number];

/** The options {@link validateOptions} checks: the construct options. */
export interface ConstructOptions {
  readonly reservedConcurrency?: Partial<Readonly<Record<FunctionRole, number>>>;
  readonly oldestMessageAgeAlarm?: Duration;
  readonly table?: dynamodb.ITable;
  readonly deletionProtection?: boolean;
}

/**
 * The concurrency each handler's SQS event sources may use at once (their `maxConcurrency`
 * summed): a reserved concurrency below it throttles Lambda's own pollers, which return the
 * messages to the queue and, after `maxReceiveCount` receives, to its dead-letter queue. The
 * scheduled handlers (sweeper, distributor) need one.
 */
export function minimumReservedConcurrency(topology: Topology): Record<FunctionRole, number> {
  return {
    fanOut: topology.consumers.fanOut.maxConcurrency,
    reply: topology.replyConsumers.reduce((sum, consumer) => sum + consumer.maxConcurrency, 0),
    timer: topology.consumers.timer.maxConcurrency,
    control: topology.consumers.control.maxConcurrency,
    sweeper: 1,
    distributor: 1,
  };
}

/**
 * Checks the construct options against the topology; every message names the value it was given.
 * The table given as `table` is checked against the topology's keys and indexes when it is a
 * `dynamodb.Table` of this app (an imported table's schema is unknown at synth: see docs/configuration.md).
 */
export function validateOptions(topology: Topology, options: ConstructOptions): void {
  const minimum = minimumReservedConcurrency(topology);
  for (const [role, value] of Object.entries(options.reservedConcurrency ?? {})) {
    if (!(FUNCTION_ROLES as readonly string[]).includes(role)) {
      throw new Error(
        `reservedConcurrency keys must be handler roles (${FUNCTION_ROLES.join(', ')}) (given "${role}")`,
      );
    }
    if (typeof value === 'number' && Token.isUnresolved(value)) {
      throw new Error(
        `reservedConcurrency.${role} must be known at synth, not a deploy-time token (given ${Token.asString(value)})`,
      );
    }
    const least = minimum[role as FunctionRole];
    if (!Number.isInteger(value) || value < least) {
      throw new Error(
        `reservedConcurrency.${role} must be an integer of at least ${least}, the maximum concurrency of its event sources (less throttles Lambda's SQS pollers and sends messages to the dead-letter queues) (given ${value})`,
      );
    }
  }
  if (options.oldestMessageAgeAlarm !== undefined) {
    const seconds = options.oldestMessageAgeAlarm.toSeconds({ integral: false });
    if (!Number.isInteger(seconds) || seconds < 60) {
      throw new Error(
        `oldestMessageAgeAlarm must be a whole number of seconds, at least 60 (given ${options.oldestMessageAgeAlarm.toHumanString()})`,
      );
    }
  }
  if (options.table) {
    if (options.deletionProtection !== undefined) {
      throw new Error(
        'deletionProtection applies to the table fanin creates; set it on the table given as `table` instead (given both)',
      );
    }
    if (options.table instanceof dynamodb.Table) checkTableSchema(topology, options.table);
  }
}

/** The table fanin is given must have the topology's keys and indexes: the handlers query them by name. */
function checkTableSchema(topology: Topology, table: dynamodb.Table): void {
  const spec = topology.table;
  const describe = (key: { name: string; type: string } | undefined) =>
    key ? `${key.name} (${key.type})` : 'none';
  const want = (key: { readonly name: string; readonly type: 'S' | 'N' }) => `${key.name} (${key.type})`;
  const schemas: [
    string,
    dynamodb.SchemaOptions | undefined,
    typeof spec.partitionKey,
    typeof spec.sortKey,
  ][] = [
    ['the table', tryGet(() => table.schema()), spec.partitionKey, spec.sortKey],
    ...spec.indexes.map(
      (
        index,
      ): [string, dynamodb.SchemaOptions | undefined, typeof spec.partitionKey, typeof spec.sortKey] => [
        `index ${index.name}`,
        tryGet(() => table.schema(index.name)),
        index.partitionKey,
        index.sortKey,
      ],
    ),
  ];
  for (const [what, schema, partitionKey, sortKey] of schemas) {
    const given = `${describe(schema?.partitionKey)} / ${describe(schema?.sortKey)}`;
    const expected = `${want(partitionKey)} / ${want(sortKey)}`;
    if (given !== expected) {
      throw new Error(
        `table: ${what} must have the keys partition / sort ${expected}, as describeTopology's table (given ${schema ? given : 'no such index'})`,
      );
    }
  }
}

function tryGet<T>(read: () => T): T | undefined {
  try {
    return read();
  } catch {
    return undefined;
  }
}
