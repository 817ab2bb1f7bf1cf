import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { OutputChannel } from '../engine/constants.ts';
import type { RuntimeParameters } from '../engine/definition.ts';
import type {
  ActivePage,
  ActivePageOptions,
  AggregateHeader,
  AggregateRecords,
  AggregateSnapshot,
  DueItem,
  DueWindow,
  HeldClaim,
  HeldReply,
  LateMark,
  ReplyFate,
  ReplyToRecord,
  Seal,
  StateStore,
  StoredPayload,
} from '../ports.ts';
import * as aggregates from './state-aggregates.ts';
import * as arming from './state-arming.ts';
import * as completion from './state-completion.ts';
import * as counters from './state-counters.ts';
import * as due from './state-due.ts';
import * as heldReplies from './state-held.ts';
import * as history from './state-history.ts';
import { DUE_INDEX, DUE_SHARDS } from './state-keys.ts';
import * as runtimeParameters from './state-parameters.ts';
import type { StateTable } from './state-table.ts';

// The key functions the tests and benchmarks know this module by.
export { aggregateKey, counterKey, dueShard, replyKey, replyPartitionKey, shardKey } from './state-keys.ts';

/**
 * The DynamoDB state store. One table; its keys are made in state-keys.ts, its items mapped to
 * and from the port's types in state-items.ts:
 *
 * | item            | pk              | sk          | notes                                                   |
 * |-----------------|-----------------|-------------|---------------------------------------------------------|
 * | request         | `A#<aggregate>` | `B`         | the opening request, written once with a TTL            |
 * | header/tombstone| `A#<aggregate>` | `H`         | small; written at open, seal and close — never per reply|
 * | reply           | `A#<aggregate>` | `R#<reply>` | one conditional put per reply, with a TTL; its payload  |
 * |                 |                 |             | (index ids zero-padded, see {@link replyKey})           |
 * |                 |                 |             | compressed when smaller (payload-codec.ts)              |
 * | reply pack      | `A#<aggregate>` | `Q#<reply>` | several replies of one batch, compressed together, keyed|
 * |                 |                 |             | by the smallest; one conditional put (state-packs.ts)   |
 * | held reply      | `A#<aggregate>` | `U#<reply>` | an unknown reply waiting for its aggregate              |
 * | block complete  | `A#<aggregate>` | `K#<block>` | large fan-outs: a block of reply ids all in (tiny)      |
 * | reply counter   | `A#<aggregate>` | `C`         | other large aggregates: a completion trigger per batch  |
 * | parameters      | `D#<definition>`| `P`         | runtime parameters of a definition                      |
 *
 * The header sorts between the request and the replies, so one consistent query over
 * `H … R$` reads an aggregate's header, its packs and every reply (and its small block marks).
 *
 * GSI `due` (`dueShard`, `dueAt`, keys only; its name from the topology): open headers (their deadline, or `closeBy`),
 * completing headers (their lease) and held replies — what the sweeper must look at, and, since
 * every open aggregate has an allowed life, also what a listing of active aggregates reads. One
 * index, so an aggregate's whole life costs two index writes besides its lease.
 *
 * The class holds the table ({@link StateTable}) and implements the port; the reads and writes are
 * functions of the sibling modules, one per concern: state-aggregates.ts (open, request, header,
 * replies, late marks), state-completion.ts (seal, lease, deadline, snapshot, emitted, close),
 * state-held.ts (held replies), state-due.ts (the sweeper's due items and the listings of active
 * aggregates), state-counters.ts (large fan-outs' blocks and counters) and state-parameters.ts.
 */
export class DynamoStateStore implements StateStore {
  /** Spreads the `due` index over this many partition keys (state-keys.ts). */
  public static readonly DUE_SHARDS = DUE_SHARDS;

  private readonly table: StateTable;

  /**
   * @param options.dueIndex the name of the table's `due` index; @default the topology's
   *   ({@link DUE_INDEX})
   */
  public constructor(options: {
    readonly client: DynamoDBDocumentClient;
    readonly tableName: string;
    readonly dueIndex?: string;
  }) {
    this.table = {
      client: options.client,
      tableName: options.tableName,
      dueIndex: options.dueIndex ?? DUE_INDEX,
    };
  }

  // An aggregate's items (state-aggregates.ts).

  public openAggregate(
    header: AggregateHeader,
    request?: StoredPayload & { readonly expiresAt: number },
  ): Promise<{ created: boolean; header: AggregateHeader }> {
    return aggregates.openAggregate(this.table, header, request);
  }

  public markDispatched(aggregateId: string, upTo: number): Promise<void> {
    return aggregates.markDispatched(this.table, aggregateId, upTo);
  }

  public markAsked(aggregateId: string, upTo: number): Promise<void> {
    return aggregates.markAsked(this.table, aggregateId, upTo);
  }

  public getHeader(
    aggregateId: string,
    options: { readonly consistent?: boolean } = {},
  ): Promise<AggregateHeader | undefined> {
    return aggregates.getHeader(this.table, aggregateId, options);
  }

  public getRequest(aggregateId: string): Promise<StoredPayload | undefined> {
    return aggregates.getRequest(this.table, aggregateId);
  }

  public putReply(aggregateId: string, reply: ReplyToRecord, shards = 1): Promise<ReplyFate> {
    return aggregates.putReply(this.table, aggregateId, reply, shards);
  }

  public putReplies(
    aggregateId: string,
    replies: readonly ReplyToRecord[],
    shards = 1,
  ): Promise<ReplyFate[]> {
    return aggregates.putReplies(this.table, aggregateId, replies, shards);
  }

  public readAggregate(aggregateId: string): Promise<AggregateSnapshot> {
    return aggregates.readAggregate(this.table, aggregateId);
  }

  public markLate(
    aggregateId: string,
    replyId: string,
    expiresAt: number,
    shards = 1,
    owes = false,
  ): Promise<LateMark> {
    return aggregates.markLate(this.table, aggregateId, replyId, expiresAt, shards, owes);
  }

  public markLateSent(aggregateId: string, replyId: string, shards = 1): Promise<void> {
    return aggregates.markLateSent(this.table, aggregateId, replyId, shards);
  }

  public markUnknownSent(aggregateId: string, replyId: string, shards: readonly number[]): Promise<void> {
    return aggregates.markUnknownSent(this.table, aggregateId, replyId, shards);
  }

  public markUnknown(
    aggregateId: string,
    replyId: string,
    expiresAt: number,
    shards: readonly number[],
  ): Promise<boolean> {
    return aggregates.markUnknown(this.table, aggregateId, replyId, expiresAt, shards);
  }

  // The header's transitions after the open (state-completion.ts).

  public seal(aggregateId: string, seal: Seal): Promise<AggregateHeader | undefined> {
    return completion.seal(this.table, aggregateId, seal);
  }

  public takeOver(
    aggregateId: string,
    from: string,
    lease: string,
    leaseUntil: number,
  ): Promise<AggregateHeader | undefined> {
    return completion.takeOver(this.table, aggregateId, from, lease, leaseUntil);
  }

  public recoverAt(aggregateId: string, lease: string, at: number): Promise<void> {
    return completion.recoverAt(this.table, aggregateId, lease, at);
  }

  public moveDeadline(aggregateId: string, from: number, to: number, dueAt?: number): Promise<boolean> {
    return completion.moveDeadline(this.table, aggregateId, from, to, dueAt);
  }

  public moveRecipientsDue(
    aggregateId: string,
    from: number,
    to: number | undefined,
    dueAt: number | undefined,
  ): Promise<boolean> {
    return completion.moveRecipientsDue(this.table, aggregateId, from, to, dueAt);
  }

  public recordRetries(
    aggregateId: string,
    from: number,
    round: number,
    retried: Readonly<Record<string, number>>,
    dueAt: number | undefined,
  ): Promise<boolean> {
    return completion.recordRetries(this.table, aggregateId, from, round, retried, dueAt);
  }

  public keepHeartbeat(aggregateId: string, replyId: string, at: number): Promise<boolean> {
    return completion.keepHeartbeat(this.table, aggregateId, replyId, at);
  }

  public keepFailedAttempt(
    aggregateId: string,
    replyId: string,
    attempt: number,
    round: number,
  ): Promise<boolean> {
    return completion.keepFailedAttempt(this.table, aggregateId, replyId, attempt, round);
  }

  public markSnapshot(
    aggregateId: string,
    period: number,
  ): Promise<'marked' | 'already' | 'passed' | 'closed'> {
    return completion.markSnapshot(this.table, aggregateId, period);
  }

  public markEmitted(
    aggregateId: string,
    lease: string,
    channels: readonly OutputChannel[],
  ): Promise<boolean> {
    return completion.markEmitted(this.table, aggregateId, lease, channels);
  }

  public close(aggregateId: string, lease: string, expiresAt: number): Promise<boolean> {
    return completion.close(this.table, aggregateId, lease, expiresAt);
  }

  // Large fan-outs' completion triggers (state-counters.ts).

  public countRange(aggregateId: string, first: number, last: number, shards = 1): Promise<number> {
    return counters.countRange(this.table, aggregateId, first, last, shards);
  }

  public markBlockComplete(aggregateId: string, block: number, expiresAt: number): Promise<void> {
    return counters.markBlockComplete(this.table, aggregateId, block, expiresAt);
  }

  public addToCounter(
    aggregateId: string,
    count: number,
    expiresAt: number,
    options: { readonly shard?: number; readonly shards?: number } = {},
  ): Promise<number> {
    return counters.addToCounter(this.table, aggregateId, count, expiresAt, options);
  }

  public countCompleteBlocks(aggregateId: string): Promise<number> {
    return counters.countCompleteBlocks(this.table, aggregateId);
  }

  // Held replies (state-held.ts).

  public holdReply(held: HeldReply): Promise<boolean> {
    return heldReplies.holdReply(this.table, held);
  }

  public getHeld(aggregateId: string, replyId: string): Promise<HeldReply | undefined> {
    return heldReplies.getHeld(this.table, aggregateId, replyId);
  }

  public listHeld(aggregateId: string): Promise<HeldReply[]> {
    return heldReplies.listHeld(this.table, aggregateId);
  }

  public claimHeld(aggregateId: string, replyId: string, claim: HeldClaim): Promise<boolean> {
    return heldReplies.claimHeld(this.table, aggregateId, replyId, claim);
  }

  public deleteHeld(aggregateId: string, replyId: string): Promise<void> {
    return heldReplies.deleteHeld(this.table, aggregateId, replyId);
  }

  // The `due` index: the sweeper's items and the listings (state-due.ts).

  public dueItems(now: number, limit: number): Promise<DueItem[]> {
    return due.dueItems(this.table, now, limit);
  }

  public deferDue(item: DueItem, until: number): Promise<void> {
    return due.deferDue(this.table, item, until);
  }

  // Arming timers as they enter the horizon (state-arming.ts).

  public dueBetween(from: number, to: number, limit: number): Promise<DueWindow> {
    return arming.dueBetween(this.table, from, to, limit);
  }

  public armedUntil(): Promise<number | undefined> {
    return arming.armedUntil(this.table);
  }

  public markArmedUntil(to: number, now: number): Promise<void> {
    return arming.markArmedUntil(this.table, to, now);
  }

  public setSnapshotDue(aggregateId: string, dueAt: number): Promise<void> {
    return arming.setSnapshotDue(this.table, aggregateId, dueAt);
  }

  public clearSnapshotDue(aggregateId: string, dueAt: number): Promise<void> {
    return arming.clearSnapshotDue(this.table, aggregateId, dueAt);
  }

  public listActive(definition?: string): Promise<AggregateHeader[]> {
    return due.listActive(this.table, definition);
  }

  public listOpen(definition: string): Promise<AggregateHeader[]> {
    return due.listOpen(this.table, definition);
  }

  public listActivePage(options: ActivePageOptions): Promise<ActivePage> {
    return due.listActivePage(this.table, options);
  }

  // A definition's runtime parameters (state-parameters.ts).

  public getParameters(definition: string): Promise<RuntimeParameters> {
    return runtimeParameters.getParameters(this.table, definition);
  }

  public setParameters(definition: string, parameters: RuntimeParameters): Promise<void> {
    return runtimeParameters.setParameters(this.table, definition, parameters);
  }

  // Every item of one aggregate, for its history (state-history.ts; read-only).

  public readHistory(aggregateId: string): Promise<AggregateRecords> {
    return history.readHistory(this.table, aggregateId);
  }
}
