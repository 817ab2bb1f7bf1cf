/**
 * Query and Scan over a table or one of its global secondary indexes: key conditions (=, <, <=,
 * >, >=, BETWEEN, begins_with on the sort key), filters applied after Limit (as DynamoDB counts
 * ScannedCount), projections, Select COUNT, ScanIndexForward, pagination by
 * ExclusiveStartKey/LastEvaluatedKey and the 1 MB page.
 */
import { validation } from '../errors.ts';
import { evaluateCondition, project } from './evaluate.ts';
import {
  type Condition,
  type Operand,
  type Path,
  Placeholders,
  parseCondition,
  parseProjection,
} from './expressions.ts';
import { itemSize, type KeySchema } from './size.ts';
import type { IndexDef, Table } from './table.ts';
import { type AV, clone, compareValues, equalValues, type Item } from './values.ts';

/** DynamoDB's largest page of a query or scan. */
export const MAX_PAGE_BYTES = 1024 * 1024;

/** A Query or Scan request in wire form (the fields the model reads). */
export interface ReadRequest {
  readonly TableName: string;
  readonly IndexName?: string;
  readonly KeyConditionExpression?: string;
  readonly FilterExpression?: string;
  readonly ProjectionExpression?: string;
  readonly ExpressionAttributeNames?: Record<string, string>;
  readonly ExpressionAttributeValues?: Item;
  readonly ExclusiveStartKey?: Item;
  readonly Limit?: number;
  readonly ScanIndexForward?: boolean;
  readonly Select?: string;
  readonly ConsistentRead?: boolean;
}

interface KeyCondition {
  readonly partition: AV;
  readonly sort?: Condition;
}

function operandPathName(operand: Operand): string | undefined {
  if (operand.kind !== 'path' || operand.path.length !== 1) return undefined;
  const segment = operand.path[0];
  return segment && 'name' in segment ? segment.name : undefined;
}

/** Splits a key condition into the partition key's value and the sort key's condition. */
function keyCondition(condition: Condition, schema: KeySchema): KeyCondition {
  const parts: Condition[] = [];
  const flatten = (c: Condition) => {
    if (c.kind === 'and') {
      flatten(c.a);
      flatten(c.b);
    } else parts.push(c);
  };
  flatten(condition);
  let partition: AV | undefined;
  let sort: Condition | undefined;
  for (const part of parts) {
    if (part.kind === 'or' || part.kind === 'not' || part.kind === 'in') {
      throw validation(`Invalid operator used in KeyConditionExpression: ${part.kind.toUpperCase()}`);
    }
    const target = part.kind === 'fn' ? part.args[0] : (part.a as Operand);
    const name = target ? operandPathName(target) : undefined;
    if (name === schema.partition.name) {
      if (part.kind !== 'cmp' || part.op !== '=' || part.b.kind !== 'value') {
        throw validation('Query key condition not supported');
      }
      partition = part.b.value;
    } else if (name !== undefined && name === schema.sort?.name) {
      if (sort) throw validation('KeyConditionExpressions must only contain one condition per key');
      if ((part.kind === 'fn' && part.fn !== 'begins_with') || (part.kind === 'cmp' && part.op === '<>')) {
        throw validation(
          `Invalid operator used in KeyConditionExpression: ${part.kind === 'fn' ? part.fn : '<>'}`,
        );
      }
      if (part.kind === 'between' && part.low.kind === 'value' && part.high.kind === 'value') {
        const order = compareValues(part.low.value, part.high.value);
        if (order !== undefined && order > 0) {
          throw validation(
            'Invalid KeyConditionExpression: The BETWEEN operator requires upper bound to be greater than or equal to lower bound',
          );
        }
      }
      sort = part;
    } else {
      throw validation(`Query condition missed key schema element: ${name ?? schema.partition.name}`);
    }
  }
  if (!partition) throw validation(`Query condition missed key schema element: ${schema.partition.name}`);
  if (partition && Object.keys(partition)[0] !== schema.partition.type) {
    throw validation(
      'One or more parameter values were invalid: Condition parameter type does not match schema type',
    );
  }
  return { partition, ...(sort ? { sort } : {}) };
}

/** Runs a Query (`query` true) or a Scan over the items visible at time `at`. */
export function read(
  table: Table,
  request: ReadRequest,
  at: number,
  query: boolean,
): Record<string, unknown> {
  const index: IndexDef | undefined = request.IndexName ? table.index(request.IndexName) : undefined;
  if (index && request.ConsistentRead) {
    throw validation('Consistent reads are not supported on global secondary indexes');
  }
  if (request.Limit !== undefined && request.Limit < 1) {
    throw validation(
      `1 validation error detected: Value '${request.Limit}' at 'limit' failed to satisfy constraint: Member must have value greater than or equal to 1`,
    );
  }
  const schema = index?.schema ?? table.schema;
  const placeholders = new Placeholders(request.ExpressionAttributeNames, request.ExpressionAttributeValues);
  let key: KeyCondition | undefined;
  if (query) {
    if (!request.KeyConditionExpression) {
      throw validation(
        'Either the KeyConditions or KeyConditionExpression parameter must be specified in the request.',
      );
    }
    key = keyCondition(
      parseCondition(request.KeyConditionExpression, 'KeyConditionExpression', placeholders),
      schema,
    );
  }
  const filter = request.FilterExpression
    ? parseCondition(request.FilterExpression, 'FilterExpression', placeholders)
    : undefined;
  if (filter && query) {
    for (const name of [schema.partition.name, ...(schema.sort ? [schema.sort.name] : [])]) {
      if (mentions(filter, name)) {
        throw validation(
          `Filter Expression can only contain non-primary key attributes: Primary key attribute: ${name}`,
        );
      }
    }
  }
  const projection: Path[] | undefined = request.ProjectionExpression
    ? parseProjection(request.ProjectionExpression, placeholders)
    : undefined;
  placeholders.checkAllUsed();
  if (request.Select === 'COUNT' && projection) {
    throw validation(
      'Cannot specify the AttributesToGet or ProjectionExpression when choosing to get a COUNT',
    );
  }

  // Only the partition asked for (of the table or of the index), as DynamoDB reads it.
  let candidates = table.visible(
    at,
    key ? (index ? { index, indexPartition: key.partition } : { partition: key.partition }) : {},
  );
  if (index)
    candidates = candidates
      .map((item) => table.inIndex(index, item))
      .filter((i): i is Item => i !== undefined);
  if (key) {
    const { partition, sort } = key;
    candidates = candidates.filter((item) => {
      const value = item[schema.partition.name];
      return (
        value !== undefined &&
        equalValues(value, partition) &&
        (!sort || evaluateCondition(sort, item, 'KeyConditionExpression'))
      );
    });
  }
  candidates.sort((a, b) => table.compare(schema, a, b));
  if (query && request.ScanIndexForward === false) candidates.reverse();
  if (request.ExclusiveStartKey) {
    const start = request.ExclusiveStartKey;
    const forward = !(query && request.ScanIndexForward === false);
    candidates = candidates.filter((item) => {
      const order = table.compare(schema, item, start);
      return forward ? order > 0 : order < 0;
    });
  }
  const limit = request.Limit ?? Number.POSITIVE_INFINITY;
  const items: Item[] = [];
  let scanned = 0;
  let bytes = 0;
  let last: Item | undefined;
  for (const item of candidates) {
    if (scanned >= limit || bytes >= MAX_PAGE_BYTES) break;
    scanned += 1;
    bytes += itemSize(item);
    last = item;
    if (!filter || evaluateCondition(filter, item, 'FilterExpression'))
      items.push(clone(projection ? project(item, projection) : item));
  }
  const more = scanned < candidates.length || (scanned === limit && scanned > 0);
  const lastKey = more && last ? keyOfRead(table, index, last) : undefined;
  return {
    ...(request.Select === 'COUNT' ? {} : { Items: items }),
    Count: items.length,
    ScannedCount: scanned,
    ...(lastKey ? { LastEvaluatedKey: lastKey } : {}),
  };
}

/** The LastEvaluatedKey of a read: the table's key, and the index's key for an index read. */
function keyOfRead(table: Table, index: IndexDef | undefined, item: Item): Item {
  const key = table.keyOf(item);
  if (index) {
    for (const part of [index.schema.partition, ...(index.schema.sort ? [index.schema.sort] : [])]) {
      if (item[part.name] !== undefined) key[part.name] = item[part.name] as AV;
    }
  }
  return key;
}

function mentions(condition: Condition, name: string): boolean {
  const inOperand = (o: Operand): boolean => {
    if (o.kind === 'path' || o.kind === 'size') {
      const first = o.path[0];
      return first !== undefined && 'name' in first && first.name === name;
    }
    return false;
  };
  switch (condition.kind) {
    case 'and':
    case 'or':
      return mentions(condition.a, name) || mentions(condition.b, name);
    case 'not':
      return mentions(condition.a, name);
    case 'cmp':
      return inOperand(condition.a) || inOperand(condition.b);
    case 'between':
      return inOperand(condition.a) || inOperand(condition.low) || inOperand(condition.high);
    case 'in':
      return inOperand(condition.a) || condition.list.some(inOperand);
    case 'fn':
      return condition.args.some(inOperand);
  }
}
