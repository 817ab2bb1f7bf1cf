import type { CompletedBy } from './engine/completion/decision.ts';
import type { AggregateStatus, Outcome, OutputChannel } from './engine/constants.ts';
import type { EffectiveParameters, RuntimeParameters } from './engine/definition.ts';
import type { MetricName } from './observability/metric-names.ts';
import type { OutputRole } from './topology/topology.ts';

/**
 * The ports of the data plane: what the use cases need from the outside world. The DynamoDB and
 * SQS adapters implement them; the use cases know nothing of the AWS SDK.
 */

/** The small header item of an aggregate (also its tombstone once closed). */
export interface AggregateHeader {
  readonly aggregateId: string;
  readonly definition: string;
  readonly status: AggregateStatus;
  /** Fixed when completion is claimed (the seal), with the member set; never changed after. */
  readonly outcome?: Outcome;
  /** Why the outcome is `failed`, fixed with it. */
  readonly reason?: string;
  /** What completed it (a rule, the deadline, an external event, a purge, failures), fixed with the outcome. */
  readonly completedBy?: CompletedBy;
  /** Replies expected (initialized aggregates). */
  readonly expected?: number;
  /**
   * Distinct replies: the size of the member set once sealed; for an open aggregate, what a
   * listing counted (the header itself is never written per reply).
   */
  readonly received: number;
  readonly lateCount: number;
  readonly openedAt: number;
  /** Epoch ms when the aggregate times out. */
  readonly deadline?: number;
  /** Epoch ms after which the sweeper times it out whatever its strategy (`maxOpenSeconds`). */
  readonly closeBy?: number;
  /**
   * Epoch ms: the next deadline of a recipient that has not replied, when the definition gives
   * recipients deadlines of their own (engine/responders.ts); moved on, lazily, each time it passes.
   */
  readonly recipientsDue?: number;
  /** The last accepted heartbeat of each recipient (epoch ms), by reply id; present when the definition takes heartbeats. */
  readonly beats?: Readonly<Record<string, number>>;
  /**
   * The reply queue its sub-requests name (`fanin-reply-to`), kept at open when they may be sent
   * again (`responders.retry`): a retry names the same one, and needs no partition state to choose it.
   */
  readonly replyTo?: string;
  /** The last round of retries taken (engine/retries.ts); absent: none yet. Written only while open. */
  readonly retryRound?: number;
  /** How many times each recipient was sent its sub-request again, by reply id (only those retried). */
  readonly retried?: Readonly<Record<string, number>>;
  /**
   * The last attempt of each recipient whose failed reply was kept for a retry instead of recorded
   * (`responders.retry.failedReplies`, engine/retries.ts), by reply id; present when the
   * definition retries failures. Written only while open.
   */
  readonly failedAttempts?: Readonly<Record<string, number>>;
  readonly params: EffectiveParameters;
  /** The request that opened it (initialized) — a retried request is recognised by it. */
  readonly requestId?: string;
  /** Sub-requests sent so far, when a large fan-out records its progress (absent: none recorded). */
  readonly dispatchedUpTo?: number;
  /**
   * How many of its sub-requests may have been sent: raised before each chunk is sent (0 at
   * open), so one at or past it was certainly never sent — a result lists it missing as never
   * asked. Absent: not recorded (no sub-requests, or a header from before it was).
   */
  readonly askedUpTo?: number;
  /** The reply that opened a self-starting aggregate. */
  readonly openedBy?: string;
  /** Partition keys its replies are spread over (the definition's `writeShards`, fixed at open). */
  readonly shards?: number;
  /** When completion was claimed: the timestamp the output carries, stable across retries. */
  readonly completingAt?: number;
  /** The reply ids the result is built from, fixed at the seal (see {@link MemberSet}). */
  readonly members?: readonly string[];
  /**
   * The members taken from a pack (several replies of one batch in one item), by the pack's key,
   * fixed at the seal; every other member is taken from its own item.
   */
  readonly sources?: Readonly<Record<string, readonly string[]>>;
  /** The fencing token of the invocation that owns the completion. */
  readonly lease?: string;
  /** Epoch ms when the owner's lease runs out and a resumer may take over. */
  readonly leaseUntil?: number;
  /** Output channels already delivered by a completion that then failed on another channel. */
  readonly emitted?: readonly OutputChannel[];
  /** When closed: epoch seconds after which the tombstone may be deleted. */
  readonly expiresAt?: number;
}

/** An S3 location of a payload (the SQS Extended Client's pointer). */
export interface PayloadPointer {
  readonly s3BucketName: string;
  readonly s3Key: string;
}

/** JSON text kept in the state store, or in S3 when too large for an item. */
export interface StoredPayload {
  /** The JSON text ('' when it is in S3). */
  readonly payload: string;
  readonly payloadRef?: PayloadPointer;
}

/** A reply to record. */
export interface ReplyToRecord {
  readonly replyId: string;
  /** The retained body, as JSON text ('' when it is in S3, see `payloadRef`). */
  readonly payload: string;
  /** Where the retained body is when it was too large for a DynamoDB item. */
  readonly payloadRef?: PayloadPointer;
  readonly receivedAt: number;
  /** The definition the reply named, when it named one. */
  readonly definition?: string;
  /** Its score under an `override` definition, read once when it is recorded. */
  readonly score?: number;
  /** Set when the responder answered with a failure (`fanin-failure`): its error text. */
  readonly failure?: string;
  /** The SQS message it came in (its first id: `fanin-origin-message-id` after a move). */
  readonly messageId?: string;
  /** Epoch seconds after which the item may be deleted (beyond any life its aggregate can have). */
  readonly expiresAt: number;
}

/** A recorded reply as read back. */
export interface StoredReply extends ReplyToRecord {
  /** Set once the reply was found late (recorded after its aggregate was sealed). */
  readonly late?: boolean;
  /**
   * `unknown`: the reply was reported unknown before its aggregate opened ({@link
   * StateStore.markUnknown}; `late` is set too): never a member, it owes the unknown output (a copy
   * recorded in a pack after the open: the completer sends it). `late`: a late reply the completer
   * routed ({@link StateStore.markLate} with `owes`) whose late output is not known sent: a resumed
   * completer sends it (its reply's message was acknowledged long before, nothing else would).
   */
  readonly owes?: 'unknown' | 'late';
  /** The key of the pack it was read from; absent when it was read from its own item. */
  readonly pack?: string;
}

/** An aggregate read in one consistent query: its header and every reply recorded so far. */
export interface AggregateSnapshot {
  readonly header?: AggregateHeader;
  readonly replies: readonly StoredReply[];
}

/** What the seal (open → completing) fixes, once, for every later attempt. */
export interface Seal {
  readonly outcome: Outcome;
  readonly reason?: string;
  readonly completedBy?: CompletedBy;
  readonly members: readonly string[];
  /** Members read from packs, by pack key (see {@link AggregateHeader.sources}). */
  readonly sources?: Readonly<Record<string, readonly string[]>>;
  readonly at: number;
  readonly lease: string;
  readonly leaseUntil: number;
  /**
   * Epoch seconds: what the seal writes beside the header (a member set too large for it, in
   * chunks) expires no sooner — the aggregate's state life from the seal, as its replies'.
   * @default the longest state life a definition can have, from the seal
   */
  readonly expiresAt?: number;
}

/** A reply held because its aggregate did not exist yet (IBM's unknown message timeout). */
export interface HeldReply {
  readonly aggregateId: string;
  readonly replyId: string;
  readonly definition?: string;
  /** The original message: body text and attributes, so it can be routed as it came. */
  readonly body: string;
  /** Where the body is when it was too large for an item ('' in `body` then). */
  readonly bodyRef?: PayloadPointer;
  readonly attributes: Readonly<Record<string, string>>;
  /** The SQS message id it came with. */
  readonly messageId: string;
  readonly receivedAt: number;
  /** Epoch ms at which it goes to the unknown output if its aggregate has not appeared. */
  readonly dueAt: number;
  /** Set once its fate is claimed: counted into its aggregate, or routed to the unknown output. */
  readonly claimed?: HeldClaim;
}

/** The two exclusive fates of a held reply. */
export type HeldClaim = 'counted' | 'unknown';

/**
 * What a reply's conditional put did: `recorded`; `duplicate` (recorded before, or twice in one
 * batch, or reported unknown with its output sent); `unknown` (the reply was reported unknown
 * before its aggregate opened, {@link StateStore.markUnknown}, and its output is not known sent:
 * never counted, it owes the unknown output).
 */
export type ReplyFate = 'recorded' | 'duplicate' | 'unknown';

/**
 * What marking a reply late did: `marked` the first time; `late` when it was marked late before;
 * `owed` when it was marked late before by a completer and its late output is not known sent
 * ({@link StateStore.markLateSent}). A reply reported unknown ({@link StateStore.markUnknown}) is
 * never late: `unknown` while it owes the unknown output, `reported` once that was sent
 * ({@link StateStore.markUnknownSent}).
 */
export type LateMark = 'marked' | 'late' | 'owed' | 'unknown' | 'reported';

/** An item the sweeper found due. */
export type DueItem =
  | { readonly kind: 'aggregate'; readonly aggregateId: string; readonly dueAt: number }
  | { readonly kind: 'held'; readonly aggregateId: string; readonly replyId: string; readonly dueAt: number }
  /** The next snapshot of an aggregate whose snapshot interval reaches beyond the timers' horizon. */
  | { readonly kind: 'snapshot'; readonly aggregateId: string; readonly dueAt: number };

/** A window of the `due` index read for arming ({@link StateStore.dueBetween}). */
export interface DueWindow {
  /** The items read, each due before `next` when it is given. */
  readonly items: readonly DueItem[];
  /** Set when a shard held more than the limit: the items due from `next` on are still to be read. */
  readonly next?: number;
}

/**
 * Every item the state table keeps of one aggregate, as stored: what its history is assembled
 * from (shared/engine/history.ts). Read-only, and never read by the data plane.
 */
export interface AggregateRecords {
  readonly header?: AggregateHeader;
  /**
   * What the header keeps beyond the port's {@link AggregateHeader}, for the history: the
   * parameters fixed at open, copied at the seal (`keptParams`: the close removes `params`), and
   * the inactivity timeout's moves of the deadline (`firstDeadline`, `deadlineMoves`), the snapshots.
   */
  readonly kept?: {
    readonly params?: AggregateHeader['params'];
    readonly firstDeadline?: number;
    readonly deadlineMoves?: number;
    /** The last snapshot period taken (`lastSnapshot`). */
    readonly lastSnapshot?: number;
  };
  /** The opening request's item (only definitions that read it keep one): the sub-requests' labels. */
  readonly request?: { readonly labels?: readonly (string | null)[]; readonly inS3?: boolean };
  /** Every recorded copy of every reply, alone or in a pack: a reply id recorded twice has two. */
  readonly copies: readonly ReplyCopy[];
  /** Late and unknown marks under reply keys (with or without a recorded copy). */
  readonly marks: readonly ReplyMark[];
  /** Replies held for it (before it opened), with their claimed fate. */
  readonly held: readonly HeldReply[];
  /** Epoch ms of the next snapshot item (a snapshot interval beyond the timers' horizon). */
  readonly snapshotDueAt?: number;
}

/** One recorded copy of a reply (its body left out: a history never shows bodies). */
export interface ReplyCopy {
  readonly replyId: string;
  readonly receivedAt: number;
  readonly messageId?: string;
  readonly definition?: string;
  readonly failure?: string;
  readonly score?: number;
  /** The pack's key when it was recorded in a pack; absent when it is the reply's own item. */
  readonly pack?: string;
}

/** A late or unknown mark under a reply's key. */
export interface ReplyMark {
  readonly replyId: string;
  /**
   * `unknown`: reported unknown, its output owed; `sent`: reported unknown, its output sent;
   * `late`: routed late by a completer, its output owed; `late-sent`: that output sent; absent: a
   * late mark written by the reply handler (its output was sent with the message's handling).
   */
  readonly owes?: 'unknown' | 'sent' | 'late' | 'late-sent';
}

/** The aggregate state store (DynamoDB in production and tests). */
export interface StateStore {
  /**
   * Creates an aggregate (header, and the request when given); returns the existing header
   * instead when the id is taken (a tombstone included). The request is stored first: a request
   * whose id another request's stored request already claims opens nothing (the existing header
   * is returned, or, while the other has not written its header yet, a {@link BadMessageError}
   * says the id is in use).
   */
  openAggregate(
    header: AggregateHeader,
    request?: StoredPayload & { readonly expiresAt: number },
  ): Promise<{ readonly created: boolean; readonly header: AggregateHeader }>;
  /** Records how many sub-requests a large fan-out has sent. */
  markDispatched(aggregateId: string, upTo: number): Promise<void>;
  /** Records, before they are sent, that the sub-requests below `upTo` may be sent (`askedUpTo`). */
  markAsked(aggregateId: string, upTo: number): Promise<void>;
  /**
   * The header, read consistently unless `consistent: false` (half the read units; may miss a
   * header just written and show an older status, never other definition, expected or shards).
   */
  getHeader(
    aggregateId: string,
    options?: { readonly consistent?: boolean },
  ): Promise<AggregateHeader | undefined>;
  /** The request stored when the aggregate was opened. */
  getRequest(aggregateId: string): Promise<StoredPayload | undefined>;
  /** Records one reply, once: a conditional put by reply id ({@link ReplyFate}). */
  putReply(aggregateId: string, reply: ReplyToRecord, shards?: number): Promise<ReplyFate>;
  /**
   * Records the replies of one batch to one aggregate, each once: several in one item (a pack)
   * where they share a partition key, a lone one as {@link putReply} does. One fate per reply, in
   * order (`duplicate` when it was already recorded, or twice in `replies`).
   */
  putReplies(aggregateId: string, replies: readonly ReplyToRecord[], shards?: number): Promise<ReplyFate[]>;
  /** Replies recorded (not late) with index ids `first … last`, packed or not: range reads (large fan-outs). */
  countRange(aggregateId: string, first: number, last: number, shards?: number): Promise<number>;
  /** Records that a block of index reply ids is all in (large fan-outs; idempotent). */
  markBlockComplete(aggregateId: string, block: number, expiresAt: number): Promise<void>;
  /**
   * Adds to a large aggregate's reply counter (a completion trigger only), in write shard `shard`
   * of `shards`; returns the new total over every shard.
   */
  addToCounter(
    aggregateId: string,
    count: number,
    expiresAt: number,
    options?: { readonly shard?: number; readonly shards?: number },
  ): Promise<number>;
  /** How many blocks of a large fan-out are all in. */
  countCompleteBlocks(aggregateId: string): Promise<number>;
  /** The header and every reply, in one consistent read. */
  readAggregate(aggregateId: string): Promise<AggregateSnapshot>;
  /** open → completing with the member set and outcome; undefined when it was not open. */
  seal(aggregateId: string, seal: Seal): Promise<AggregateHeader | undefined>;
  /** Takes a completing aggregate's lease over from `from`; undefined when that lease is no longer current. */
  takeOver(
    aggregateId: string,
    from: string,
    lease: string,
    leaseUntil: number,
  ): Promise<AggregateHeader | undefined>;
  /**
   * Brings a completing aggregate's `due` entry forward to `at` (never later), while `lease` still
   * holds it: a completer that failed leaves its aggregate to the sweeper at its lease's end.
   */
  recoverAt(aggregateId: string, lease: string, at: number): Promise<void>;
  /**
   * Moves an open aggregate's deadline and its `due` entry from `from` to `to` (the inactivity
   * timeout, checked lazily when it falls due); false when the aggregate is no longer open or its
   * deadline moved meanwhile.
   */
  moveDeadline(aggregateId: string, from: number, to: number, dueAt?: number): Promise<boolean>;
  /**
   * Moves an open aggregate's next recipient deadline (`recipientsDue`) from `from` to `to`
   * (removed when undefined) and its `due` entry to `dueAt` (engine/responders.ts); false when
   * the aggregate is no longer open or it moved meanwhile.
   */
  moveRecipientsDue(
    aggregateId: string,
    from: number,
    to: number | undefined,
    dueAt: number | undefined,
  ): Promise<boolean>;
  /**
   * Records a round of retries taken on an open aggregate (engine/retries.ts): its last round from
   * `from` (0: none yet) to `round`, each recipient's retry count (`retried`, the whole map) and
   * its `due` entry at `dueAt` (removed when undefined); false when the aggregate is no longer
   * open or another look recorded a round meanwhile.
   */
  recordRetries(
    aggregateId: string,
    from: number,
    round: number,
    retried: Readonly<Record<string, number>>,
    dueAt: number | undefined,
  ): Promise<boolean>;
  /**
   * Keeps a heartbeat of recipient `replyId` received at `at` on an open aggregate's header
   * (`beats`), when it is newer than the one kept; false when the aggregate is not open, takes no
   * heartbeats, or a newer one is kept.
   */
  keepHeartbeat(aggregateId: string, replyId: string, at: number): Promise<boolean>;
  /**
   * Keeps a failed reply of recipient `replyId` to attempt `attempt` on an open aggregate's header
   * (`failedAttempts`) instead of recording it, so a round of retries asks it again
   * (engine/retries.ts, failedReplyCourse); only while the last round taken is still `round` (0:
   * none), the one the course was judged on, and only when no failure of this attempt or a later
   * one is kept. False when any of that does not hold.
   */
  keepFailedAttempt(aggregateId: string, replyId: string, attempt: number, round: number): Promise<boolean>;
  /**
   * Marks snapshot `period` of an open aggregate as taken, on its header: `marked` the first time,
   * `already` when this period was marked before, `passed` when a later one was, `closed` when the
   * aggregate is not open (no snapshot once it is sealed).
   */
  markSnapshot(aggregateId: string, period: number): Promise<'marked' | 'already' | 'passed' | 'closed'>;
  /** Records a channel delivered under the lease; false when the lease is no longer held. */
  markEmitted(aggregateId: string, lease: string, channels: readonly OutputChannel[]): Promise<boolean>;
  /** completing → closed under the lease (the header becomes the tombstone); false when not held. */
  close(aggregateId: string, lease: string, expiresAt: number): Promise<boolean>;
  /**
   * Marks a reply late, once ({@link LateMark}; counted on the header the first time). `owes`: the
   * mark (when this call writes it) says its late output is owed (`owes: late`), until
   * {@link markLateSent} — the completer's, whose reply was acknowledged long before.
   */
  markLate(
    aggregateId: string,
    replyId: string,
    expiresAt: number,
    shards?: number,
    owes?: boolean,
  ): Promise<LateMark>;
  /** Records that a late mark's owed late output was sent (`owes: late` → `late-sent`); only a mark owing it changes. */
  markLateSent(aggregateId: string, replyId: string, shards?: number): Promise<void>;
  /**
   * Fixes a reply's fate as unknown: marks it late under its own key (for each write-shard count
   * in `shards`) only while its aggregate has no header, atomically with that check; false, and
   * nothing written, when the header exists (the reply belongs to that aggregate).
   */
  markUnknown(
    aggregateId: string,
    replyId: string,
    expiresAt: number,
    shards: readonly number[],
  ): Promise<boolean>;
  /**
   * Records that the unknown output of a reply {@link markUnknown} marked was sent (each layout in
   * `shards`): a copy of it put later is a `duplicate`, not `unknown`. Only a mark owing it changes.
   */
  markUnknownSent(aggregateId: string, replyId: string, shards: readonly number[]): Promise<void>;
  holdReply(held: HeldReply): Promise<boolean>;
  getHeld(aggregateId: string, replyId: string): Promise<HeldReply | undefined>;
  listHeld(aggregateId: string): Promise<HeldReply[]>;
  /** Claims a held reply's fate; true when it is (now or already) `claim`, false when it has the other. */
  claimHeld(aggregateId: string, replyId: string, claim: HeldClaim): Promise<boolean>;
  deleteHeld(aggregateId: string, replyId: string): Promise<void>;
  /** Due items, taken evenly from every shard of the `due` index. */
  dueItems(now: number, limit: number): Promise<DueItem[]>;
  /** Moves a due item that failed later in the index, so it cannot starve the others. */
  deferDue(item: DueItem, until: number): Promise<void>;
  /**
   * Items of the `due` index due in `from … to` (inclusive), at most `limit` from each shard: those
   * the sweep arms timers for as they enter the timers' horizon. A store without it (in memory)
   * leaves every timer to its scheduler.
   */
  dueBetween?(from: number, to: number, limit: number): Promise<DueWindow>;
  /** The arming watermark: every due item due before it has had its timer armed (undefined: never). */
  armedUntil?(): Promise<number | undefined>;
  /** Moves the arming watermark forward to `to`, never back (`now` dates the item that keeps it). */
  markArmedUntil?(to: number, now: number): Promise<void>;
  /**
   * Puts an aggregate's next snapshot in the `due` index (one small item per aggregate, replaced
   * each period), for a snapshot due beyond the timers' horizon: the sweep arms its timer as it
   * enters the horizon. A store without it leaves every snapshot timer to its scheduler.
   */
  setSnapshotDue?(aggregateId: string, dueAt: number): Promise<void>;
  /** Removes that item, only while it is still the one due at `dueAt` (no later one replaced it). */
  clearSnapshotDue?(aggregateId: string, dueAt: number): Promise<void>;
  /** Open aggregates of a definition, oldest first, replies counted (every page: tests and local tools). */
  listOpen(definition: string): Promise<AggregateHeader[]>;
  /** Open and completing aggregates, of one definition or all, oldest first, replies counted (every page). */
  listActive(definition?: string): Promise<AggregateHeader[]>;
  /**
   * One page of the open and completing aggregates, of one definition or all: those among at most
   * `limit` entries of the `due` index from `cursor` on, each read consistently, in the index's
   * order; its calls are bounded by `limit`, not by the number of open aggregates.
   * @throws BadMessageError when `cursor` is not one a page returned
   */
  listActivePage(options: ActivePageOptions): Promise<ActivePage>;
  getParameters(definition: string): Promise<RuntimeParameters>;
  setParameters(definition: string, parameters: RuntimeParameters): Promise<void>;
  /**
   * Every item of one aggregate, in consistent reads (its partition key and its write shards'):
   * an operator's read for its history. A store without it gives the history from
   * {@link readAggregate} and {@link listHeld} (one copy per reply, no marks alone).
   */
  readHistory?(aggregateId: string): Promise<AggregateRecords>;
}

/** What {@link StateStore.listActivePage} reads. */
export interface ActivePageOptions {
  /** Only aggregates of this definition (the others are read, and left out). */
  readonly definition?: string;
  /** Index entries to read (1 to 1,000). */
  readonly limit: number;
  /** Where to start: a cursor a page returned (`next`, or an aggregate's `after`); the start by default. */
  readonly cursor?: string;
  /** Count an open aggregate's replies (reads its whole aggregate); the header alone otherwise. */
  readonly replies?: boolean;
  /** Read no entry due after this (epoch ms). */
  readonly dueBy?: number;
}

/** A page of the active aggregates. */
export interface ActivePage {
  /** Each with the cursor of the position just after it, in the index's order. */
  readonly aggregates: readonly { readonly header: AggregateHeader; readonly after: string }[];
  /** Where the next page starts; absent when the index is read to its end. */
  readonly next?: string;
}

/** One message on an output. */
export interface OutputMessage {
  /** Deterministic: a retry emits the same id, so consumers (and SQS FIFO) deduplicate. */
  readonly id: string;
  readonly type: string;
  readonly aggregateId?: string;
  readonly definition?: string;
  readonly [key: string]: unknown;
}

/** Emits to the output channels (SQS FIFO queues, optionally an EventBridge bus). */
export interface OutputPublisher {
  publish(
    role: OutputRole,
    message: OutputMessage,
    options?: { readonly eventBridge?: boolean; readonly skip?: readonly OutputChannel[] },
  ): Promise<void>;
}

/** What a timer fires for. */
export type TimerMessage =
  | { readonly kind: 'deadline'; readonly aggregateId: string; readonly dueAt: number }
  | { readonly kind: 'held'; readonly aggregateId: string; readonly replyId: string; readonly dueAt: number }
  /**
   * Periodic release: snapshot `period` (1, 2, …) of an open aggregate, due at openedAt + period ×
   * interval. A timer the sweep armed from the `due` index has no `period` (the index keeps keys
   * and times only): its period is the one due at `dueAt`.
   */
  | {
      readonly kind: 'snapshot';
      readonly aggregateId: string;
      readonly period?: number;
      readonly dueAt: number;
    };

/**
 * Arms timers (SQS delay messages of at most 900 s). A timer due further than {@link horizonMs} is
 * not sent: its item is in the `due` index (an aggregate's header, a held reply, an aggregate's
 * next snapshot: {@link StateStore.setSnapshotDue}), and the sweep arms it once it enters the
 * horizon.
 */
export interface TimerScheduler {
  /** How far ahead a timer can be armed precisely (SQS: 900 s); unbounded when absent. */
  readonly horizonMs?: number;
  arm(timer: TimerMessage, now: number): Promise<void>;
  /**
   * Arms several timers in as few calls as the transport allows (SQS: 10 a `SendMessageBatch`).
   * @returns the positions in `timers` of those not armed (their entries failed); an error of the
   *   whole call is thrown
   */
  armAll(timers: readonly TimerMessage[], now: number): Promise<readonly number[]>;
}

/** A sub-request to send. */
export interface SubRequest {
  /** Target queue: a name in this account and region, or a URL. */
  readonly target: string;
  readonly body: string;
  readonly attributes: Readonly<Record<string, string>>;
  /** Stable per sub-request, for FIFO targets' deduplication. */
  readonly deduplicationId: string;
  readonly groupId: string;
}

/** Sends sub-requests to their targets. */
export interface RequestSender {
  send(requests: readonly SubRequest[]): Promise<void>;
  /**
   * Checks that every target can be sent to, sending nothing; throws an unfixable error naming the
   * first whose queue does not exist or may not be used. Absent: every target is taken as reachable.
   */
  check?(targets: readonly string[]): Promise<void>;
}

/** A message as it came off a queue, before any interpretation. */
export interface RawMessage {
  /** The transport's id (SQS MessageId): stable across redeliveries. */
  readonly messageId: string;
  readonly body: string;
  /** String message attributes. */
  readonly attributes: Readonly<Record<string, string>>;
  /** How many times it has been received (1 on first delivery). */
  readonly receiveCount: number;
  /**
   * When SQS accepted it (its `SentTimestamp`, epoch ms, SQS's clock): the same on every
   * redelivery, so a reply's arrival does not move when a handler dies and SQS hands it back
   * later. A copy the distributor moved has the time of its move. Absent when the transport
   * does not say (a reply then arrives when it is recorded).
   */
  readonly sentAt?: number;
  /** Who sent it, as SQS says (`SenderId`); absent when the transport does not say. */
  readonly senderId?: string;
}

/** A message a drain received: what the use cases read of it, and the handle that deletes it. */
export interface ReceivedMessage {
  readonly message: RawMessage;
  /** The receive's handle for it (SQS's `ReceiptHandle`), opaque: what {@link DrainQueue.delete} needs. */
  readonly receipt: string;
}

/**
 * One queue a scheduled drain takes messages from (`shared/adapters/sqs-drain.ts`): the receives
 * and deletes alone. When to receive, what a batch is and when the queue is caught up are the
 * drain use case's (`shared/use-cases/reply-drain.ts`).
 */
export interface DrainQueue {
  /** The most messages one receive returns (SQS: 10). */
  readonly maxPerReceive: number;
  /**
   * One receive of up to `max` messages (at most {@link maxPerReceive}), long-polling, with each
   * message's receive count, `SentTimestamp` and `SenderId`. Nothing returned: nothing visible.
   */
  receive(max: number): Promise<readonly ReceivedMessage[]>;
  /**
   * Deletes `messages`. @returns how many were not deleted (they come back after the visibility
   * timeout); never throws.
   */
  delete(messages: readonly ReceivedMessage[]): Promise<number>;
}

/**
 * The claim-check path: large payloads live in S3, the SQS message carries a pointer in
 * the SQS Extended Client's format.
 */
export interface PayloadStore {
  /** The real body of a received message (fetched when it is a pointer). */
  decode(body: string, attributes?: Readonly<Record<string, string>>): Promise<string>;
  put(key: string, payload: string): Promise<PayloadPointer>;
  get(pointer: PayloadPointer): Promise<string>;
}

/** Chooses the reply partition a sub-request names as its reply-to (affinity by aggregate). */
export interface ReplyRouter {
  /** The queue URL replies of this aggregate should go to now; throws when no partition is available. */
  replyTo(aggregateId: string): Promise<string>;
}

/**
 * Structured logging. Callers pass ids, counts and reasons — never a message body, payload or
 * attribute value (those may carry personal or secret data).
 */
export interface Log {
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

/** A {@link Log} that drops everything. */
export const SILENT_LOG: Log = { info: () => undefined, warn: () => undefined, error: () => undefined };

/** The clock, injectable so tests can move time instead of waiting. */
export type Clock = () => number;

/**
 * Conditions an operator must hear about: the use cases log them at error level with the field
 * `alarm` set to one of these values, and the stack turns each into a CloudWatch metric (a metric
 * filter on `{ $.alarm = "<value>" }`) with an alarm.
 */
export const Alarm = {
  /** One output channel (SQS queue, EventBridge bus, S3) keeps failing; the others were not re-sent. */
  OUTPUT_CHANNEL_FAILED: 'output-channel-failed',
  /** A due item (an aggregate's deadline or lease, a held reply) failed in the sweeper. */
  DUE_ITEM_FAILED: 'due-item-failed',
  /** A completion could not be finished (its stored bodies are gone, its result cannot be rebuilt). */
  COMPLETION_STUCK: 'completion-stuck',
} as const;
export type Alarm = (typeof Alarm)[keyof typeof Alarm];

/**
 * What fanin did, counted for CloudWatch (names and units in shared/observability/metric-names.ts,
 * documented in docs/observability.md). `definition` is a dimension: an adapter publishes only
 * configured definition names under it. Each fact is counted once, where it is decided.
 */
export interface Metrics {
  count(name: MetricName, definition?: string, n?: number): void;
  latency(name: MetricName, definition: string | undefined, ms: number): void;
}

/** {@link Metrics} that records nothing: the default of a context that wires none. */
export const NO_METRICS: Metrics = { count: () => undefined, latency: () => undefined };
