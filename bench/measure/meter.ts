import { AsyncLocalStorage } from 'node:async_hooks';
import type { ConsumedCapacity, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { SQSClient } from '@aws-sdk/client-sqs';
import {
  itemSize,
  scalar,
  type TableShape,
  transactActionUnits,
  type WireItem,
  writeUnits,
} from './capacity.ts';
import type { Counters } from './counters.ts';
import { ItemImageLog } from './item-images.ts';

/** Counts what the benchmark's AWS clients do, with SDK middleware: API calls per operation. */

/** The handler an SDK call is made from, set by {@link Meter.wrapHandler}. */
export const invocationScope = new AsyncLocalStorage<InvocationScope>();

/** One handler invocation as the meter follows it: its name. */
export interface InvocationScope {
  readonly handler: string;
  inFlight: number;
  roundTrips: number;
}

const READ_OPERATIONS = new Set(['GetItem', 'Query', 'Scan', 'BatchGetItem', 'TransactGetItems']);
const WRITE_OPERATIONS = new Set([
  'PutItem',
  'UpdateItem',
  'DeleteItem',
  'BatchWriteItem',
  'TransactWriteItems',
]);
const isDataOperation = (op: string) => READ_OPERATIONS.has(op) || WRITE_OPERATIONS.has(op);
/** SQS bills each 64 KB chunk of a request's payload as one request. */
const SQS_CHUNK_BYTES = 64 * 1024;

type Input = Record<string, unknown>;

/** The counters and the middleware that feeds them. */
export class Meter {
  private readonly counters = new Map<string, number>();
  private readonly tables = new Map<string, TableShape>();
  /** The last image of every item seen on the wire: the size of an item before a transactional update. */
  private readonly itemImages = new ItemImageLog(this.tables);
  /** Write units per partition key (`table:<pk>`, `<index>:<pk>`), while {@link trackKeys} is on. */
  public readonly keyUnits = new Map<string, number>();
  /** Read units per partition key (`table:<pk>`; index reads are not counted). */
  public readonly keyReadUnits = new Map<string, number>();
  public trackKeys = false;

  /** Adds to a counter. */
  public add(key: string, amount = 1): void {
    this.counters.set(key, (this.counters.get(key) ?? 0) + amount);
  }

  /** A copy of every counter. */
  public snapshot(): Counters {
    return Object.fromEntries(this.counters);
  }

  /** Declares a table's keys and indexes, so transactional writes to it can be costed. */
  public registerTable(shape: TableShape): void {
    this.tables.set(shape.name, shape);
  }

  /** Counts the SQS calls of `client` under `role`, each labelled with what its queue is for. */
  public instrumentSqs(
    client: SQSClient,
    role: string,
    label: (queueUrl: string) => string = () => 'queue',
  ): void {
    client.middlewareStack.add(
      (next, context) => async (args) => {
        const op = operationOf(context.commandName);
        const who = whoIs(role);
        const input = args.input as Input;
        const queueUrl = String(input.QueueUrl ?? '');
        const kind = queueUrl.endsWith('.fifo') ? 'fifo' : 'std';
        const queue = label(queueUrl);
        const result = await next(args);
        const output = result.output as unknown as Input;
        let bytes = 0;
        let detail = op;
        if (op === 'SendMessage') {
          bytes = messageBytes(input.MessageBody, input.MessageAttributes);
          this.add(`sqs.sent|${who}|${kind}`);
        } else if (op === 'SendMessageBatch') {
          const entries = (input.Entries as Input[] | undefined) ?? [];
          for (const entry of entries) bytes += messageBytes(entry.MessageBody, entry.MessageAttributes);
          this.add(`sqs.sent|${who}|${kind}`, entries.length);
        } else if (op === 'ReceiveMessage') {
          const messages = (output.Messages as Input[] | undefined) ?? [];
          for (const message of messages) bytes += messageBytes(message.Body, message.MessageAttributes);
          this.add(`sqs.received|${who}|${kind}`, messages.length);
          // Idle long polls are an artefact of how long the benchmark waits; they are kept apart.
          if (messages.length === 0) detail = 'ReceiveMessage(empty)';
        }
        this.add(`sqs.calls|${who}|${detail}|${queue}`);
        this.add(
          `sqs.billed|${who}|${kind}|${detail}|${queue}`,
          Math.max(1, Math.ceil(bytes / SQS_CHUNK_BYTES)),
        );
        return result;
      },
      { step: 'initialize', name: 'benchSqsMeter' },
    );
  }

  /** Counts the DynamoDB calls of `client` (and of any document client built over it) under `role`. */
  public instrumentDynamo(client: DynamoDBClient, role: string): void {
    client.middlewareStack.add(
      (next, context) => async (args) => {
        const op = operationOf(context.commandName);
        if (!isDataOperation(op)) return next(args);
        return next({ ...args, input: { ...(args.input as Input), ReturnConsumedCapacity: 'INDEXES' } });
      },
      { step: 'initialize', name: 'benchCapacityRequest' },
    );
    // At the build step the input is in the wire format, whichever client sent it.
    client.middlewareStack.add(
      (next, context) => async (args) => {
        const op = operationOf(context.commandName);
        if (!isDataOperation(op)) return next(args);
        const who = whoIs(role);
        const input = args.input as Input;
        this.add(`ddb.calls|${who}|${op}`);
        const scope = invocationScope.getStore();
        if (scope) {
          if (scope.inFlight === 0) scope.roundTrips += 1;
          scope.inFlight += 1;
        }
        try {
          const result = await next(args);
          this.afterDynamo(who, op, input, result.output as unknown as Input);
          return result;
        } catch (error) {
          this.onDynamoError(who, op, input, error);
          throw error;
        } finally {
          if (scope) scope.inFlight -= 1;
        }
      },
      { step: 'build', name: 'benchCapacityMeter' },
    );
  }

  /** Wraps a Lambda-style handler: counts invocations and records, times them. */
  public wrapHandler<Event extends { readonly Records?: readonly unknown[] }, Result>(
    name: string,
    handler: (event: Event) => Promise<Result>,
  ): (event: Event) => Promise<Result> {
    return this.wrap(name, handler, (event) => event.Records?.length ?? 0);
  }

  /**
   * Wraps a scheduled drain: a handler invoked with no records that receives them itself. A drain that received
   * nothing is counted apart (`lambda.idle_invocations`: the schedule idling).
   */
  public wrapDrain<Event, Result extends { readonly received: number }>(
    name: string,
    drain: (event: Event) => Promise<Result>,
  ): (event: Event) => Promise<Result> {
    return this.wrap(name, drain, (_, result) => result?.received, true);
  }

  /** Times an invocation of `handler` and counts it with its records (`undefined`: it threw), in its scope. */
  private wrap<Event, Result>(
    name: string,
    handler: (event: Event) => Promise<Result>,
    records: (event: Event, result: Result | undefined) => number | undefined,
    idleWhenEmpty = false,
  ): (event: Event) => Promise<Result> {
    return async (event) => {
      const started = performance.now();
      const scope: InvocationScope = { handler: name, inFlight: 0, roundTrips: 0 };
      let result: Result | undefined;
      try {
        result = await invocationScope.run(scope, () => handler(event));
        return result;
      } finally {
        const count = records(event, result);
        if (idleWhenEmpty && count === 0) {
          this.add(`lambda.idle_invocations|${name}`);
        } else {
          this.add(`lambda.invocations|${name}`);
          this.add(`lambda.records|${name}`, count ?? 0);
          this.add(`lambda.ms|${name}`, performance.now() - started);
          this.add(`ddb.round_trips|${name}`, scope.roundTrips);
        }
      }
    };
  }

  private afterDynamo(who: string, op: string, input: Input, output: Input): void {
    const reported = capacityOf(output.ConsumedCapacity);
    if (READ_OPERATIONS.has(op)) {
      this.add(`ddb.rcu|${who}|${op}`, reported.total);
      if (this.trackKeys) this.trackRead(input, reported.total);
      this.itemImages.afterRead(op, input, output);
      return;
    }
    this.add(`ddb.wcu_reported|${who}|${op}`, reported.total);
    if (op === 'TransactWriteItems') {
      const units = this.transactionUnits(input);
      this.add(`ddb.wcu|${who}|${op}`, units.table + units.index);
      this.add(`ddb.wcu_index|${who}|${op}`, units.index);
      this.add(`ddb.tx_actions|${who}`, units.actions);
      this.add(`ddb.tx_puts|${who}`, units.puts);
      if (units.unknown > 0) this.add(`ddb.size_unknown|${who}`, units.unknown);
      if (this.trackKeys)
        for (const [key, n] of units.keys) this.keyUnits.set(key, (this.keyUnits.get(key) ?? 0) + n);
      this.itemImages.afterTransaction(input);
      return;
    }
    this.add(`ddb.wcu|${who}|${op}`, reported.total);
    this.add(`ddb.wcu_index|${who}|${op}`, reported.index);
    if (this.trackKeys) this.trackWrite(input, reported.total - reported.index);
    this.itemImages.afterWrite(op, input, output);
  }

  /** Attributes a read's units to its partition key: a `GetItem`'s key, a table `Query`'s `:pk`. */
  private trackRead(input: Input, units: number): void {
    const table = this.tables.get(String(input.TableName));
    if (!table || input.IndexName !== undefined) return;
    const key =
      (input.Key as WireItem | undefined)?.[table.partitionKey] ??
      (input.ExpressionAttributeValues as WireItem | undefined)?.[':pk'];
    if (key === undefined) return;
    const name = `table:${scalar(key)}`;
    this.keyReadUnits.set(name, (this.keyReadUnits.get(name) ?? 0) + units);
  }

  /** Attributes a non-transactional write's table units to its partition key(s). */
  private trackWrite(input: Input, units: number): void {
    const credit = (tableName: unknown, key: WireItem | undefined, share: number): void => {
      const table = this.tables.get(String(tableName));
      if (!table || !key) return;
      const name = `table:${scalar(key[table.partitionKey])}`;
      this.keyUnits.set(name, (this.keyUnits.get(name) ?? 0) + share);
    };
    const requests = input.RequestItems as Record<string, Input[]> | undefined;
    if (!requests) {
      credit(input.TableName, (input.Key ?? input.Item) as WireItem | undefined, units);
      return;
    }
    // A batch reports one total: spread it evenly over its requests.
    const all = Object.entries(requests).flatMap(([tableName, list]) =>
      list.map((request) => ({ tableName, request })),
    );
    for (const { tableName, request } of all) {
      const key = ((request.PutRequest as Input | undefined)?.Item ??
        (request.DeleteRequest as Input | undefined)?.Key) as WireItem | undefined;
      credit(tableName, key, units / all.length);
    }
  }

  private onDynamoError(who: string, op: string, input: Input, error: unknown): void {
    const name = error instanceof Error ? error.name : 'Error';
    if (name === 'TransactionCanceledException') {
      const reasons = ((error as { CancellationReasons?: { Code?: string }[] }).CancellationReasons ?? [])
        .map((r) => r.Code ?? 'None')
        .filter((code) => code !== 'None');
      const reason = [...new Set(reasons)].sort().join('+') || 'unknown';
      this.add(`ddb.tx_cancelled|${who}|${reason}`);
      // AWS does not document what a cancelled transaction costs; kept apart, at the commit price.
      const units = this.transactionUnits(input);
      this.add(`ddb.wcu_cancelled|${who}`, units.table + units.index);
      return;
    }
    if (name === 'ConditionalCheckFailedException') {
      // A failed conditional write still consumes write units: the existing item's size, at least 1.
      this.add(`ddb.cond_failed|${who}|${op}`);
      const before = this.itemImages.before(
        input.TableName,
        (input.Key ?? input.Item) as WireItem | undefined,
      );
      const units = writeUnits(before ? itemSize(before) : 0);
      this.add(`ddb.wcu|${who}|${op}`, units);
      // Also apart, so a report can say how much of the write units bought nothing.
      this.add(`ddb.wcu_cond_failed|${who}|${op}`, units);
      return;
    }
    this.add(`ddb.errors|${who}|${op}:${name}`);
  }

  private transactionUnits(input: Input) {
    const actions = (input.TransactItems as Input[] | undefined) ?? [];
    const totals = { table: 0, index: 0, actions: actions.length, puts: 0, unknown: 0 };
    const keys = new Map<string, number>();
    for (const action of actions) {
      const body = (action.Put ?? action.Update ?? action.Delete ?? action.ConditionCheck) as
        | Input
        | undefined;
      const table = this.tables.get(String(body?.TableName));
      if (!table) {
        this.add('ddb.unregistered_table');
        continue;
      }
      const write = transactActionUnits(
        action as Parameters<typeof transactActionUnits>[0],
        table,
        this.itemImages.images,
      );
      totals.table += write.tableUnits;
      totals.index += write.indexUnits;
      if (action.Put) totals.puts += 1;
      if (write.sizeUnknown) totals.unknown += 1;
      const tableKey = `table:${write.partitionKey}`;
      keys.set(tableKey, (keys.get(tableKey) ?? 0) + write.tableUnits);
      for (const { key, units } of write.indexKeys) keys.set(key, (keys.get(key) ?? 0) + units);
    }
    return { ...totals, keys };
  }
}

/** `TransactWriteItemsCommand` → `TransactWriteItems`. */
function operationOf(commandName: string | undefined): string {
  return (commandName ?? 'Unknown').replace(/Command$/, '');
}

function whoIs(role: string): string {
  const scope = invocationScope.getStore();
  return scope ? `${role}:${scope.handler}` : role;
}

/** Payload bytes of a message as SQS counts them: body plus attribute names, types and values. */
function messageBytes(body: unknown, attributes: unknown): number {
  let bytes = typeof body === 'string' ? Buffer.byteLength(body) : 0;
  for (const [name, value] of Object.entries((attributes ?? {}) as Record<string, Input>)) {
    bytes += Buffer.byteLength(name) + Buffer.byteLength(String(value.DataType ?? ''));
    if (typeof value.StringValue === 'string') bytes += Buffer.byteLength(value.StringValue);
  }
  return bytes;
}

/** Total and index units of a `ConsumedCapacity` (one object, or a list for batch/transact calls). */
function capacityOf(consumed: unknown): { total: number; index: number } {
  const list = (Array.isArray(consumed) ? consumed : consumed ? [consumed] : []) as ConsumedCapacity[];
  let total = 0;
  let index = 0;
  for (const entry of list) {
    total += entry.CapacityUnits ?? 0;
    for (const gsi of Object.values(entry.GlobalSecondaryIndexes ?? {})) index += gsi.CapacityUnits ?? 0;
  }
  return { total, index };
}
