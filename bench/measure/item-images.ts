import { type ItemImages, itemIdentity, type TableShape, toWireItem, type WireItem } from './capacity.ts';

type Input = Record<string, unknown>;

/** The last image of every item the meter saw on the wire, written or read whole. */
export class ItemImageLog {
  /** Images by item identity (`itemIdentity`). */
  public readonly images: ItemImages = new Map();
  private readonly tables: ReadonlyMap<string, TableShape>;

  /** `tables`: the meter's registered tables, by name (read at each call, so later ones count). */
  public constructor(tables: ReadonlyMap<string, TableShape>) {
    this.tables = tables;
  }

  /** The last image seen of the item with `key` in `tableName`, if any. */
  public before(tableName: unknown, key: WireItem | undefined): WireItem | undefined {
    const table = this.tables.get(String(tableName));
    return table && key ? this.images.get(itemIdentity(table, key)) : undefined;
  }

  /** Notes the items a committed `TransactWriteItems` put or deleted. */
  public afterTransaction(input: Input): void {
    for (const action of (input.TransactItems as Input[] | undefined) ?? []) {
      const put = action.Put as Input | undefined;
      const del = action.Delete as Input | undefined;
      if (put) this.remember(put.TableName, put.Item as WireItem, true);
      if (del) this.remember(del.TableName, del.Key as WireItem, false);
    }
  }

  /** Notes the items a non-transactional write put, deleted, or returned whole (`ALL_NEW`). */
  public afterWrite(op: string, input: Input, output: Input): void {
    if (op === 'PutItem') this.remember(input.TableName, input.Item as WireItem, true);
    else if (op === 'DeleteItem') this.remember(input.TableName, input.Key as WireItem, false);
    else if (op === 'UpdateItem' && input.ReturnValues === 'ALL_NEW' && output.Attributes) {
      this.remember(input.TableName, output.Attributes as Record<string, unknown>, true);
    } else if (op === 'BatchWriteItem') {
      const requests = (input.RequestItems ?? {}) as Record<string, Input[]>;
      for (const [tableName, list] of Object.entries(requests)) {
        for (const request of list) {
          const put = request.PutRequest as Input | undefined;
          const del = request.DeleteRequest as Input | undefined;
          if (put) this.remember(tableName, put.Item as WireItem, true);
          if (del) this.remember(tableName, del.Key as WireItem, false);
        }
      }
    }
  }

  /** Notes the whole items a read returned (a `GetItem` that found nothing: the item is gone). */
  public afterRead(op: string, input: Input, output: Input): void {
    if (op === 'GetItem') {
      if (input.ProjectionExpression !== undefined) return;
      if (output.Item) this.remember(input.TableName, output.Item as Record<string, unknown>, true);
      else this.remember(input.TableName, input.Key as WireItem, false);
    } else if (op === 'Query' && input.IndexName === undefined && input.ProjectionExpression === undefined) {
      for (const item of (output.Items as Record<string, unknown>[] | undefined) ?? []) {
        this.remember(input.TableName, item, true);
      }
    }
  }

  private remember(tableName: unknown, item: Record<string, unknown> | undefined, present: boolean): void {
    const table = this.tables.get(String(tableName));
    if (!table || !item) return;
    const wire = toWireItem(item, table.partitionKey);
    const id = itemIdentity(table, wire);
    if (present) this.images.set(id, wire);
    else this.images.delete(id);
  }
}
