import type { AggregateHeader, AggregateRecords, ReplyCopy, ReplyMark } from '../ports.ts';
import { headerOf, readWriteShards } from './state-aggregates.ts';
import { MEMBER_CHUNK_PREFIX, replyExtrasOf, toHeld } from './state-items.ts';
import { aggregateKey, SortKey } from './state-keys.ts';
import { expandPack } from './state-packs.ts';
import { queryAll, type StateTable } from './state-table.ts';

/**
 * An aggregate's items read whole for its history (shared/engine/history.ts): one consistent
 * query of its partition key (request, header, member-set chunks, packs, replies and marks, held
 * replies, next snapshot), and one of each write shard's packs and replies. Read-only; the data
 * plane never calls it. Bodies are left out: a history shows ids, times and fates, never data.
 */
export async function readHistory(table: StateTable, aggregateId: string): Promise<AggregateRecords> {
  const items = await queryAll(table, {
    TableName: table.tableName,
    KeyConditionExpression: 'pk = :pk',
    ExpressionAttributeValues: { ':pk': aggregateKey(aggregateId) },
    ConsistentRead: true,
  });
  const headerItem = items.find((item) => item.sk === SortKey.HEADER);
  const chunks = items.filter((item) => String(item.sk).startsWith(MEMBER_CHUNK_PREFIX));
  const header: AggregateHeader | undefined = headerItem
    ? await headerOf(table, headerItem, chunks)
    : undefined;
  const others = await readWriteShards(table, aggregateId, header?.shards ?? 1);
  const copies: ReplyCopy[] = [];
  const marks: ReplyMark[] = [];
  for (const item of [...items, ...others]) {
    const sk = String(item.sk);
    if (sk.startsWith(SortKey.PACK)) {
      for (const reply of expandPack(item)) copies.push(copyOf({ ...reply }, reply.pack));
    } else if (sk.startsWith(SortKey.REPLY)) {
      if (item.receivedAt !== undefined) copies.push(copyOf(item));
      if ((item.late === true || item.owes !== undefined) && item.replyId !== undefined) {
        marks.push({
          replyId: String(item.replyId),
          ...(typeof item.owes === 'string' ? { owes: item.owes as ReplyMark['owes'] } : {}),
        });
      }
    }
  }
  const request = items.find((item) => item.sk === SortKey.REQUEST);
  const snapshot = items.find((item) => item.sk === SortKey.SNAPSHOT);
  const kept = headerItem ? keptOf(headerItem) : undefined;
  return {
    ...(header ? { header } : {}),
    ...(kept ? { kept } : {}),
    ...(request ? { request: requestOf(request) } : {}),
    copies,
    marks,
    held: items
      .filter((item) => String(item.sk).startsWith(SortKey.HELD))
      .map((item) => toHeld(aggregateId, item)),
    ...(snapshot && typeof snapshot.dueAt === 'number' ? { snapshotDueAt: snapshot.dueAt } : {}),
  };
}

/** A reply item or pack member as a copy, without its body. */
function copyOf(item: Record<string, unknown>, pack?: string): ReplyCopy {
  const extras = replyExtrasOf(item);
  return {
    replyId: String(item.replyId),
    receivedAt: Number(item.receivedAt),
    ...(extras.messageId ? { messageId: extras.messageId } : {}),
    ...(extras.definition ? { definition: extras.definition } : {}),
    ...(extras.failure !== undefined ? { failure: extras.failure } : {}),
    ...(extras.score !== undefined ? { score: extras.score } : {}),
    ...(pack ? { pack } : {}),
  };
}

/** What the header keeps for the history only (the seal's copy of the parameters, the deadline's moves). */
function keptOf(item: Record<string, unknown>): AggregateRecords['kept'] | undefined {
  const kept = {
    ...(item.keptParams && typeof item.keptParams === 'object'
      ? { params: item.keptParams as AggregateHeader['params'] }
      : {}),
    ...(typeof item.firstDeadline === 'number' ? { firstDeadline: item.firstDeadline } : {}),
    ...(typeof item.deadlineMoves === 'number' ? { deadlineMoves: item.deadlineMoves } : {}),
    ...(typeof item.lastSnapshot === 'number' ? { lastSnapshot: item.lastSnapshot } : {}),
  };
  return Object.keys(kept).length > 0 ? kept : undefined;
}

/** The request item's labels (never its body); a request kept in S3 is not fetched. */
function requestOf(item: Record<string, unknown>): NonNullable<AggregateRecords['request']> {
  if (item.requestRef) return { inS3: true };
  try {
    const parsed = JSON.parse(String(item.request ?? '')) as { labels?: unknown };
    return Array.isArray(parsed.labels)
      ? { labels: parsed.labels.map((l) => (typeof l === 'string' ? l : null)) }
      : {};
  } catch {
    return {};
  }
}
