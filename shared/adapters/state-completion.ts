import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { AggregateStatus } from '../engine/constants.ts';
import { encodeMembers } from '../engine/members.ts';
import type { AggregateHeader, OutputChannel, Seal } from '../ports.ts';
import { toHeader, unmarshallLoose } from './state-items.ts';
import { aggregateKey, dueShard, SortKey } from './state-keys.ts';
import { type StateTable, unlessConditionFails } from './state-table.ts';

/**
 * An aggregate's header after its open, each change one conditional update of the header item:
 * the seal (open → completing, under a lease), a lease taken over, the `due` entry brought forward
 * for a recovery, a deadline moved, a snapshot period marked, and — only by the lease's holder —
 * the channels emitted and the close (completing → closed: the header becomes the tombstone).
 */

/** The most bytes of pack sources a seal writes on the header. */
export const SOURCES_MAX_BYTES = 128 * 1024;

/*
 * The seal. Its condition is the whole of "exactly one completion": only an open header can be
 * sealed, and the member set and outcome written here are what every later attempt publishes.
 *
 *   reply handler:  put R#x ──► read H … R$ ──► open? its reply is in any later seal's set
 *   completer:      read H … R$ ──► build ──► seal(members) ──► read R# again: any reply not a
 *                   member was recorded after the read, and is routed late
 */
export async function seal(
  table: StateTable,
  aggregateId: string,
  seal: Seal,
): Promise<AggregateHeader | undefined> {
  const pk = aggregateKey(aggregateId);
  // Which pack each member's body is read from, so a copy recorded after the seal never changes
  // a rebuilt result (state-packs.ts): pack key → its members, in the member set's compact form.
  // Beyond SOURCES_MAX_BYTES (a fan-out of tens of thousands in small packs) they are left out
  // rather than risk a header over DynamoDB's 400 KB: the read then takes a member's own item, or
  // its earliest copy, which only a second message with the same reply id and another body changes.
  const packed = Object.entries(seal.sources ?? {}).filter(([, ids]) => ids.length > 0);
  const encoded = Object.fromEntries(packed.map(([pack, ids]) => [pack, encodeMembers(ids)]));
  const sources =
    packed.length > 0 && Buffer.byteLength(JSON.stringify(encoded)) <= SOURCES_MAX_BYTES
      ? encoded
      : undefined;
  const written = await unlessConditionFails(
    table.client.send(
      new UpdateCommand({
        TableName: table.tableName,
        Key: { pk, sk: SortKey.HEADER },
        UpdateExpression:
          'SET #status = :completing, outcome = :outcome, members = :members, received = :received, ' +
          // The due entry stays where the open put it (the deadline, or the end of the allowed
          // life): moving it would rewrite the index entry, 2 of the aggregate's write units.
          // A crashed completer is finished by the redelivery of the message that made it
          // complete (every consumed queue's visibility timeout outlasts the lease); a
          // completer that fails brings the entry forward with recoverAt. if_not_exists only
          // gives an entry to a header that has none.
          'completingAt = :at, lease = :lease, leaseUntil = :until, ' +
          'dueAt = if_not_exists(dueAt, :until), dueShard = if_not_exists(dueShard, :shard)' +
          (seal.reason !== undefined ? ', reason = :reason' : '') +
          (seal.completedBy !== undefined ? ', completedBy = :completedBy' : '') +
          (sources !== undefined ? ', sources = :sources' : ''),
        ConditionExpression: '#status = :open',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: {
          ':completing': AggregateStatus.COMPLETING,
          ':open': AggregateStatus.OPEN,
          ':outcome': seal.outcome,
          ':members': encodeMembers(seal.members),
          ':received': seal.members.length,
          ':at': seal.at,
          ':lease': seal.lease,
          ':until': seal.leaseUntil,
          ':shard': dueShard(pk),
          ...(seal.reason !== undefined ? { ':reason': seal.reason } : {}),
          ...(seal.completedBy !== undefined ? { ':completedBy': seal.completedBy } : {}),
          ...(sources !== undefined ? { ':sources': sources } : {}),
        },
        ReturnValues: 'ALL_NEW',
      }),
    ),
  );
  return written?.Attributes ? toHeader(written.Attributes) : undefined;
}

export async function takeOver(
  table: StateTable,
  aggregateId: string,
  from: string,
  lease: string,
  leaseUntil: number,
): Promise<AggregateHeader | undefined> {
  const pk = aggregateKey(aggregateId);
  const written = await unlessConditionFails(
    table.client.send(
      new UpdateCommand({
        TableName: table.tableName,
        Key: { pk, sk: SortKey.HEADER },
        UpdateExpression: 'SET lease = :lease, leaseUntil = :until, dueAt = :until',
        ConditionExpression: '#status = :completing AND lease = :from',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: {
          ':completing': AggregateStatus.COMPLETING,
          ':from': from,
          ':lease': lease,
          ':until': leaseUntil,
        },
        ReturnValues: 'ALL_NEW',
      }),
    ),
  );
  return written?.Attributes ? toHeader(written.Attributes) : undefined;
}

export async function recoverAt(
  table: StateTable,
  aggregateId: string,
  lease: string,
  at: number,
): Promise<void> {
  const pk = aggregateKey(aggregateId);
  await unlessConditionFails(
    table.client.send(
      new UpdateCommand({
        TableName: table.tableName,
        Key: { pk, sk: SortKey.HEADER },
        UpdateExpression: 'SET dueAt = :at, dueShard = :shard',
        // Only earlier, and only while this lease still holds it: a due entry already sooner,
        // a lease taken over or an aggregate closed meanwhile are left as they are.
        ConditionExpression:
          '#status = :completing AND lease = :held AND (attribute_not_exists(dueAt) OR dueAt > :at)',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: {
          ':at': at,
          ':shard': dueShard(pk),
          ':completing': AggregateStatus.COMPLETING,
          ':held': lease,
        },
      }),
    ),
  );
}

export async function moveDeadline(
  table: StateTable,
  aggregateId: string,
  from: number,
  to: number,
): Promise<boolean> {
  const pk = aggregateKey(aggregateId);
  const written = await unlessConditionFails(
    table.client.send(
      new UpdateCommand({
        TableName: table.tableName,
        Key: { pk, sk: SortKey.HEADER },
        UpdateExpression: 'SET deadline = :to, dueAt = :to, dueShard = if_not_exists(dueShard, :shard)',
        ConditionExpression: '#status = :open AND deadline = :from',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: {
          ':open': AggregateStatus.OPEN,
          ':from': from,
          ':to': to,
          ':shard': dueShard(pk),
        },
      }),
    ),
  );
  return written !== undefined;
}

export async function markSnapshot(
  table: StateTable,
  aggregateId: string,
  period: number,
): Promise<'marked' | 'already' | 'passed' | 'closed'> {
  try {
    await table.client.send(
      new UpdateCommand({
        TableName: table.tableName,
        Key: { pk: aggregateKey(aggregateId), sk: SortKey.HEADER },
        UpdateExpression: 'SET lastSnapshot = :n',
        ConditionExpression: '#status = :open AND (attribute_not_exists(lastSnapshot) OR lastSnapshot < :n)',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':open': AggregateStatus.OPEN, ':n': period },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
    return 'marked';
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
    const old = error.Item ? unmarshallLoose(error.Item) : undefined;
    if (old?.status !== AggregateStatus.OPEN) return 'closed';
    return Number(old.lastSnapshot) === period ? 'already' : 'passed';
  }
}

export async function markEmitted(
  table: StateTable,
  aggregateId: string,
  lease: string,
  channels: readonly OutputChannel[],
): Promise<boolean> {
  return underLease(table, aggregateId, lease, {
    UpdateExpression: 'SET emitted = :channels',
    ExpressionAttributeValues: { ':channels': [...channels] },
  });
}

export async function close(
  table: StateTable,
  aggregateId: string,
  lease: string,
  expiresAt: number,
): Promise<boolean> {
  return underLease(table, aggregateId, lease, {
    UpdateExpression:
      'SET #status = :closed, expiresAt = :exp REMOVE dueAt, dueShard, params, lease, leaseUntil, emitted, sources',
    ExpressionAttributeNames: { '#status': 'status' },
    ExpressionAttributeValues: { ':closed': AggregateStatus.CLOSED, ':exp': expiresAt },
  });
}

/** An update that only the holder of the current lease may make. */
async function underLease(
  table: StateTable,
  aggregateId: string,
  lease: string,
  update: {
    UpdateExpression: string;
    ExpressionAttributeNames?: Record<string, string>;
    ExpressionAttributeValues: Record<string, unknown>;
  },
): Promise<boolean> {
  const written = await unlessConditionFails(
    table.client.send(
      new UpdateCommand({
        TableName: table.tableName,
        Key: { pk: aggregateKey(aggregateId), sk: SortKey.HEADER },
        UpdateExpression: update.UpdateExpression,
        ConditionExpression: '#status = :completing AND lease = :held',
        ExpressionAttributeNames: { '#status': 'status', ...update.ExpressionAttributeNames },
        ExpressionAttributeValues: {
          ...update.ExpressionAttributeValues,
          ':completing': AggregateStatus.COMPLETING,
          ':held': lease,
        },
      }),
    ),
  );
  return written !== undefined;
}
