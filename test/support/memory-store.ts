import { heldItem } from '../../shared/adapters/state-items.ts';
import { replyKey } from '../../shared/adapters/state-keys.ts';
import { openDueAt } from '../../shared/engine/completion/deadline.ts';
import type { OutputChannel } from '../../shared/engine/constants.ts';
import { AggregateStatus } from '../../shared/engine/constants.ts';
import type { Definition, RuntimeParameters } from '../../shared/engine/definition.ts';
import { quoted } from '../../shared/engine/limits.ts';
import { policyFromQueueUrl } from '../../shared/engine/recipients.ts';
import { BadMessageError } from '../../shared/errors.ts';
import type {
  ActivePage,
  ActivePageOptions,
  AggregateHeader,
  AggregateSnapshot,
  DueItem,
  HeldClaim,
  HeldReply,
  LateMark,
  OutputMessage,
  OutputPublisher,
  RawMessage,
  ReplyFate,
  ReplyToRecord,
  RequestSender,
  Seal,
  StateStore,
  StoredPayload,
  StoredReply,
  SubRequest,
  TimerMessage,
  TimerScheduler,
} from '../../shared/ports.ts';
import type { OutputRole } from '../../shared/topology/topology.ts';
import { CONTEXT_DEFAULTS, type FaninContext } from '../../shared/use-cases/context.ts';

/**
 * In-memory fakes of the ports, for fast use-case tests without the emulators. The state store
 * keeps the DynamoDB store's conditions (shared/adapters/dynamo-state-store.ts and its state-*.ts
 * modules, docs/data-plane.md): a reply put once, a seal only of an open header, lease-holder-only
 * updates, a `due` entry where the DynamoDB store keeps one. It is not a proof of the protocol under
 * concurrency — the emulator and adversity suites are — but of what a use case does with it.
 */

interface AggregateRecord {
  header: AggregateHeader;
  /** The `due` index entry (undefined: not in the index). */
  dueAt?: number;
  lastSnapshot?: number;
  request?: StoredPayload & { readonly requestId?: string };
  /** Reply items by reply id: a put reply, or only a late mark. */
  /** `unknown`: the reply was reported unknown (markUnknown), its output `owed` or `sent`. */
  /** `lateOutput`: marked late by a completer (markLate with owes), its late output `owed` or `sent`. */
  readonly replies: Map<
    string,
    { reply?: StoredReply; late: boolean; unknown?: 'owed' | 'sent'; lateOutput?: 'owed' | 'sent' }
  >;
  readonly held: Map<string, HeldReply>;
  readonly blocks: Set<number>;
  readonly counters: Map<number, number>;
}

/** A {@link StateStore} in memory. Every read returns a copy, as a database read would. */
export class MemoryStateStore implements StateStore {
  private readonly aggregates = new Map<string, AggregateRecord>();
  private readonly parameters = new Map<string, RuntimeParameters>();

  private record(aggregateId: string): AggregateRecord {
    let record = this.aggregates.get(aggregateId);
    if (!record) {
      // Held replies and counters exist before (or without) a header, as their items do.
      record = {
        header: undefined as unknown as AggregateHeader,
        replies: new Map(),
        held: new Map(),
        blocks: new Set(),
        counters: new Map(),
      };
      this.aggregates.set(aggregateId, record);
    }
    return record;
  }

  private headerRecord(aggregateId: string): AggregateRecord | undefined {
    const record = this.aggregates.get(aggregateId);
    return record?.header ? record : undefined;
  }

  public async openAggregate(
    header: AggregateHeader,
    request?: StoredPayload & { readonly expiresAt: number },
  ): Promise<{ created: boolean; header: AggregateHeader }> {
    const record = this.record(header.aggregateId);
    if (request && record.request && record.request.requestId !== header.requestId) {
      // Another request claimed the id first (as the DynamoDB store: its header decides, or none opens).
      if (record.header) return { created: false, header: structuredClone(record.header) };
      throw new BadMessageError(
        `aggregate id ${quoted(header.aggregateId)} is already in use by another request`,
      );
    }
    if (request) {
      record.request = {
        payload: request.payload,
        ...(request.payloadRef ? { payloadRef: request.payloadRef } : {}),
        ...(header.requestId ? { requestId: header.requestId } : {}),
      };
    }
    if (record.header) return { created: false, header: structuredClone(record.header) };
    record.header = structuredClone({
      ...header,
      lateCount: 0,
      received: 0,
      ...(header.params.heartbeatSeconds !== undefined ? { beats: header.beats ?? {} } : {}),
      ...(header.params.retry?.failedReplies === true ? { failedAttempts: header.failedAttempts ?? {} } : {}),
    });
    const due = openDueAt(header);
    record.dueAt =
      header.recipientsDue === undefined || (due !== undefined && due < header.recipientsDue)
        ? due
        : header.recipientsDue;
    return { created: true, header };
  }

  public async markDispatched(aggregateId: string, upTo: number): Promise<void> {
    const record = this.headerRecord(aggregateId);
    if (record && (record.header.dispatchedUpTo === undefined || record.header.dispatchedUpTo < upTo))
      record.header = { ...record.header, dispatchedUpTo: upTo };
  }

  public async markAsked(aggregateId: string, upTo: number): Promise<void> {
    const record = this.headerRecord(aggregateId);
    if (
      record &&
      record.header.status === AggregateStatus.OPEN &&
      (record.header.askedUpTo === undefined || record.header.askedUpTo < upTo)
    )
      record.header = { ...record.header, askedUpTo: upTo };
  }

  public async getHeader(aggregateId: string): Promise<AggregateHeader | undefined> {
    const record = this.headerRecord(aggregateId);
    return record ? structuredClone(record.header) : undefined;
  }

  public async getRequest(aggregateId: string): Promise<StoredPayload | undefined> {
    const request = this.aggregates.get(aggregateId)?.request;
    if (!request) return undefined;
    return { payload: request.payload, ...(request.payloadRef ? { payloadRef: request.payloadRef } : {}) };
  }

  public async putReply(aggregateId: string, reply: ReplyToRecord): Promise<ReplyFate> {
    const replies = this.record(aggregateId).replies;
    const item = replies.get(reply.replyId);
    if (item) return item.unknown === 'owed' && !item.reply ? 'unknown' : 'duplicate';
    replies.set(reply.replyId, { reply: structuredClone(reply), late: false });
    return 'recorded';
  }

  /** One reply at a time (packs are the DynamoDB store's layout; the fates are the same). */
  public async putReplies(aggregateId: string, replies: readonly ReplyToRecord[]): Promise<ReplyFate[]> {
    const fates: ReplyFate[] = [];
    for (const reply of replies) fates.push(await this.putReply(aggregateId, reply));
    return fates;
  }

  public async countRange(aggregateId: string, first: number, last: number): Promise<number> {
    const replies = this.aggregates.get(aggregateId)?.replies ?? new Map();
    const [from, to] = [replyKey(String(first)), replyKey(String(last))];
    let count = 0;
    for (const [replyId, item] of replies) {
      const key = replyKey(replyId);
      if (key >= from && key <= to && item.reply && !item.late) count += 1;
    }
    return count;
  }

  public async markBlockComplete(aggregateId: string, block: number): Promise<void> {
    this.record(aggregateId).blocks.add(block);
  }

  public async addToCounter(
    aggregateId: string,
    count: number,
    _expiresAt: number,
    options: { readonly shard?: number; readonly shards?: number } = {},
  ): Promise<number> {
    const counters = this.record(aggregateId).counters;
    const shard = options.shard ?? 0;
    counters.set(shard, (counters.get(shard) ?? 0) + count);
    return [...counters.values()].reduce((sum, n) => sum + n, 0);
  }

  public async countCompleteBlocks(aggregateId: string): Promise<number> {
    return this.aggregates.get(aggregateId)?.blocks.size ?? 0;
  }

  public async readAggregate(aggregateId: string): Promise<AggregateSnapshot> {
    const record = this.aggregates.get(aggregateId);
    if (!record) return { replies: [] };
    const replies = [...record.replies.entries()]
      .filter(([, item]) => item.reply !== undefined)
      .sort(([a], [b]) => (replyKey(a) < replyKey(b) ? -1 : 1))
      .map(([, item]) =>
        structuredClone({
          ...(item.reply as StoredReply),
          ...(item.late ? { late: true } : {}),
          ...(item.lateOutput === 'owed' ? { owes: 'late' as const } : {}),
        }),
      );
    return { ...(record.header ? { header: structuredClone(record.header) } : {}), replies };
  }

  public async seal(aggregateId: string, seal: Seal): Promise<AggregateHeader | undefined> {
    const record = this.headerRecord(aggregateId);
    if (record?.header.status !== AggregateStatus.OPEN) return undefined;
    record.header = {
      ...record.header,
      status: AggregateStatus.COMPLETING,
      outcome: seal.outcome,
      // The member set as the DynamoDB store reads it back: each id once (however it is kept,
      // on the header or in chunks beside it), with the packs members are read from.
      members: [...new Set(seal.members)],
      received: seal.members.length,
      ...(sourcesOf(seal) ? { sources: sourcesOf(seal) } : {}),
      completingAt: seal.at,
      lease: seal.lease,
      leaseUntil: seal.leaseUntil,
      ...(seal.reason !== undefined ? { reason: seal.reason } : {}),
      ...(seal.completedBy !== undefined ? { completedBy: seal.completedBy } : {}),
    };
    // The due entry stays where the open put it; a header without one gets the lease's end.
    record.dueAt ??= seal.leaseUntil;
    return structuredClone(record.header);
  }

  public async takeOver(
    aggregateId: string,
    from: string,
    lease: string,
    leaseUntil: number,
  ): Promise<AggregateHeader | undefined> {
    const record = this.leased(aggregateId, from);
    if (!record) return undefined;
    record.header = { ...record.header, lease, leaseUntil };
    record.dueAt = leaseUntil;
    return structuredClone(record.header);
  }

  public async recoverAt(aggregateId: string, lease: string, at: number): Promise<void> {
    const record = this.leased(aggregateId, lease);
    if (record && (record.dueAt === undefined || record.dueAt > at)) record.dueAt = at;
  }

  public async moveDeadline(aggregateId: string, from: number, to: number, dueAt = to): Promise<boolean> {
    const record = this.headerRecord(aggregateId);
    if (record?.header.status !== AggregateStatus.OPEN || record.header.deadline !== from) return false;
    record.header = { ...record.header, deadline: to };
    record.dueAt = dueAt;
    return true;
  }

  public async moveRecipientsDue(
    aggregateId: string,
    from: number,
    to: number | undefined,
    dueAt: number | undefined,
  ): Promise<boolean> {
    const record = this.headerRecord(aggregateId);
    if (record?.header.status !== AggregateStatus.OPEN || record.header.recipientsDue !== from) return false;
    const { recipientsDue: _, ...rest } = record.header;
    record.header = { ...rest, ...(to !== undefined ? { recipientsDue: to } : {}) };
    record.dueAt = dueAt;
    return true;
  }

  public async recordRetries(
    aggregateId: string,
    from: number,
    round: number,
    retried: Readonly<Record<string, number>>,
    dueAt: number | undefined,
  ): Promise<boolean> {
    const record = this.headerRecord(aggregateId);
    if (record?.header.status !== AggregateStatus.OPEN || (record.header.retryRound ?? 0) !== from)
      return false;
    record.header = { ...record.header, retryRound: round, retried: { ...retried } };
    record.dueAt = dueAt;
    return true;
  }

  public async keepHeartbeat(aggregateId: string, replyId: string, at: number): Promise<boolean> {
    const record = this.headerRecord(aggregateId);
    const beats = record?.header.beats;
    if (record?.header.status !== AggregateStatus.OPEN || beats === undefined) return false;
    const last = beats[replyId];
    if (last !== undefined && last >= at) return false;
    record.header = { ...record.header, beats: { ...beats, [replyId]: at } };
    return true;
  }

  public async keepFailedAttempt(
    aggregateId: string,
    replyId: string,
    attempt: number,
    round: number,
  ): Promise<boolean> {
    const record = this.headerRecord(aggregateId);
    const kept = record?.header.failedAttempts;
    if (record?.header.status !== AggregateStatus.OPEN || kept === undefined) return false;
    if ((record.header.retryRound ?? 0) !== round) return false;
    const last = kept[replyId];
    if (last !== undefined && last >= attempt) return false;
    record.header = { ...record.header, failedAttempts: { ...kept, [replyId]: attempt } };
    return true;
  }

  public async markSnapshot(
    aggregateId: string,
    period: number,
  ): Promise<'marked' | 'already' | 'passed' | 'closed'> {
    const record = this.headerRecord(aggregateId);
    if (record?.header.status !== AggregateStatus.OPEN) return 'closed';
    if (record.lastSnapshot === undefined || record.lastSnapshot < period) {
      record.lastSnapshot = period;
      return 'marked';
    }
    return record.lastSnapshot === period ? 'already' : 'passed';
  }

  public async markEmitted(
    aggregateId: string,
    lease: string,
    channels: readonly OutputChannel[],
  ): Promise<boolean> {
    const record = this.leased(aggregateId, lease);
    if (!record) return false;
    record.header = { ...record.header, emitted: [...channels] };
    return true;
  }

  public async close(aggregateId: string, lease: string, expiresAt: number): Promise<boolean> {
    const record = this.leased(aggregateId, lease);
    if (!record) return false;
    const {
      lease: _lease,
      leaseUntil: _until,
      emitted: _emitted,
      sources: _sources,
      ...rest
    } = record.header;
    record.header = { ...rest, status: AggregateStatus.CLOSED, expiresAt, params: {} };
    record.dueAt = undefined;
    return true;
  }

  public async markLate(
    aggregateId: string,
    replyId: string,
    _expiresAt?: number,
    _shards?: number,
    owes = false,
  ): Promise<LateMark> {
    const record = this.record(aggregateId);
    const item = record.replies.get(replyId);
    if (item?.late && item.unknown && !item.reply) return item.unknown === 'owed' ? 'unknown' : 'reported';
    if (item?.late) return item.lateOutput === 'owed' ? 'owed' : 'late';
    record.replies.set(replyId, { ...item, late: true, ...(owes ? { lateOutput: 'owed' as const } : {}) });
    if (record.header) record.header = { ...record.header, lateCount: record.header.lateCount + 1 };
    return 'marked';
  }

  public async markUnknown(aggregateId: string, replyId: string): Promise<boolean> {
    const record = this.record(aggregateId);
    if (record.header) return false;
    record.replies.set(replyId, { ...record.replies.get(replyId), late: true, unknown: 'owed' });
    return true;
  }

  public async markUnknownSent(aggregateId: string, replyId: string): Promise<void> {
    const item = this.aggregates.get(aggregateId)?.replies.get(replyId);
    if (item?.unknown === 'owed') this.record(aggregateId).replies.set(replyId, { ...item, unknown: 'sent' });
  }

  public async markLateSent(aggregateId: string, replyId: string): Promise<void> {
    const item = this.aggregates.get(aggregateId)?.replies.get(replyId);
    if (item?.lateOutput === 'owed')
      this.record(aggregateId).replies.set(replyId, { ...item, lateOutput: 'sent' });
  }

  public async holdReply(held: HeldReply): Promise<boolean> {
    // Refused as the DynamoDB store refuses it: a message too large for one item.
    heldItem(held);
    const record = this.record(held.aggregateId);
    if (record.held.has(held.replyId)) return false;
    record.held.set(held.replyId, structuredClone(held));
    return true;
  }

  public async getHeld(aggregateId: string, replyId: string): Promise<HeldReply | undefined> {
    const held = this.aggregates.get(aggregateId)?.held.get(replyId);
    return held ? structuredClone(held) : undefined;
  }

  public async listHeld(aggregateId: string): Promise<HeldReply[]> {
    return [...(this.aggregates.get(aggregateId)?.held.values() ?? [])].map((h) => structuredClone(h));
  }

  public async claimHeld(aggregateId: string, replyId: string, claim: HeldClaim): Promise<boolean> {
    const held = this.aggregates.get(aggregateId)?.held;
    const item = held?.get(replyId);
    if (!held || !item || (item.claimed !== undefined && item.claimed !== claim)) return false;
    held.set(replyId, { ...item, claimed: claim });
    return true;
  }

  public async deleteHeld(aggregateId: string, replyId: string): Promise<void> {
    this.aggregates.get(aggregateId)?.held.delete(replyId);
  }

  public async dueItems(now: number, limit: number): Promise<DueItem[]> {
    const due: DueItem[] = [];
    for (const [aggregateId, record] of this.aggregates) {
      if (record.header && record.dueAt !== undefined && record.dueAt <= now)
        due.push({ kind: 'aggregate', aggregateId, dueAt: record.dueAt });
      for (const held of record.held.values())
        if (held.dueAt <= now)
          due.push({ kind: 'held', aggregateId, replyId: held.replyId, dueAt: held.dueAt });
    }
    return due.sort((a, b) => a.dueAt - b.dueAt).slice(0, limit);
  }

  public async deferDue(item: DueItem, until: number): Promise<void> {
    const record = this.aggregates.get(item.aggregateId);
    if (!record || item.kind === 'snapshot') return;
    if (item.kind === 'aggregate') {
      if (record.header && record.dueAt === item.dueAt) record.dueAt = until;
      return;
    }
    const held = record.held.get(item.replyId);
    if (held?.dueAt === item.dueAt) record.held.set(item.replyId, { ...held, dueAt: until });
  }

  public async listActive(definition?: string): Promise<AggregateHeader[]> {
    const active: AggregateHeader[] = [];
    for (const record of this.aggregates.values()) {
      const { header } = record;
      // What the DynamoDB store lists: the headers in the `due` index, open or completing.
      if (!header || record.dueAt === undefined) continue;
      if (definition !== undefined && header.definition !== definition) continue;
      if (header.status === AggregateStatus.OPEN) {
        const received = [...record.replies.values()].filter((i) => i.reply && !i.late).length;
        active.push(structuredClone({ ...header, received }));
      } else if (header.status === AggregateStatus.COMPLETING) active.push(structuredClone(header));
    }
    return active.sort((x, y) => x.openedAt - y.openedAt);
  }

  /** The DynamoDB store's paging over the `due` index: entries by due time, then id; the cursor the last one read. */
  public async listActivePage(options: ActivePageOptions): Promise<ActivePage> {
    let from: [number, string] | undefined;
    if (options.cursor !== undefined) {
      try {
        from = JSON.parse(Buffer.from(options.cursor, 'base64url').toString()) as [number, string];
      } catch {
        throw new BadMessageError('invalid cursor');
      }
      if (!Array.isArray(from) || typeof from[0] !== 'number' || typeof from[1] !== 'string')
        throw new BadMessageError('invalid cursor');
    }
    const after = (e: [number, string], f: [number, string]) => e[0] > f[0] || (e[0] === f[0] && e[1] > f[1]);
    const entries = [...this.aggregates]
      .filter(([, r]) => r.header && r.dueAt !== undefined && r.dueAt <= (options.dueBy ?? Infinity))
      .map(([id, r]): [number, string] => [r.dueAt as number, id])
      .filter((e) => from === undefined || after(e, from))
      .sort((a, b) => (after(a, b) ? 1 : -1));
    const page = entries.slice(0, options.limit);
    const cursorOf = (e: [number, string]) => Buffer.from(JSON.stringify(e)).toString('base64url');
    const active = await this.listActive(options.definition);
    const aggregates = page.flatMap((e) => {
      const header = active.find((h) => h.aggregateId === e[1]);
      return header ? [{ header, after: cursorOf(e) }] : [];
    });
    const last = page.at(-1);
    return { aggregates, ...(entries.length > page.length && last ? { next: cursorOf(last) } : {}) };
  }

  public async listOpen(definition: string): Promise<AggregateHeader[]> {
    return (await this.listActive(definition)).filter((h) => h.status === AggregateStatus.OPEN);
  }

  public async getParameters(definition: string): Promise<RuntimeParameters> {
    return structuredClone(this.parameters.get(definition) ?? {});
  }

  public async setParameters(definition: string, parameters: RuntimeParameters): Promise<void> {
    this.parameters.set(definition, structuredClone(parameters));
  }

  /** The aggregate's record when it is completing under `lease`. */
  private leased(aggregateId: string, lease: string): AggregateRecord | undefined {
    const record = this.headerRecord(aggregateId);
    return record?.header.status === AggregateStatus.COMPLETING && record.header.lease === lease
      ? record
      : undefined;
  }
}

/** A seal's non-empty pack sources, as the DynamoDB store keeps them until the close. */
function sourcesOf(seal: Seal): Record<string, string[]> | undefined {
  const packed = Object.entries(seal.sources ?? {}).filter(([, ids]) => ids.length > 0);
  return packed.length > 0 ? Object.fromEntries(packed.map(([pack, ids]) => [pack, [...ids]])) : undefined;
}

/** An {@link OutputPublisher} that keeps what it was given. */
export class RecordingOutputs implements OutputPublisher {
  public readonly published: { role: OutputRole; message: OutputMessage }[] = [];

  public async publish(role: OutputRole, message: OutputMessage): Promise<void> {
    this.published.push({ role, message: structuredClone(message) });
  }

  /** The messages published to `role`. */
  public to(role: OutputRole): OutputMessage[] {
    return this.published.filter((p) => p.role === role).map((p) => p.message);
  }
}

/** A {@link TimerScheduler} that keeps the timers armed. */
export class RecordingTimers implements TimerScheduler {
  public readonly armed: TimerMessage[] = [];

  public async arm(timer: TimerMessage): Promise<void> {
    this.armed.push(timer);
  }

  public async armAll(timers: readonly TimerMessage[]): Promise<readonly number[]> {
    this.armed.push(...timers);
    return [];
  }
}

/** A {@link RequestSender} that keeps the sub-requests sent. */
export class RecordingSender implements RequestSender {
  public readonly sent: SubRequest[] = [];

  public async send(requests: readonly SubRequest[]): Promise<void> {
    this.sent.push(...requests);
  }
}

/** The fakes of a {@link memoryContext}, to inspect. */
export interface MemoryPorts {
  readonly store: MemoryStateStore;
  readonly outputs: RecordingOutputs;
  readonly timers: RecordingTimers;
  readonly sender: RecordingSender;
  readonly requeued: RawMessage[];
  /** Continuations the control use case sent to the control queue. */
  readonly continued: string[];
  /** The test clock: set `now.at` to move time. */
  readonly now: { at: number };
}

const OWN_QUEUE = 'https://sqs.us-east-1.amazonaws.com/123456789012/fanin-ingress';

/** A use-case context over in-memory ports, with a test clock; `overrides` replace any part. */
export function memoryContext(
  definitions: readonly Definition[],
  overrides: Partial<FaninContext> = {},
): { ctx: FaninContext; ports: MemoryPorts } {
  const ports: MemoryPorts = {
    store: new MemoryStateStore(),
    outputs: new RecordingOutputs(),
    timers: new RecordingTimers(),
    sender: new RecordingSender(),
    requeued: [],
    continued: [],
    now: { at: 1_000_000 },
  };
  const ctx: FaninContext = {
    ...CONTEXT_DEFAULTS,
    store: ports.store,
    outputs: ports.outputs,
    timers: ports.timers,
    sender: ports.sender,
    definitions: new Map(definitions.map((d) => [d.name, d])),
    replies: { replyTo: async () => OWN_QUEUE.replace('ingress', 'reply-0') },
    clock: () => ports.now.at,
    recipients: policyFromQueueUrl(OWN_QUEUE),
    requeue: async (message) => {
      ports.requeued.push(message);
    },
    continueControl: async (body) => {
      ports.continued.push(body);
    },
    ...overrides,
  };
  return { ctx, ports };
}
