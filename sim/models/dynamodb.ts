/**
 * An in-memory, synchronous, deterministic model of DynamoDB for the simulation: the document
 * client's commands as fanin's adapters send them (`PutCommand`, `UpdateCommand`, `QueryCommand`,
 * ...), their low-level counterparts, and the table operations of provisioning. Time comes from
 * `clock`, chance from `random`; nothing else. See sim/models/index.ts for what it is faithful to.
 */
import {
  ConditionalCheckFailedException,
  ResourceNotFoundException,
  TransactionCanceledException,
} from '@aws-sdk/client-dynamodb';
import type { TableSpec } from '../../shared/topology/topology.ts';
import { createTableFromInput, describeTable, updateTimeToLive } from './dynamodb/admin.ts';
import { batchGet, batchWrite } from './dynamodb/batch.ts';
import { DOCUMENT_COMMANDS, marshallInput, toNative, unmarshallOutput } from './dynamodb/document.ts';
import { evaluateCondition, project, resolvePath } from './dynamodb/evaluate.ts';
import {
  type Condition,
  Placeholders,
  parseCondition,
  parseProjection,
  parseUpdate,
} from './dynamodb/expressions.ts';
import { DYNAMODB_LIMITS } from './dynamodb/limits.ts';
import { read } from './dynamodb/query.ts';
import { checkItem, checkKey, itemSize } from './dynamodb/size.ts';
import { type IndexDef, Table } from './dynamodb/table.ts';
import { applyUpdate } from './dynamodb/update.ts';
import type { AV, Item } from './dynamodb/values.ts';
import { sdkError, validation } from './errors.ts';

/** Options of {@link DynamoDbModel}. */
export interface DynamoDbModelOptions {
  /** The time in epoch milliseconds. */
  readonly clock: () => number;
  /** A uniform draw in [0, 1). */
  readonly random: () => number;
  /** How old a version an eventually consistent read may return. @default 1000 */
  readonly staleMs?: number;
  /** How often an eventually consistent read returns an older version than the latest. @default 0.2 */
  readonly staleProbability?: number;
  /** How likely TTL deletes each expired item on one {@link DynamoDbModel.expireSome}. @default 0.5 */
  readonly expiryProbability?: number;
}

export { DYNAMODB_LIMITS } from './dynamodb/limits.ts';

const WRITES = new Set([
  'PutCommand',
  'UpdateCommand',
  'DeleteCommand',
  'BatchWriteCommand',
  'TransactWriteCommand',
  'PutItemCommand',
  'UpdateItemCommand',
  'DeleteItemCommand',
  'BatchWriteItemCommand',
  'TransactWriteItemsCommand',
  'CreateTableCommand',
  'DeleteTableCommand',
  'UpdateTimeToLiveCommand',
]);

/** True when the DynamoDB command changes state (a timeout after it may have taken effect). */
export function isDynamoDbWrite(commandName: string): boolean {
  return WRITES.has(commandName);
}

/** TTL ignores items whose expiry is more than five years past, as DynamoDB documents. */
const TTL_IGNORED_AFTER_SECONDS = 5 * 365 * 24 * 3600;

type Request = Record<string, unknown>;

/** The DynamoDB model. */
export class DynamoDbModel {
  private readonly tables = new Map<string, Table>();
  private readonly clock: () => number;
  private readonly random: () => number;
  private readonly staleMs: number;
  private readonly staleProbability: number;
  private readonly expiryProbability: number;

  public constructor(options: DynamoDbModelOptions) {
    this.clock = options.clock;
    this.random = options.random;
    this.staleMs = options.staleMs ?? 1000;
    this.staleProbability = options.staleProbability ?? 0.2;
    this.expiryProbability = options.expiryProbability ?? 0.5;
  }

  /**
   * Runs one command: a document command with its native input (and answer), or a low-level
   * one with wire-form input. Throws the SDK's errors.
   */
  // biome-ignore lint/suspicious/noExplicitAny: commands of every shape pass through here
  public handle(commandName: string, input: any): any {
    const operation = DOCUMENT_COMMANDS[commandName];
    if (operation) {
      const output = this.operate(operation, marshallInput(commandName, input ?? {}));
      return unmarshallOutput(commandName, output);
    }
    return this.operate(commandName.replace(/Command$/, ''), input ?? {});
  }

  /** Creates a table as the topology describes it (what provisioning does). */
  public createTable(spec: TableSpec): void {
    const indexes: IndexDef[] = spec.indexes.map((index) => ({
      name: index.name,
      schema: { partition: index.partitionKey, sort: index.sortKey },
      projection: index.projection,
    }));
    const attributes = new Map<string, string>();
    for (const key of [
      spec.partitionKey,
      spec.sortKey,
      ...spec.indexes.flatMap((i) => [i.partitionKey, i.sortKey]),
    ]) {
      attributes.set(key.name, key.type);
    }
    const table = new Table(
      spec.name,
      { partition: spec.partitionKey, sort: spec.sortKey },
      indexes,
      [...attributes].map(([AttributeName, AttributeType]) => ({ AttributeName, AttributeType })),
      this.clock(),
    );
    table.ttlAttribute = spec.ttlAttribute;
    this.tables.set(spec.name, table);
  }

  /** Copies of every current item of a table, in the document client's native form. */
  public items(tableName: string): Record<string, unknown>[] {
    return this.table(tableName).items().map(toNative);
  }

  /** The names of the tables. */
  public tableNames(): string[] {
    return [...this.tables.keys()];
  }

  /**
   * TTL at work: deletes, each at the model's random choice, some of the items whose TTL
   * attribute (epoch seconds) is at or before `now`; DynamoDB deletes them at any moment after
   * their expiry, and until then they are read like any other. @returns how many it deleted
   */
  public expireSome(now = this.clock()): number {
    return this.expire(now, this.expiryProbability);
  }

  /** TTL having caught up: deletes every item whose TTL is at or before `now`. */
  public expireAll(now = this.clock()): number {
    return this.expire(now, 1);
  }

  private expire(now: number, probability: number): number {
    let deleted = 0;
    const seconds = now / 1000;
    for (const table of this.tables.values()) {
      const attribute = table.ttlAttribute;
      // A sweep is also when the history of deleted keys is forgotten.
      table.prune(this.clock(), this.staleMs);
      if (!attribute) continue;
      // Only the current items: table.visible gives them without copying.
      for (const item of table.visible(Number.POSITIVE_INFINITY)) {
        const ttl = item[attribute]?.N;
        if (ttl === undefined) continue;
        const at = Number(ttl);
        if (at > seconds || at < seconds - TTL_IGNORED_AFTER_SECONDS) continue;
        if (probability < 1 && this.random() >= probability) continue;
        table.write(table.keyOf(item), undefined, this.clock(), this.staleMs);
        deleted += 1;
      }
    }
    return deleted;
  }

  private table(name: unknown): Table {
    const table = this.tables.get(String(name));
    if (!table) throw sdkError(ResourceNotFoundException, 'Requested resource not found');
    return table;
  }

  /** The time a read sees: now, or (eventually consistent, by chance) up to staleMs before. */
  private readTime(consistent: boolean): number {
    const now = this.clock();
    if (consistent || this.staleMs <= 0 || this.random() >= this.staleProbability) return now;
    return now - this.random() * this.staleMs;
  }

  private operate(operation: string, input: Request): Request {
    switch (operation) {
      case 'PutItem':
        return this.putItem(input);
      case 'GetItem':
        return this.getItem(input);
      case 'UpdateItem':
        return this.updateItem(input);
      case 'DeleteItem':
        return this.deleteItem(input);
      case 'Query':
      case 'Scan': {
        const table = this.table(input.TableName);
        const consistent = input.ConsistentRead === true && input.IndexName === undefined;
        return read(table, input as never, this.readTime(consistent), operation === 'Query');
      }
      case 'BatchGetItem':
        return batchGet(input, (get) => this.getItem(get));
      case 'BatchWriteItem':
        return batchWrite(
          input,
          (name) => this.table(name),
          (table, key, item) => table.write(key, item, this.clock(), this.staleMs),
        );
      case 'TransactWriteItems':
        return this.transactWrite(input);
      case 'TransactGetItems':
        return this.transactGet(input);
      case 'CreateTable': {
        const table = createTableFromInput(input, (name) => this.tables.has(name), this.clock());
        this.tables.set(table.name, table);
        return { TableDescription: describeTable(table) };
      }
      case 'DescribeTable':
        return { Table: describeTable(this.table(input.TableName)) };
      case 'DeleteTable': {
        const table = this.table(input.TableName);
        this.tables.delete(table.name);
        return { TableDescription: { ...describeTable(table), TableStatus: 'DELETING' } };
      }
      case 'UpdateTimeToLive':
        return updateTimeToLive(this.table(input.TableName), input);
      case 'DescribeTimeToLive': {
        const table = this.table(input.TableName);
        return {
          TimeToLiveDescription: table.ttlAttribute
            ? { TimeToLiveStatus: 'ENABLED', AttributeName: table.ttlAttribute }
            : { TimeToLiveStatus: 'DISABLED' },
        };
      }
      default:
        throw validation(`the DynamoDB model does not implement ${operation}`);
    }
  }

  /** A write's precondition, parsed; undefined without one. */
  private condition(input: Request, placeholders: Placeholders): Condition | undefined {
    const text = input.ConditionExpression as string | undefined;
    return text === undefined ? undefined : parseCondition(text, 'ConditionExpression', placeholders);
  }

  private failed(input: Request, old: Item | undefined): Error {
    const withItem = input.ReturnValuesOnConditionCheckFailure === 'ALL_OLD' && old;
    return sdkError(
      ConditionalCheckFailedException,
      'The conditional request failed',
      withItem ? { Item: old } : {},
    );
  }

  /** Validates a Put and returns what applying it needs. */
  private preparePut(input: Request) {
    const table = this.table(input.TableName);
    const item = (input.Item ?? {}) as Item;
    const placeholders = new Placeholders(
      input.ExpressionAttributeNames as never,
      input.ExpressionAttributeValues as never,
    );
    const condition = this.condition(input, placeholders);
    placeholders.checkAllUsed();
    checkItem(item, table.schema);
    table.checkIndexKeys(item);
    return { table, key: table.keyOf(item), item, condition };
  }

  private putItem(input: Request): Request {
    const { table, key, item, condition } = this.preparePut(input);
    const old = table.current(key);
    if (condition && !evaluateCondition(condition, old, 'ConditionExpression')) throw this.failed(input, old);
    table.write(key, item, this.clock(), this.staleMs);
    return input.ReturnValues === 'ALL_OLD' && old ? { Attributes: old } : {};
  }

  private getItem(input: Request): Request {
    const table = this.table(input.TableName);
    const key = (input.Key ?? {}) as Item;
    checkKey(key, table.schema, true);
    const placeholders = new Placeholders(input.ExpressionAttributeNames as never, undefined);
    const projection = input.ProjectionExpression
      ? parseProjection(input.ProjectionExpression as string, placeholders)
      : undefined;
    placeholders.checkAllUsed();
    const item = table.at(key, this.readTime(input.ConsistentRead === true));
    if (!item) return {};
    return { Item: projection ? project(item, projection) : item };
  }

  /** Validates an Update and returns what applying it needs. */
  private prepareUpdate(input: Request) {
    const table = this.table(input.TableName);
    const key = (input.Key ?? {}) as Item;
    checkKey(key, table.schema, true);
    const placeholders = new Placeholders(
      input.ExpressionAttributeNames as never,
      input.ExpressionAttributeValues as never,
    );
    const actions = input.UpdateExpression ? parseUpdate(input.UpdateExpression as string, placeholders) : [];
    const condition = this.condition(input, placeholders);
    placeholders.checkAllUsed();
    return { table, key, actions, condition };
  }

  /** The item after an update (validated), or throws the error DynamoDB gives. */
  private updated(prepared: ReturnType<DynamoDbModel['prepareUpdate']>, old: Item | undefined) {
    const { table, key, actions } = prepared;
    const result = applyUpdate(old ?? key, actions, table.keyNames());
    checkItem(result.item, table.schema, 'Item size to update has exceeded the maximum allowed size');
    table.checkIndexKeys(result.item);
    return result;
  }

  private updateItem(input: Request): Request {
    const prepared = this.prepareUpdate(input);
    const { table, key, condition } = prepared;
    const old = table.current(key);
    if (condition && !evaluateCondition(condition, old, 'ConditionExpression')) throw this.failed(input, old);
    const { item, updated } = this.updated(prepared, old);
    table.write(key, item, this.clock(), this.staleMs);
    switch (input.ReturnValues) {
      case 'ALL_OLD':
        return old ? { Attributes: old } : {};
      case 'ALL_NEW':
        return { Attributes: item };
      case 'UPDATED_OLD': {
        const part = old
          ? project(
              old,
              updated.filter((p) => resolvePath(old, p) !== undefined),
            )
          : {};
        return Object.keys(part).length > 0 ? { Attributes: part } : {};
      }
      case 'UPDATED_NEW': {
        const part = project(item, updated);
        return Object.keys(part).length > 0 ? { Attributes: part } : {};
      }
      default:
        return {};
    }
  }

  private prepareDelete(input: Request) {
    const table = this.table(input.TableName);
    const key = (input.Key ?? {}) as Item;
    checkKey(key, table.schema, true);
    const placeholders = new Placeholders(
      input.ExpressionAttributeNames as never,
      input.ExpressionAttributeValues as never,
    );
    const condition = this.condition(input, placeholders);
    placeholders.checkAllUsed();
    return { table, key, condition };
  }

  private deleteItem(input: Request): Request {
    const { table, key, condition } = this.prepareDelete(input);
    const old = table.current(key);
    if (condition && !evaluateCondition(condition, old, 'ConditionExpression')) throw this.failed(input, old);
    table.write(key, undefined, this.clock(), this.staleMs);
    return input.ReturnValues === 'ALL_OLD' && old ? { Attributes: old } : {};
  }

  private transactWrite(input: Request): Request {
    const actions = (input.TransactItems ?? []) as Record<string, Request>[];
    if (actions.length === 0 || actions.length > DYNAMODB_LIMITS.transactionItems) {
      throw validation(
        `1 validation error detected: Value at 'transactItems' failed to satisfy constraint: Member must have length less than or equal to ${DYNAMODB_LIMITS.transactionItems}`,
      );
    }
    const ids = new Set<string>();
    let bytes = 0;
    const prepared = actions.map((action) => {
      const [kind, request] = Object.entries(action)[0] ?? [];
      if (!kind || !request)
        throw validation('TransactItems can only contain one of Check, Put, Update or Delete');
      let step: {
        table: Table;
        key: Item;
        condition?: Condition | undefined;
        apply: (old: Item | undefined) => Item | undefined;
      };
      if (kind === 'Put') {
        const p = this.preparePut(request);
        bytes += itemSize(p.item);
        step = { ...p, apply: () => p.item };
      } else if (kind === 'Update') {
        const p = this.prepareUpdate(request);
        step = { ...p, apply: (old) => this.updated(p, old).item };
      } else if (kind === 'Delete') {
        const p = this.prepareDelete(request);
        step = { ...p, apply: () => undefined };
      } else if (kind === 'ConditionCheck') {
        const p = this.prepareDelete(request);
        if (!p.condition)
          throw validation('The ConditionExpression parameter is required for ConditionCheck');
        step = { ...p, apply: (old) => old };
      } else throw validation(`TransactItems contains an unknown action: ${kind}`);
      const id = `${step.table.name}\u0000${JSON.stringify(step.table.keyNames().map((n) => step.key[n]))}`;
      if (ids.has(id)) throw validation('Transaction request cannot include multiple operations on one item');
      ids.add(id);
      return { kind, request, ...step };
    });
    if (bytes > DYNAMODB_LIMITS.transactionBytes) {
      throw validation('Transaction request size has exceeded the maximum allowed size of 4 MB');
    }
    const reasons: Record<string, unknown>[] = [];
    const results: (Item | undefined)[] = [];
    let cancelled = false;
    for (const step of prepared) {
      const old = step.table.current(step.key);
      if (step.condition && !evaluateCondition(step.condition, old, 'ConditionExpression')) {
        cancelled = true;
        const withItem = step.request.ReturnValuesOnConditionCheckFailure === 'ALL_OLD' && old;
        reasons.push({
          Code: 'ConditionalCheckFailed',
          Message: 'The conditional request failed',
          ...(withItem ? { Item: old } : {}),
        });
        results.push(undefined);
        continue;
      }
      try {
        results.push(step.apply(old));
        reasons.push({ Code: 'None' });
      } catch (error) {
        cancelled = true;
        reasons.push({ Code: 'ValidationError', Message: (error as Error).message });
        results.push(undefined);
      }
    }
    if (cancelled) {
      const message = `Transaction cancelled, please refer cancellation reasons for specific reasons [${reasons.map((r) => r.Code).join(', ')}]`;
      throw sdkError(TransactionCanceledException, message, {
        Message: message,
        CancellationReasons: reasons,
      });
    }
    const now = this.clock();
    prepared.forEach((step, i) => {
      if (step.kind !== 'ConditionCheck') step.table.write(step.key, results[i], now, this.staleMs);
    });
    return {};
  }

  private transactGet(input: Request): Request {
    const gets = (input.TransactItems ?? []) as { Get?: Request }[];
    if (gets.length === 0 || gets.length > DYNAMODB_LIMITS.transactionItems) {
      throw validation(
        `1 validation error detected: Value at 'transactItems' failed to satisfy constraint: Member must have length less than or equal to ${DYNAMODB_LIMITS.transactionItems}`,
      );
    }
    return {
      Responses: gets.map(({ Get }) => {
        const { Item } = this.getItem({ ...(Get ?? {}), ConsistentRead: true });
        return Item ? { Item } : {};
      }),
    };
  }
}

export type { AV, Item };
