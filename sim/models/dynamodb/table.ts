/**
 * One table of the DynamoDB model: its items by key, each with a short history of its recent
 * versions (and the time each was written), so that an eventually consistent read can return a
 * version up to `staleMs` old, as DynamoDB's replicas may; and its global secondary indexes,
 * derived from the items at read time (sparse: an item is in an index only when it has both of
 * the index's key attributes, of their declared types).
 */

import { validation } from '../errors.ts';
import { type KeySchema, MAX_PARTITION_KEY_BYTES, MAX_SORT_KEY_BYTES, valueSize } from './size.ts';
import { type AV, clone, compareValues, type Item, keyText, typeOf } from './values.ts';

/** A global secondary index's definition. */
export interface IndexDef {
  readonly name: string;
  readonly schema: KeySchema;
  readonly projection: 'ALL' | 'KEYS_ONLY' | 'INCLUDE';
  readonly nonKeyAttributes?: readonly string[];
}

/** A version of an item: `item` undefined for a deletion. */
interface Version {
  readonly at: number;
  readonly item: Item | undefined;
}

/** One key's versions, oldest first; the last is the current one. */
interface Entry {
  readonly id: string;
  readonly partition: string;
  readonly versions: Version[];
}

/** A table of the model. */
export class Table {
  private readonly entries = new Map<string, Entry>();
  /** The ids of the entries of each partition key. */
  private readonly partitions = new Map<string, Set<string>>();
  /**
   * Per index, the ids of the entries that have had each index partition key in a version still
   * kept (a stale read may see it); checked against the version read, cleaned as queries pass.
   */
  private readonly indexPartitions = new Map<string, Map<string, Set<string>>>();
  public ttlAttribute: string | undefined;
  public readonly createdAt: number;

  public constructor(
    public readonly name: string,
    public readonly schema: KeySchema,
    public readonly indexes: readonly IndexDef[],
    public readonly attributeDefinitions: readonly { AttributeName: string; AttributeType: string }[],
    now: number,
  ) {
    this.createdAt = now;
    for (const index of indexes) this.indexPartitions.set(index.name, new Map());
  }

  /** The names of the key attributes. */
  public keyNames(): string[] {
    return [this.schema.partition.name, ...(this.schema.sort ? [this.schema.sort.name] : [])];
  }

  /** The key attributes of an item. */
  public keyOf(item: Item): Item {
    const key: Item = {};
    for (const name of this.keyNames()) if (item[name] !== undefined) key[name] = item[name] as AV;
    return key;
  }

  private id(key: Item): string {
    return this.keyNames()
      .map((n) => keyText(key[n]))
      .join('\u0000');
  }

  /** The current item at `key` (a copy), or undefined. */
  public current(key: Item): Item | undefined {
    const versions = this.entries.get(this.id(key))?.versions;
    const item = versions?.[versions.length - 1]?.item;
    return item ? clone(item) : undefined;
  }

  /** The item at `key` as it was at time `at` (a copy). */
  public at(key: Item, at: number): Item | undefined {
    const entry = this.entries.get(this.id(key));
    const item = entry ? versionAt(entry, at) : undefined;
    return item ? clone(item) : undefined;
  }

  /** Writes `item` (or deletes `key` when `item` is undefined) at time `now`, keeping `keepMs` of history. */
  public write(key: Item, item: Item | undefined, now: number, keepMs: number): void {
    const id = this.id(key);
    let entry = this.entries.get(id);
    if (!entry) {
      if (item === undefined) return;
      const partition = keyText(key[this.schema.partition.name]);
      entry = { id, partition, versions: [] };
      this.entries.set(id, entry);
      const ids = this.partitions.get(partition) ?? new Set<string>();
      this.partitions.set(partition, ids);
      ids.add(id);
    }
    entry.versions.push({ at: now, item: item ? clone(item) : undefined });
    if (item) {
      for (const index of this.indexes) {
        const value = item[index.schema.partition.name];
        if (value === undefined) continue;
        const byKey = this.indexPartitions.get(index.name) as Map<string, Set<string>>;
        const text = keyText(value);
        const ids = byKey.get(text) ?? new Set<string>();
        byKey.set(text, ids);
        ids.add(id);
      }
    }
    // A version is needed while a read within keepMs of now may land in its lifetime.
    while (entry.versions.length > 1 && (entry.versions[1] as Version).at <= now - keepMs)
      entry.versions.shift();
    if (entry.versions.length === 1 && entry.versions[0]?.item === undefined) {
      this.entries.delete(id);
      this.partitions.get(entry.partition)?.delete(id);
    }
  }

  /**
   * The items as they were at time `at`, not copied (the caller copies what it returns): those of
   * one partition key, or of one index partition key, or all.
   */
  public visible(at: number, where: { partition?: AV; index?: IndexDef; indexPartition?: AV } = {}): Item[] {
    let ids: Iterable<string>;
    if (where.partition) ids = this.partitions.get(keyText(where.partition)) ?? [];
    else if (where.index && where.indexPartition) {
      ids = this.indexPartitions.get(where.index.name)?.get(keyText(where.indexPartition)) ?? [];
    } else ids = this.entries.keys();
    const items: Item[] = [];
    const gone: string[] = [];
    for (const id of ids) {
      const entry = this.entries.get(id);
      if (!entry) {
        gone.push(id);
        continue;
      }
      const item = versionAt(entry, at);
      if (item) items.push(item);
    }
    if (where.index && where.indexPartition) {
      const set = this.indexPartitions.get(where.index.name)?.get(keyText(where.indexPartition));
      for (const id of gone) set?.delete(id);
    }
    return items;
  }

  /** Forgets versions no read within `keepMs` of `now` can see, and keys deleted before that. */
  public prune(now: number, keepMs: number): void {
    for (const entry of [...this.entries.values()]) {
      const { versions } = entry;
      while (versions.length > 1 && (versions[1] as Version).at <= now - keepMs) versions.shift();
      if (versions.length === 1 && versions[0]?.item === undefined) {
        this.entries.delete(entry.id);
        this.partitions.get(entry.partition)?.delete(entry.id);
      }
    }
  }

  /** Every item as it was at time `at` (copies), in no particular order. */
  public snapshot(at: number): Item[] {
    return this.visible(at).map(clone);
  }

  /** The current items (copies). */
  public items(): Item[] {
    return this.snapshot(Number.POSITIVE_INFINITY);
  }

  /** The number of current items. */
  public count(): number {
    let n = 0;
    for (const entry of this.entries.values()) if (entry.versions[entry.versions.length - 1]?.item) n += 1;
    return n;
  }

  /** The index `name`, or a ValidationException as DynamoDB gives for an unknown index. */
  public index(name: string): IndexDef {
    const index = this.indexes.find((i) => i.name === name);
    if (!index) {
      throw validation(`The table does not have the specified index: ${name}`);
    }
    return index;
  }

  /** Refuses an item whose index key attributes are of the wrong type or empty, as DynamoDB does. */
  public checkIndexKeys(item: Item): void {
    for (const index of this.indexes) {
      for (const part of [index.schema.partition, ...(index.schema.sort ? [index.schema.sort] : [])]) {
        const value = item[part.name];
        if (value === undefined) continue;
        const type = typeOf(value);
        if (type !== part.type) {
          throw validation(
            `One or more parameter values were invalid: Type mismatch for Index Key ${part.name} Expected: ${part.type} Actual: ${type} IndexName: ${index.name}`,
          );
        }
        const limit = part === index.schema.partition ? MAX_PARTITION_KEY_BYTES : MAX_SORT_KEY_BYTES;
        if (valueSize(value) > limit) {
          throw validation(
            `One or more parameter values were invalid: Size limit exceeded for Index Key ${part.name} Actual Size: ${valueSize(value)} bytes Max Size: ${limit} bytes IndexName: ${index.name}`,
          );
        }
        if (type !== 'N' && valueSize(value) === 0) {
          throw validation(
            `One or more parameter values are not valid. A value specified for a secondary index key is not supported. The AttributeValue for a key attribute cannot contain an empty string value. IndexName: ${index.name}, IndexKey: ${part.name}`,
          );
        }
      }
    }
  }

  /** The item as the index holds it (projected), or undefined when the index does not hold it (sparse). */
  public inIndex(index: IndexDef, item: Item): Item | undefined {
    const parts = [index.schema.partition, ...(index.schema.sort ? [index.schema.sort] : [])];
    if (parts.some((p) => item[p.name] === undefined || typeOf(item[p.name] as AV) !== p.type))
      return undefined;
    if (index.projection === 'ALL') return item;
    const kept = new Set([
      ...this.keyNames(),
      ...parts.map((p) => p.name),
      ...(index.nonKeyAttributes ?? []),
    ]);
    return Object.fromEntries(Object.entries(item).filter(([name]) => kept.has(name)));
  }

  /** Orders items by a key schema (partition, then sort), ties by the table's key. */
  public compare(schema: KeySchema, a: Item, b: Item): number {
    const parts = [
      schema.partition,
      ...(schema.sort ? [schema.sort] : []),
      this.schema.partition,
      ...(this.schema.sort ? [this.schema.sort] : []),
    ];
    for (const part of parts) {
      const x = a[part.name];
      const y = b[part.name];
      if (x === undefined || y === undefined) continue;
      const order = compareValues(x, y) ?? 0;
      if (order !== 0) return order;
    }
    return 0;
  }
}

function versionAt(entry: Entry, at: number): Item | undefined {
  let found: Version | undefined;
  for (const version of entry.versions) {
    if (version.at <= at) found = version;
    else break;
  }
  return found?.item;
}
