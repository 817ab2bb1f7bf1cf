import { retainedBody } from '../engine/aggregation.ts';
import { deadlineOf, decisionDueAt, openDueAt } from '../engine/completion/deadline.ts';
import { failureOf } from '../engine/completion/failures.ts';
import { completionThreshold, completionTrigger, scoreOf } from '../engine/completion/plan.ts';
import { AggregateStatus } from '../engine/constants.ts';
import {
  correlationKey,
  type InboundMessage,
  replyIdOf,
  replyIdSource,
  WireAttribute,
} from '../engine/correlation.ts';
import { type Definition, effectiveParameters } from '../engine/definition.ts';
import { completionStageOf } from '../engine/lifecycle.ts';
import { identifierProblem, MAX_AGGREGATE_ID_BYTES, MAX_KEY_LENGTH } from '../engine/limits.ts';
import { replyShard } from '../engine/members.ts';
import { BadMessageError, CorrelationError, isUnfixable } from '../errors.ts';
import { MetricName, REPLY_FATE_METRICS } from '../observability/metric-names.ts';
import type { AggregateHeader, RawMessage, ReplyToRecord } from '../ports.ts';
import { closeByOf, replyExpiry } from './aggregate-life.ts';
import { resumeCompletion } from './complete.ts';
import { blocksComplete } from './completion-trigger.ts';
import {
  describeError,
  type FaninContext,
  parseJsonBody,
  resolvePayload,
  routeError,
  storable,
} from './context.ts';
import { evaluate } from './evaluate.ts';
import { handleUnknown } from './held.ts';
import { openingDeadline } from './inactivity.ts';
import { AFTER_DEADLINE, fixedReason, publishUnknownOutput, routeLate } from './late.ts';
import { armFirstSnapshot } from './snapshots.ts';
import { expireAggregate } from './timers.ts';

/** The two characters JSON.stringify leaves as they are and SQS refuses in a message. */
const NONCHARACTER = /[\ufffe\uffff]/;

/**
 * A character outside what SQS accepts in a message (#x9, #xA, #xD, #x20 to #xD7FF, #xE000 to
 * #xFFFD, #x10000 to #x10FFFF); with the `u` flag a lone surrogate is one such code point.
 */
const NOT_CARRIED = /[^\t\n\r\u0020-\ud7ff\ue000-\ufffd\u{10000}-\u{10ffff}]/u;

/** A reply, interpreted. */
export interface Reply {
  /** The message as it came, for routing it elsewhere unchanged (a claim-check pointer stays one). */
  readonly raw: RawMessage;
  /** The message with its payload resolved and parsed. */
  readonly inbound: InboundMessage;
  readonly aggregateId: string;
  readonly replyId: string;
  /** The definition the reply names (`fanin-definition`): a claim, checked against its aggregate's. */
  readonly claimed?: Definition;
  /** The message id it first came with (`fanin-origin-message-id` once the distributor moved it). */
  readonly messageId: string;
  /**
   * When it arrived ({@link arrivalOf}: when SQS first accepted it; a held reply: when it was
   * held); else it arrives when it is recorded. Decides whether it came before the deadline
   * (late.ts, onTimeReplies).
   */
  readonly receivedAt?: number;
  /** Kept aside before its aggregate existed and consolidated now (held.ts). */
  readonly held?: boolean;
}

/**
 * When a reply arrived at fanin: when SQS first accepted it (docs/wire-contract.md, "Late
 * replies"), never later than now (a clock of SQS's ahead of this one's takes nothing from the
 * reply). That is its `SentTimestamp`, the same on every redelivery, so a reply whose first
 * handling died before the deadline still arrived before it; on a copy the distributor moved, the
 * time it carries (`fanin-origin-sent-at`) when SQS says a mover sent the copy (`trustedMovers`),
 * and never later than the copy's own. From any other sender that attribute is ignored: a
 * responder could set it. Without a `SentTimestamp`, now.
 *
 * @example
 * arrivalOf({ sentAt: 1_000, attributes: {} }, 5_000, []); // 1000
 * arrivalOf({ sentAt: 9_000, attributes: {} }, 5_000, []); // 5000
 */
export function arrivalOf(
  raw: Pick<RawMessage, 'sentAt' | 'senderId' | 'attributes'>,
  now: number,
  trustedMovers: readonly string[],
): number {
  if (raw.sentAt === undefined) return now;
  const sender = raw.senderId;
  const carried = Number(raw.attributes[WireAttribute.ORIGIN_SENT_AT] || Number.NaN);
  const byMover =
    sender !== undefined && trustedMovers.some((id) => sender === id || sender.startsWith(`${id}:`));
  const sent = byMover && Number.isFinite(carried) ? Math.min(carried, raw.sentAt) : raw.sentAt;
  return Math.min(sent, now);
}

/**
 * Handles a batch of replies from one reply partition.
 *
 * Primary course:
 * 1. interpret each reply (aggregate id, reply id, the definition it names); a bad one goes to
 *    the error output;
 * 2. per aggregate: read its header; judge every reply by the aggregate's *own* definition (a
 *    reply naming another, or a reply id the aggregate never asked for, is bad input);
 * 3. record the replies with one conditional put each — of its own item, or of one pack for the
 *    batch's replies to the aggregate (a duplicate changes nothing) — then read the aggregate back in one consistent query and evaluate completion on that set
 *    (evaluate.ts, which hands a complete aggregate over to complete.ts; a large one is read only
 *    when the completion plan's trigger says the set can be complete: engine/completion/plan.ts);
 * 4. unknown replies are held (or routed at once with an unknown timeout of 0; held.ts); late ones
 *    — not in the member set the seal fixed — go to the late output (late.ts).
 *
 * @returns the message ids that failed and must be redelivered.
 */
export async function handleReplies(
  ctx: FaninContext,
  messages: readonly RawMessage[],
): Promise<Set<string>> {
  const failed = new Set<string>();
  const groups = new Map<string, Reply[]>();
  for (const raw of messages) {
    try {
      const reply = await interpret(ctx, raw);
      const group = groups.get(reply.aggregateId) ?? [];
      group.push(reply);
      groups.set(reply.aggregateId, group);
    } catch (error) {
      if (!isUnfixable(error)) {
        ctx.log.error('reply failed; it will be redelivered', {
          messageId: raw.messageId,
          error: describeError(error),
        });
        failed.add(raw.messageId);
        continue;
      }
      await routeError(ctx, 'reply', raw, error.message).catch(() => failed.add(raw.messageId));
    }
  }
  await Promise.all(
    [...groups.entries()].map(async ([aggregateId, replies]) => {
      try {
        await handleGroup(ctx, aggregateId, replies);
      } catch (error) {
        ctx.log.error('replies of an aggregate failed', {
          aggregateId,
          replies: replies.length,
          error: describeError(error),
        });
        for (const reply of replies) {
          // A reply that can never be kept (too large, no payload bucket) is bad input, not a retry.
          if (isUnfixable(error))
            await routeError(ctx, 'reply', reply.raw, error.message).catch(() =>
              failed.add(reply.raw.messageId),
            );
          else failed.add(reply.raw.messageId);
        }
      }
    }),
  );
  return failed;
}

async function interpret(ctx: FaninContext, original: RawMessage): Promise<Reply> {
  const raw = await resolvePayload(ctx, original);
  const bytes = Buffer.byteLength(raw.body);
  if (!ctx.payloads && bytes > ctx.maxReplyBytes) {
    throw new BadMessageError(
      `reply body is ${bytes} bytes; at most ${ctx.maxReplyBytes} are kept without a payload bucket`,
    );
  }
  const inbound: InboundMessage = {
    body: parseJsonBody(raw),
    attributes: raw.attributes,
    messageId: raw.messageId,
  };
  const name = raw.attributes[WireAttribute.DEFINITION];
  const claimed = name === undefined ? undefined : ctx.definitions.get(name);
  if (name !== undefined && !claimed) throw new BadMessageError(`unknown definition "${name}"`);
  let aggregateId: string;
  if (claimed?.mode === 'self-starting') {
    aggregateId = selfStartingId(claimed, await correlationKey(claimed, inbound));
  } else if (claimed) {
    aggregateId = await correlationKey(claimed, inbound);
  } else {
    const id = raw.attributes[WireAttribute.AGGREGATE_ID];
    if (!id) {
      throw new CorrelationError(
        `missing correlation: the reply has neither a ${WireAttribute.AGGREGATE_ID} nor a ${WireAttribute.DEFINITION} attribute`,
      );
    }
    aggregateId = id;
  }
  const idBytes = Buffer.byteLength(aggregateId);
  if (idBytes > MAX_AGGREGATE_ID_BYTES) {
    throw new BadMessageError(
      `aggregate id is ${idBytes} bytes; at most ${MAX_AGGREGATE_ID_BYTES} are accepted`,
    );
  }
  const replyId = await replyIdOf(claimed, inbound);
  // An id is carried in SQS messages (timers, outputs) and in keys: a character SQS refuses (only
  // a body's JSON escapes can hold one) would fail every delivery of this reply into the DLQ, and
  // a lone surrogate has no UTF-8 form (two of them would be one id in DynamoDB).
  assertCarried('aggregate id', aggregateId);
  assertCarried(replyIdSource(claimed, inbound), replyId);
  // JSON can escape U+FFFE and U+FFFF (SQS carries the escape), but JSON.stringify writes them
  // back as they are, and SQS refuses them: a result, snapshot or output holding this body could
  // never be sent, and the aggregate would stay completing. Refused here, while it is one reply.
  const noncharacter = NONCHARACTER.exec(JSON.stringify(inbound.body) ?? '')?.[0];
  if (noncharacter !== undefined)
    throw new BadMessageError(
      `reply body holds U+${(noncharacter.codePointAt(0) ?? 0).toString(16).toUpperCase()}, which no output can carry (SQS refuses U+FFFE and U+FFFF)`,
    );
  const messageId = raw.attributes[WireAttribute.ORIGIN_MESSAGE_ID] || raw.messageId;
  // Kept on every item of the reply: a producer's own origin id is bounded like any identifier.
  const originProblem = identifierProblem(messageId, MAX_KEY_LENGTH);
  if (originProblem) throw new BadMessageError(`${WireAttribute.ORIGIN_MESSAGE_ID} ${originProblem}`);
  return {
    raw: original,
    inbound,
    aggregateId,
    replyId,
    messageId,
    receivedAt: arrivalOf(original, ctx.clock(), ctx.trustedMovers ?? []),
    ...(claimed ? { claimed } : {}),
  };
}

/** The aggregate id of a self-starting aggregate: its definition and correlation key. */
export function selfStartingId(definition: Definition, key: string): string {
  return `${definition.name}:${key}`;
}

/**
 * A reply as the state store keeps it: the part of its body the algorithm needs, and its score.
 * One too large for a DynamoDB item is stored in S3 (under a key derived from its ids, so a retry
 * writes the same object) and referenced; without a payload bucket it is refused to the error output.
 */
async function recordable(
  ctx: FaninContext,
  definition: Definition,
  header: AggregateHeader,
  reply: Reply,
  receivedAt: number,
): Promise<ReplyToRecord> {
  const aggregateId = header.aggregateId;
  const failure = failureOf(reply.raw.attributes);
  // A failed reply keeps its whole body (the failure's detail) and has no score.
  const body = failure === undefined ? retainedBody(definition, reply.inbound.body) : reply.inbound.body;
  const json = JSON.stringify(body ?? null);
  const score =
    failure === undefined ? await scoreOf(definition, reply.inbound).catch(() => undefined) : undefined;
  return {
    replyId: reply.replyId,
    receivedAt: reply.receivedAt ?? receivedAt,
    expiresAt: replyExpiry(ctx, definition, header),
    messageId: reply.messageId,
    ...(reply.claimed ? { definition: reply.claimed.name } : {}),
    ...(score !== undefined ? { score } : {}),
    ...(failure !== undefined ? { failure } : {}),
    ...(await storable(ctx, `reply\u0000${aggregateId}\u0000${reply.replyId}`, json, 'reply body')),
  };
}

async function handleGroup(ctx: FaninContext, aggregateId: string, replies: Reply[]): Promise<void> {
  // What is judged before recording (definition, expected ids, shards) never changes once the
  // header exists, and the status is read again, consistently, after the puts: an eventually
  // consistent read is enough here unless it finds nothing.
  let header =
    (await ctx.store.getHeader(aggregateId, { consistent: false })) ??
    (await ctx.store.getHeader(aggregateId));
  if (!header) {
    const starter = replies.find((r) => r.claimed?.mode === 'self-starting')?.claimed;
    if (!starter) {
      for (const reply of replies) await handleUnknown(ctx, reply);
      return;
    }
    header = await openSelfStarting(ctx, starter, aggregateId, replies[0]?.replyId ?? '');
  }
  await judgeAndRecord(ctx, header, replies);
}

/** Opens a self-starting aggregate with its first reply (seed 002); the deadline timer is armed once. */
async function openSelfStarting(
  ctx: FaninContext,
  definition: Definition,
  aggregateId: string,
  openedBy: string,
): Promise<AggregateHeader> {
  const now = ctx.clock();
  const params = effectiveParameters(definition, await ctx.store.getParameters(definition.name));
  const deadline = openingDeadline(params, now);
  const opened = await ctx.store.openAggregate({
    aggregateId,
    definition: definition.name,
    status: AggregateStatus.OPEN,
    received: 0,
    lateCount: 0,
    openedAt: now,
    params,
    openedBy,
    shards: definition.writeShards,
    closeBy: closeByOf(definition, now, deadlineOf(params, now)),
    ...(deadline !== undefined ? { deadline } : {}),
  });
  if (opened.created) ctx.metrics?.count(MetricName.AGGREGATES_OPENED, definition.name);
  // Only the invocation that opened it arms the timer; the sweeper's `due` entry covers a crash here.
  if (opened.created && deadline !== undefined)
    await ctx.timers.arm(
      { kind: 'deadline', aggregateId, dueAt: decisionDueAt(opened.header) ?? deadline },
      now,
    );
  if (opened.created) await armFirstSnapshot(ctx, definition, opened.header, now);
  return opened.header;
}

/**
 * Judges replies by their aggregate's own definition, then records them. A reply that names
 * another definition, or a reply id the aggregate never asked for, goes to the error output:
 * counting it would let any sender complete any aggregate. Held replies are consolidated through
 * here too (held.ts), once their aggregate exists.
 */
export async function judgeAndRecord(
  ctx: FaninContext,
  header: AggregateHeader,
  replies: readonly Reply[],
  onSettled: (reply: Reply) => Promise<void> = async () => undefined,
): Promise<void> {
  const definition = ctx.definitions.get(header.definition);
  if (!definition)
    throw new Error(`aggregate ${header.aggregateId} names unknown definition ${header.definition}`);
  const accepted: Reply[] = [];
  const originals = new Map<Reply, Reply>();
  for (const original of replies) {
    let reply: Reply;
    try {
      reply = await identifiedBy(definition, original);
    } catch (error) {
      if (!isUnfixable(error)) throw error;
      await routeError(ctx, 'reply', original.raw, error.message);
      await onSettled(original);
      continue;
    }
    const refusal = refusalOf(definition, header, reply);
    if (refusal) {
      await routeError(ctx, 'reply', reply.raw, refusal);
      await onSettled(original);
    } else {
      accepted.push(reply);
      originals.set(reply, original);
    }
  }
  if (accepted.length === 0) return;
  await recordAndEvaluate(ctx, definition, header, accepted);
  for (const reply of accepted) await onSettled(originals.get(reply) ?? reply);
}

/**
 * A reply identified as its aggregate's definition says. A reply that names its aggregate by
 * `fanin-aggregate-id` alone was given an id before its definition was known (its `fanin-reply-id`,
 * else its transport identity); when the definition reads reply ids from the message
 * (`replyId`), that id is the one duplicates are recognised by, whichever way the reply found
 * its aggregate — else one bid sent twice would count twice.
 */
async function identifiedBy(definition: Definition, reply: Reply): Promise<Reply> {
  if (reply.claimed || !definition.replyId) return reply;
  const replyId = await replyIdOf(definition, reply.inbound);
  assertCarried(replyIdSource(definition, reply.inbound), replyId);
  return replyId === reply.replyId ? reply : { ...reply, replyId };
}

/** Refuses an id SQS could not carry in the messages that name it (timers, outputs). */
function assertCarried(what: string, id: string): void {
  const bad = NOT_CARRIED.exec(id)?.[0];
  if (bad !== undefined)
    throw new BadMessageError(
      `${what} holds U+${(bad.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}, which SQS cannot carry (a control character, a lone surrogate, U+FFFE or U+FFFF)`,
    );
}

function refusalOf(definition: Definition, header: AggregateHeader, reply: Reply): string | undefined {
  if (reply.claimed && reply.claimed.name !== header.definition) {
    return `reply names definition "${reply.claimed.name}" but aggregate "${header.aggregateId}" is of definition "${header.definition}"`;
  }
  const indexed = definition.fanOut?.type === 'splitter' || definition.fanOut?.type === 'recipient-list';
  if (indexed && header.expected !== undefined && !isIndexBelow(reply.replyId, header.expected)) {
    return `reply id "${reply.replyId}" is not one of aggregate "${header.aggregateId}"'s reply ids (0 to ${header.expected - 1}; responders echo ${WireAttribute.REPLY_ID})`;
  }
  return undefined;
}

function isIndexBelow(replyId: string, expected: number): boolean {
  return /^(0|[1-9]\d{0,9})$/.test(replyId) && Number(replyId) < expected;
}

async function recordAndEvaluate(
  ctx: FaninContext,
  definition: Definition,
  header: AggregateHeader,
  batch: readonly Reply[],
): Promise<void> {
  let replies = batch;
  if (completionStageOf(header) !== 'open') {
    const duplicates = replies.filter((r) => header.members?.includes(r.replyId)).length;
    ctx.metrics?.count(MetricName.REPLIES_DUPLICATE, definition.name, duplicates);
    await settle(ctx, definition, header, replies);
    return;
  }
  const now = ctx.clock();
  let records = await Promise.all(replies.map((r) => recordable(ctx, definition, header, r, now)));
  // Several replies of this aggregate in the batch share one item (a pack): the read below counts
  // each reply id once, whichever items hold it.
  const fates = await ctx.store.putReplies(header.aggregateId, records, header.shards);
  for (const fate of fates)
    if (fate !== 'unknown') ctx.metrics?.count(REPLY_FATE_METRICS[fate], definition.name);
  // A reply reported unknown before the aggregate opened (held.ts, publishUnknown) is never
  // counted, and owes the unknown output: its first send may have failed after its fate was fixed
  // (simulation seed 98). Sent again under the same id before this delivery is acknowledged; the
  // rest of the batch goes on without it.
  const owedReplies = replies.filter((_, i) => fates[i] === 'unknown');
  const owed = new Set(owedReplies.map((r) => r.replyId));
  if (owed.size > 0) {
    for (const reply of owedReplies)
      await publishUnknownOutput(ctx, {
        aggregateId: header.aggregateId,
        replyId: reply.replyId,
        message: { ...reply.raw, messageId: reply.messageId },
        definition: reply.claimed?.name,
        shards: [header.shards ?? 1],
      });
    replies = replies.filter((r) => !owed.has(r.replyId));
    records = records.filter((r) => !owed.has(r.replyId));
    if (replies.length === 0) return;
  }
  // Past the deadline (its timer lost, or not yet fired), the reply path does what the timer
  // would: the deadline decides on the replies received before it (late.ts, onTimeReplies; a
  // reply received at or after it is never a member, whoever seals), and the completer routes the
  // others late. An inactivity deadline that on-time replies moved on leaves it open: evaluated
  // below. (A held reply arrived before its aggregate existed; a batch of them is consolidated by
  // the deadline's own handling, which must not be called again.)
  const due = openDueAt(header);
  const afterDeadline = new Set(
    due === undefined ? [] : records.filter((r) => r.receivedAt >= due).map((r) => r.replyId),
  );
  const decides = decisionDueAt(header);
  if (decides !== undefined && ctx.clock() >= decides && !replies.some((r) => r.held)) {
    await expireAggregate(ctx, header.aggregateId, false);
    const current = await ctx.store.getHeader(header.aggregateId);
    if (!current) throw new Error(`aggregate ${header.aggregateId} vanished while open`);
    if (completionStageOf(current) !== 'open') {
      await settle(ctx, definition, current, replies, afterDeadline);
      return;
    }
  }
  // A failed reply can end any aggregate at once (beyond the tolerance), so its batch reads the
  // set whatever its trigger says; but it still leaves the trigger's mark (a block found complete,
  // its count added): a later batch learns "all arrived" from those marks alone, and a block
  // completed by a failed reply that left none would never be seen complete.
  const failures = records.some((r) => r.failure !== undefined);
  const trigger = completionTrigger(definition, header);
  if (trigger !== 'read-all') {
    // The header read after the puts keeps the argument of the seal (docs/data-plane.md); the
    // reply set is read only when these replies could complete the aggregate.
    const current = await ctx.store.getHeader(header.aggregateId);
    if (!current) throw new Error(`aggregate ${header.aggregateId} vanished while open`);
    if (completionStageOf(current) !== 'open') {
      await settle(ctx, definition, current, replies);
      return;
    }
    if (!(await triggered(ctx, definition, current, records, trigger)) && !failures) return;
  }
  // Read back after the puts: if the header is still open now, every reply above is in the set
  // any later seal fixes (the seal reads after it); if not, the member set says which are in.
  const snapshot = await ctx.store.readAggregate(header.aggregateId);
  const after = snapshot.header;
  if (!after) throw new Error(`aggregate ${header.aggregateId} vanished while open`);
  if (completionStageOf(after) !== 'open') {
    await settle(ctx, definition, after, replies);
    return;
  }
  const result = await evaluate(ctx, definition, snapshot);
  if (result === 'lost') {
    // Another invocation sealed it between our read and our seal: its member set decides.
    const sealed = await ctx.store.getHeader(header.aggregateId);
    if (sealed) await settle(ctx, definition, sealed, replies);
  }
}

/**
 * Whether a batch's recorded replies can have completed a large aggregate, by its trigger: each
 * batch marks the blocks it completed, or adds its size to the counter, before this is answered.
 */
async function triggered(
  ctx: FaninContext,
  definition: Definition,
  current: AggregateHeader,
  records: readonly ReplyToRecord[],
  trigger: 'never' | 'blocks' | 'counter',
): Promise<boolean> {
  if (trigger === 'never') return false;
  if (trigger === 'blocks') return blocksComplete(ctx, definition, current, records);
  // One write per batch, not per reply: a trigger only (a redelivery may count twice, so the read
  // after it decides); never under the truth, since every put is followed by its add.
  const total = await ctx.store.addToCounter(
    current.aggregateId,
    records.length,
    replyExpiry(ctx, definition, current),
    { shard: replyShard(records[0]?.replyId ?? '', current.shards ?? 1), shards: current.shards ?? 1 },
  );
  return total >= completionThreshold(definition, current);
}

/**
 * Replies to an aggregate that is no longer open: members of its sealed set are duplicates
 * (nothing to do), the others are late (`afterDeadline`: received after its deadline). A
 * completing aggregate whose owner's lease ran out is resumed on the way.
 */
async function settle(
  ctx: FaninContext,
  definition: Definition,
  header: AggregateHeader,
  replies: readonly Reply[],
  afterDeadline: ReadonlySet<string> = new Set(),
): Promise<void> {
  const members = new Set(header.members ?? []);
  for (const reply of replies) {
    if (!members.has(reply.replyId)) {
      await routeLate(
        ctx,
        definition,
        header,
        reply.replyId,
        { messageId: reply.messageId, body: reply.raw.body, attributes: reply.raw.attributes },
        afterDeadline.has(reply.replyId) ? AFTER_DEADLINE : fixedReason(header, reply.receivedAt),
      );
    }
  }
  if (completionStageOf(header) === 'completing') await resumeCompletion(ctx, header);
}
