import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { AggregateStatus, type OutputChannel } from '../engine/constants.ts';
import { encodeMembers } from '../engine/members.ts';
import type { AggregateHeader, Seal } from '../ports.ts';
import { headerOf } from './state-aggregates.ts';
import {
  MEMBERS_INLINE_MAX_BYTES,
  type MemberSetRef,
  memberChunkKey,
  memberSetChunks,
  memberSetOf,
  memberSetRefOf,
  toHeader,
  unmarshallLoose,
} from './state-items.ts';
import { aggregateKey, dueShard, SortKey } from './state-keys.ts';
import { type StateTable, unlessConditionFails } from './state-table.ts';

/**
 * An aggregate's header after its open, each change one conditional update of the header item:
 * the seal (open → completing, under a lease), a lease taken over, the `due` entry brought forward
 * for a recovery, a deadline moved, a snapshot period marked, and — only by the lease's holder —
 * the channels emitted and the close (completing → closed: the header becomes the tombstone).
 */

/**
 * How long a member set's chunks live when the seal does not say (`Seal.expiresAt`): the longest
 * state life a definition can have (a year each of unknown timeout, allowed life and retention,
 * shared/engine/definition.ts), plus a day for the lease.
 */
export const MEMBER_SET_DEFAULT_LIFE_SECONDS = (3 * 365 + 1) * 24 * 3600;

/*
 * The seal. Its condition is the whole of "exactly one completion": only an open header can be
 * sealed, and the member set and outcome written here are what every later attempt publishes.
 *
 *   reply handler:  put R#x ──► read H … R$ ──► open? its reply is in any later seal's set
 *   completer:      read H … R$ ──► build ──► seal(members) ──► read R# again: any reply not a
 *                   member was recorded after the read, and is routed late
 *
 * A member set larger than MEMBERS_INLINE_MAX_BYTES (2,000 reply ids of 256 characters are over
 * 500 KB; a header holds at most 400 KB) is written first, in chunks under the sealing attempt's
 * own key, and the seal names them; it is still fixed by the one conditional write:
 *
 *   put H#<lease>#0 … #n ──► seal(memberSet = {key: lease, chunks, digest}) ──► lost? delete them
 *
 * - a crash before the seal leaves chunks no header names: never read as a member set, and they
 *   expire (TTL);
 * - two sealers racing write under two keys; the one whose seal succeeds is the one named, and
 *   the digest makes a reader take exactly the bytes sealed;
 * - every chunk is written, and acknowledged, before the seal: a reader that finds the seal
 *   finds its chunks (consistent reads), and they expire no sooner than the tombstone (close).
 */
export async function seal(
  table: StateTable,
  aggregateId: string,
  seal: Seal,
): Promise<AggregateHeader | undefined> {
  const pk = aggregateKey(aggregateId);
  // Which pack each member's body is read from, so a copy recorded after the seal never changes
  // a rebuilt result (state-packs.ts): pack key → its members, in the member set's compact form.
  const packed = Object.entries(seal.sources ?? {}).filter(([, ids]) => ids.length > 0);
  const sources =
    packed.length > 0
      ? Object.fromEntries(packed.map(([pack, ids]) => [pack, encodeMembers(ids)]))
      : undefined;
  const membersText = encodeMembers(seal.members);
  // The reason of a failed outcome goes with the member set: a custom expression's error can
  // quote the data it failed on, as long as it likes.
  const inlineBytes =
    Buffer.byteLength(membersText) +
    (sources ? Buffer.byteLength(JSON.stringify(sources)) : 0) +
    Buffer.byteLength(seal.reason ?? '');
  const chunked =
    inlineBytes > MEMBERS_INLINE_MAX_BYTES
      ? memberSetChunks(membersText, packed.length > 0 ? Object.fromEntries(packed) : undefined, seal.reason)
      : undefined;
  const ref: MemberSetRef | undefined = chunked && {
    key: seal.lease,
    chunks: chunked.chunks.length,
    digest: chunked.digest,
    until: seal.expiresAt ?? Math.floor(seal.at / 1000) + MEMBER_SET_DEFAULT_LIFE_SECONDS,
  };
  if (chunked && ref) {
    // Before the seal, every one: a seal is never written naming a chunk that is not there.
    await Promise.all(
      chunked.chunks.map((part, n) =>
        table.client.send(
          new PutCommand({
            TableName: table.tableName,
            Item: { pk, sk: memberChunkKey(ref.key, n), part, expiresAt: ref.until },
          }),
        ),
      ),
    );
  }
  const written = await unlessConditionFails(
    table.client.send(
      new UpdateCommand({
        TableName: table.tableName,
        Key: { pk, sk: SortKey.HEADER },
        UpdateExpression:
          'SET #status = :completing, outcome = :outcome, received = :received, ' +
          // The due entry stays where the open put it (the deadline, or the end of the allowed
          // life): moving it would rewrite the index entry, 2 of the aggregate's write units.
          // A crashed completer is finished by the redelivery of the message that made it
          // complete (every consumed queue's visibility timeout outlasts the lease); a
          // completer that fails brings the entry forward with recoverAt. if_not_exists only
          // gives an entry to a header that has none.
          // The parameters fixed at open, kept for the history (the close removes `params`).
          'keptParams = if_not_exists(params, :noParams), ' +
          'completingAt = :at, lease = :lease, leaseUntil = :until, ' +
          'dueAt = if_not_exists(dueAt, :until), dueShard = if_not_exists(dueShard, :shard)' +
          (ref ? ', memberSet = :ref' : ', members = :members') +
          (seal.reason !== undefined && !ref ? ', reason = :reason' : '') +
          (seal.completedBy !== undefined ? ', completedBy = :completedBy' : '') +
          (sources !== undefined && !ref ? ', sources = :sources' : ''),
        ConditionExpression: '#status = :open',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: {
          ':completing': AggregateStatus.COMPLETING,
          ':open': AggregateStatus.OPEN,
          ':outcome': seal.outcome,
          ':noParams': {},
          ...(ref ? { ':ref': ref } : { ':members': membersText }),
          ':received': seal.members.length,
          ':at': seal.at,
          ':lease': seal.lease,
          ':until': seal.leaseUntil,
          ':shard': dueShard(pk),
          ...(seal.reason !== undefined && !ref ? { ':reason': seal.reason } : {}),
          ...(seal.completedBy !== undefined ? { ':completedBy': seal.completedBy } : {}),
          ...(sources !== undefined && !ref ? { ':sources': sources } : {}),
        },
        ReturnValues: 'ALL_NEW',
      }),
    ),
  );
  if (!written?.Attributes) {
    // Lost the race (or the aggregate closed): nothing names this attempt's chunks. Deleting them
    // is only tidiness — their TTL removes them if this fails or the process dies here.
    if (chunked && ref) await deleteChunks(table, pk, ref).catch(() => undefined);
    return undefined;
  }
  // As every other read of the header gives it (headerOf): how far its fan-out asked.
  const asked =
    typeof written.Attributes.askedUpTo === 'number' ? { askedUpTo: written.Attributes.askedUpTo } : {};
  if (!chunked || !ref) return { ...toHeader(written.Attributes), ...asked };
  // The set as every later reader decodes it from the chunks (ids deduplicated and in order).
  const set = memberSetOf(
    ref,
    chunked.chunks.map((part, n) => ({ sk: memberChunkKey(ref.key, n), part })),
  );
  if (!set) throw new Error(`aggregate ${aggregateId}: the member set written cannot be read back`);
  return { ...toHeader(written.Attributes, set), ...asked };
}

/** Deletes the chunks of a member set (a losing seal's). */
async function deleteChunks(table: StateTable, pk: string, ref: MemberSetRef): Promise<void> {
  await Promise.all(
    Array.from({ length: ref.chunks }, (_, n) =>
      table.client.send(
        new DeleteCommand({ TableName: table.tableName, Key: { pk, sk: memberChunkKey(ref.key, n) } }),
      ),
    ),
  );
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
  return written?.Attributes ? headerOf(table, written.Attributes) : undefined;
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
  dueAt = to,
): Promise<boolean> {
  const pk = aggregateKey(aggregateId);
  const written = await unlessConditionFails(
    table.client.send(
      new UpdateCommand({
        TableName: table.tableName,
        Key: { pk, sk: SortKey.HEADER },
        // The first deadline and the number of moves are kept for the history (two attributes,
        // in this same update).
        UpdateExpression:
          'SET deadline = :to, dueAt = :due, dueShard = if_not_exists(dueShard, :shard), ' +
          'firstDeadline = if_not_exists(firstDeadline, :from) ADD deadlineMoves :one',
        ConditionExpression: '#status = :open AND deadline = :from',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: {
          ':open': AggregateStatus.OPEN,
          ':from': from,
          ':to': to,
          ':due': dueAt,
          ':shard': dueShard(pk),
          ':one': 1,
        },
      }),
    ),
  );
  return written !== undefined;
}

export async function moveRecipientsDue(
  table: StateTable,
  aggregateId: string,
  from: number,
  to: number | undefined,
  dueAt: number | undefined,
): Promise<boolean> {
  const pk = aggregateKey(aggregateId);
  const sets = [
    ...(to !== undefined ? ['recipientsDue = :to'] : []),
    ...(dueAt !== undefined ? ['dueAt = :due', 'dueShard = if_not_exists(dueShard, :shard)'] : []),
  ];
  const removes = [...(to === undefined ? ['recipientsDue'] : []), ...(dueAt === undefined ? ['dueAt'] : [])];
  const written = await unlessConditionFails(
    table.client.send(
      new UpdateCommand({
        TableName: table.tableName,
        Key: { pk, sk: SortKey.HEADER },
        UpdateExpression: [
          ...(sets.length > 0 ? [`SET ${sets.join(', ')}`] : []),
          ...(removes.length > 0 ? [`REMOVE ${removes.join(', ')}`] : []),
        ].join(' '),
        ConditionExpression: '#status = :open AND recipientsDue = :from',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: {
          ':open': AggregateStatus.OPEN,
          ':from': from,
          ...(to !== undefined ? { ':to': to } : {}),
          ...(dueAt !== undefined ? { ':due': dueAt, ':shard': dueShard(pk) } : {}),
        },
      }),
    ),
  );
  return written !== undefined;
}

export async function recordRetries(
  table: StateTable,
  aggregateId: string,
  from: number,
  round: number,
  retried: Readonly<Record<string, number>>,
  dueAt: number | undefined,
): Promise<boolean> {
  const pk = aggregateKey(aggregateId);
  const sets = [
    'retryRound = :round',
    'retried = :retried',
    ...(dueAt !== undefined ? ['dueAt = :due', 'dueShard = if_not_exists(dueShard, :shard)'] : []),
  ];
  const written = await unlessConditionFails(
    table.client.send(
      new UpdateCommand({
        TableName: table.tableName,
        Key: { pk, sk: SortKey.HEADER },
        UpdateExpression: [`SET ${sets.join(', ')}`, ...(dueAt === undefined ? ['REMOVE dueAt'] : [])].join(
          ' ',
        ),
        // Only while open (a sealed aggregate's retries are fixed) and only from the round read:
        // of two looks that took the same round, one records it.
        ConditionExpression: `#status = :open AND ${from === 0 ? 'attribute_not_exists(retryRound)' : 'retryRound = :from'}`,
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: {
          ':open': AggregateStatus.OPEN,
          ':round': round,
          ':retried': retried,
          ...(from !== 0 ? { ':from': from } : {}),
          ...(dueAt !== undefined ? { ':due': dueAt, ':shard': dueShard(pk) } : {}),
        },
      }),
    ),
  );
  return written !== undefined;
}

export async function keepHeartbeat(
  table: StateTable,
  aggregateId: string,
  replyId: string,
  at: number,
): Promise<boolean> {
  const written = await unlessConditionFails(
    table.client.send(
      new UpdateCommand({
        TableName: table.tableName,
        Key: { pk: aggregateKey(aggregateId), sk: SortKey.HEADER },
        // Only while open (a sealed aggregate's deadlines are fixed) and only newer: a copy or an
        // older heartbeat handled late changes nothing.
        UpdateExpression: 'SET beats.#r = :at',
        ConditionExpression:
          '#status = :open AND attribute_exists(beats) AND (attribute_not_exists(beats.#r) OR beats.#r < :at)',
        ExpressionAttributeNames: { '#status': 'status', '#r': replyId },
        ExpressionAttributeValues: { ':open': AggregateStatus.OPEN, ':at': at },
      }),
    ),
  );
  return written !== undefined;
}

export async function keepFailedAttempt(
  table: StateTable,
  aggregateId: string,
  replyId: string,
  attempt: number,
  round: number,
): Promise<boolean> {
  const written = await unlessConditionFails(
    table.client.send(
      new UpdateCommand({
        TableName: table.tableName,
        Key: { pk: aggregateKey(aggregateId), sk: SortKey.HEADER },
        // Only while open, only from the round the course was judged on (a round taken meanwhile
        // may have passed the recipient by), and only a later attempt than the one kept: a copy
        // of a kept failure changes nothing.
        UpdateExpression: 'SET failedAttempts.#r = :attempt',
        ConditionExpression: `#status = :open AND attribute_exists(failedAttempts) AND ${
          round === 0 ? 'attribute_not_exists(retryRound)' : 'retryRound = :round'
        } AND (attribute_not_exists(failedAttempts.#r) OR failedAttempts.#r < :attempt)`,
        ExpressionAttributeNames: { '#status': 'status', '#r': replyId },
        ExpressionAttributeValues: {
          ':open': AggregateStatus.OPEN,
          ':attempt': attempt,
          ...(round !== 0 ? { ':round': round } : {}),
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

/**
 * completing → closed under the lease: the header becomes the tombstone, with its TTL. A member
 * set in chunks must outlive the tombstone that names it, so the close also requires that the
 * chunks' TTL is not earlier than the tombstone's; when it is (a completion finished long after
 * its seal), the chunks are extended first, then the close is made again — in that order, so a
 * crash between them leaves longer-lived chunks, never a tombstone naming expired ones.
 */
export async function close(
  table: StateTable,
  aggregateId: string,
  lease: string,
  expiresAt: number,
): Promise<boolean> {
  const pk = aggregateKey(aggregateId);
  const closing = (extended: boolean) =>
    table.client.send(
      new UpdateCommand({
        TableName: table.tableName,
        Key: { pk, sk: SortKey.HEADER },
        UpdateExpression:
          'SET #status = :closed, expiresAt = :exp' +
          (extended ? ', memberSet.#until = :exp' : '') +
          ' REMOVE dueAt, dueShard, params, lease, leaseUntil, emitted, sources',
        ConditionExpression:
          '#status = :completing AND lease = :held AND ' +
          (extended
            ? 'attribute_exists(memberSet)'
            : '(attribute_not_exists(memberSet) OR memberSet.#until >= :exp)'),
        ExpressionAttributeNames: { '#status': 'status', '#until': 'until' },
        ExpressionAttributeValues: {
          ':closed': AggregateStatus.CLOSED,
          ':exp': expiresAt,
          ':completing': AggregateStatus.COMPLETING,
          ':held': lease,
        },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
  try {
    await closing(false);
    return true;
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
    const old = error.Item ? unmarshallLoose(error.Item) : undefined;
    const ref = old ? memberSetRefOf(old) : undefined;
    // Not (or no longer) this lease's to close: the answer the caller expects.
    if (old?.status !== AggregateStatus.COMPLETING || old.lease !== lease || !ref || ref.until >= expiresAt)
      return false;
    await extendChunks(table, pk, ref, expiresAt);
    return (await unlessConditionFails(closing(true))) !== undefined;
  }
}

/** Moves the TTL of a member set's chunks to `until`, never earlier; a chunk already gone stays gone. */
async function extendChunks(table: StateTable, pk: string, ref: MemberSetRef, until: number): Promise<void> {
  await Promise.all(
    Array.from({ length: ref.chunks }, (_, n) =>
      table.client
        .send(
          new UpdateCommand({
            TableName: table.tableName,
            Key: { pk, sk: memberChunkKey(ref.key, n) },
            UpdateExpression: 'SET expiresAt = :until',
            // Never creates a chunk: one gone is an error, not an empty chunk.
            ConditionExpression: 'attribute_exists(part) AND expiresAt < :until',
            ExpressionAttributeValues: { ':until': until },
          }),
        )
        .catch((error: unknown) => {
          if (!(error instanceof ConditionalCheckFailedException)) throw error;
        }),
    ),
  );
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
