import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import type { Topology } from '../../shared/topology/topology.ts';

/** DynamoDB's published capacity rules, applied to item images. */

/** Bytes per write unit. */
export const WRITE_UNIT_BYTES = 1024;

/** An item in the wire format (`{ S: 'x' }`, `{ N: '1' }`, ...). */
export type WireItem = Record<string, AttributeValue>;

/** Size in bytes of one attribute value. */
export function attributeValueSize(value: AttributeValue): number {
  if (value.S !== undefined) return Buffer.byteLength(value.S);
  if (value.N !== undefined) return numberSize(value.N);
  if (value.B !== undefined) return value.B.byteLength;
  if (value.BOOL !== undefined || value.NULL !== undefined) return 1;
  if (value.SS !== undefined) return value.SS.reduce((sum, s) => sum + Buffer.byteLength(s), 0);
  if (value.NS !== undefined) return value.NS.reduce((sum, n) => sum + numberSize(n), 0);
  if (value.BS !== undefined) return value.BS.reduce((sum, b) => sum + b.byteLength, 0);
  if (value.L !== undefined) return 3 + value.L.reduce((sum, v) => sum + 1 + attributeValueSize(v), 0);
  if (value.M !== undefined) {
    return (
      3 +
      Object.entries(value.M).reduce(
        (sum, [name, v]) => sum + 1 + Buffer.byteLength(name) + attributeValueSize(v),
        0,
      )
    );
  }
  return 0;
}

/** Significant digits halved, plus one: DynamoDB's approximation of a number's stored size. */
function numberSize(text: string): number {
  const digits = text
    .replace(/^-/, '')
    .replace(/e.*$/i, '')
    .replace('.', '')
    .replace(/^0+/, '')
    .replace(/0+$/, '');
  return Math.ceil(Math.max(digits.length, 1) / 2) + 1 + (text.startsWith('-') ? 1 : 0);
}

/** Size in bytes of an item: attribute names plus values. */
export function itemSize(item: WireItem): number {
  let size = 0;
  for (const [name, value] of Object.entries(item))
    size += Buffer.byteLength(name) + attributeValueSize(value);
  return size;
}

/** Write units of one standard write of `bytes` (at least one, rounded up per KB). */
export function writeUnits(bytes: number): number {
  return Math.max(1, Math.ceil(bytes / WRITE_UNIT_BYTES));
}

/** Converts an item to the wire format whether it already is (a low-level client) or is a plain object. */
export function toWireItem(item: Record<string, unknown>, partitionKey: string): WireItem {
  const key = item[partitionKey];
  if (typeof key === 'string') {
    return marshall(item, { removeUndefinedValues: true, convertClassInstanceToMap: false });
  }
  return item as WireItem;
}

/** A global secondary index, as far as capacity is concerned. */
export interface IndexShape {
  readonly name: string;
  readonly partitionKey: string;
  readonly sortKey: string;
  readonly projection: 'ALL' | 'KEYS_ONLY';
}

/** A table, as far as capacity is concerned. */
export interface TableShape {
  readonly name: string;
  readonly partitionKey: string;
  readonly sortKey: string;
  readonly indexes: readonly IndexShape[];
}

/** The state table of a topology, as far as capacity is concerned. */
export function tableShapeOf(table: Topology['table']): TableShape {
  return {
    name: table.name,
    partitionKey: table.partitionKey.name,
    sortKey: table.sortKey.name,
    indexes: table.indexes.map((index) => ({
      name: index.name,
      partitionKey: index.partitionKey.name,
      sortKey: index.sortKey.name,
      projection: index.projection,
    })),
  };
}

/** The size of an item's entry in an index, or undefined when the item is not in it (sparse index). */
export function indexEntrySize(item: WireItem, table: TableShape, index: IndexShape): number | undefined {
  const pk = item[index.partitionKey];
  const sk = item[index.sortKey];
  if (pk === undefined || sk === undefined) return undefined;
  if (index.projection === 'ALL') return itemSize(item);
  const keys = new Set([table.partitionKey, table.sortKey, index.partitionKey, index.sortKey]);
  const projected: WireItem = {};
  for (const name of keys) {
    const value = item[name];
    if (value !== undefined) projected[name] = value;
  }
  return itemSize(projected);
}

/** The identity of an item: table, partition key value, sort key value. */
export function itemIdentity(table: TableShape, key: WireItem): string {
  return `${table.name}\u0000${scalar(key[table.partitionKey])}\u0000${scalar(key[table.sortKey])}`;
}

/** The text of a key attribute (keys are strings or numbers). */
export function scalar(value: AttributeValue | undefined): string {
  return value?.S ?? value?.N ?? '';
}

/** Write units of one item write, split by where they land. */
export interface ItemWrite {
  /** Units on the table itself, already doubled when transactional. */
  readonly tableUnits: number;
  /** Units on global secondary indexes (not doubled: index propagation follows the commit). */
  readonly indexUnits: number;
  /** The table partition key value written. */
  readonly partitionKey: string;
  /** Index partition keys written, as `<index>:<value>`, with their units. */
  readonly indexKeys: readonly { readonly key: string; readonly units: number }[];
  /** True when the size of the item before the write was not known and 1 KB was assumed. */
  readonly sizeUnknown: boolean;
}

/** What is known of items already in the table: their last image seen by the meter. */
export type ItemImages = Map<string, WireItem>;

/** The write units of one action of a `TransactWriteItems` request, by DynamoDB's rules. */
export function transactActionUnits(
  action: {
    readonly Put?: { readonly Item?: WireItem };
    readonly Update?: {
      readonly Key?: WireItem;
      readonly UpdateExpression?: string;
      readonly ExpressionAttributeNames?: Record<string, string>;
    };
    readonly Delete?: { readonly Key?: WireItem };
    readonly ConditionCheck?: { readonly Key?: WireItem };
  },
  table: TableShape,
  images: ItemImages,
): ItemWrite {
  const noWrite = (key: WireItem | undefined): ItemWrite => ({
    tableUnits: 0,
    indexUnits: 0,
    partitionKey: scalar(key?.[table.partitionKey]),
    indexKeys: [],
    sizeUnknown: false,
  });
  if (action.ConditionCheck) return noWrite(action.ConditionCheck.Key);
  if (action.Put?.Item) {
    const after = action.Put.Item;
    const before = images.get(itemIdentity(table, after));
    const size = Math.max(itemSize(after), before ? itemSize(before) : 0);
    const indexKeys = table.indexes.flatMap((index) => indexWrites(index, table, before, after, true));
    return {
      tableUnits: 2 * writeUnits(size),
      indexUnits: indexKeys.reduce((sum, k) => sum + k.units, 0),
      partitionKey: scalar(after[table.partitionKey]),
      indexKeys,
      sizeUnknown: false,
    };
  }
  const key = action.Update?.Key ?? action.Delete?.Key;
  if (!key) return noWrite(undefined);
  const before = images.get(itemIdentity(table, key));
  const size = before ? itemSize(before) : WRITE_UNIT_BYTES;
  let indexKeys: { key: string; units: number }[] = [];
  if (before && action.Delete) {
    indexKeys = table.indexes.flatMap((index) => indexWrites(index, table, before, undefined, true));
  } else if (before && action.Update) {
    const touched = namesIn(
      action.Update.UpdateExpression ?? '',
      action.Update.ExpressionAttributeNames ?? {},
    );
    indexKeys = table.indexes.flatMap((index) => {
      const changesKey = touched.has(index.partitionKey) || touched.has(index.sortKey);
      // A KEYS_ONLY index projects nothing else, so only a key change writes it; ALL projects every
      // attribute, so any change rewrites the entry.
      if (!changesKey && index.projection === 'KEYS_ONLY') return [];
      return indexWrites(index, table, before, before, !changesKey);
    });
  }
  return {
    tableUnits: 2 * writeUnits(size),
    indexUnits: indexKeys.reduce((sum, k) => sum + k.units, 0),
    partitionKey: scalar(key[table.partitionKey]),
    indexKeys,
    sizeUnknown: before === undefined,
  };
}

/** Index writes caused by replacing `before` with `after` (undefined: absent). */
function indexWrites(
  index: IndexShape,
  table: TableShape,
  before: WireItem | undefined,
  after: WireItem | undefined,
  sameKey: boolean,
): { key: string; units: number }[] {
  const old = before ? indexEntrySize(before, table, index) : undefined;
  const now = after ? indexEntrySize(after, table, index) : undefined;
  const writes: { key: string; units: number }[] = [];
  const keyOf = (item: WireItem): string => `${index.name}:${scalar(item[index.partitionKey])}`;
  if (old !== undefined && now !== undefined && sameKey) {
    if (after) writes.push({ key: keyOf(after), units: writeUnits(Math.max(old, now)) });
    return writes;
  }
  if (old !== undefined && before) writes.push({ key: keyOf(before), units: writeUnits(old) });
  if (now !== undefined && after) writes.push({ key: keyOf(after), units: writeUnits(now) });
  return writes;
}

/** Attribute names an update expression mentions: `#placeholders` resolved, plain names as written. */
function namesIn(expression: string, names: Record<string, string>): Set<string> {
  const found = new Set<string>();
  // Value placeholders (`:n`) are not names; the look-behind keeps their letters out.
  for (const token of expression.match(/(?<![:\w#])#?[A-Za-z_][A-Za-z0-9_]*/g) ?? []) {
    if (token.startsWith('#')) {
      const name = names[token];
      if (name !== undefined) found.add(name);
    } else if (!/^(SET|ADD|REMOVE|DELETE|if_not_exists|list_append)$/i.test(token)) {
      found.add(token);
    }
  }
  return found;
}
