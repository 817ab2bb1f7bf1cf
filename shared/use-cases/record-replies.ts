import { retainedBody } from '../engine/aggregation.ts';
import { nextDueAt, openDueAt } from '../engine/completion/deadline.ts';
import { failureOf } from '../engine/completion/failures.ts';
import { completionThreshold, completionTrigger } from '../engine/completion/plan.ts';
import { scoreOf } from '../engine/completion/score.ts';
import { type InboundMessage, replyIdOf, replyIdSource, WireAttribute } from '../engine/correlation.ts';
import type { Definition } from '../engine/definition.ts';
import { completionStageOf } from '../engine/lifecycle.ts';
import { assertCarried } from '../engine/limits.ts';
import { isRecipientIndex, replyShard } from '../engine/members.ts';
import { hasRecipientDeadlines, ownDeadline } from '../engine/responders.ts';
import { isUnfixable } from '../errors.ts';
import { MetricName, REPLY_FATE_METRICS } from '../observability/metric-names.ts';
import type { AggregateHeader, RawMessage, ReplyToRecord } from '../ports.ts';
import { replyExpiry } from './aggregate-life.ts';
import { resumeCompletion } from './complete.ts';
import { blocksComplete } from './completion-trigger.ts';
import type { FaninContext } from './context.ts';
import { routeError } from './error-output.ts';
import { evaluate } from './evaluate.ts';
import { keepRetriedFailures } from './failed-replies.ts';
import {
  AFTER_DEADLINE,
  afterRecipientDeadline,
  fixedReason,
  publishUnknownOutput,
  routeLate,
} from './late.ts';
import { storable } from './stored-payloads.ts';

/**
 * Recording replies in their aggregate: each judged by the aggregate's own definition, put with
 * one conditional write (its own item, or a pack of the batch's replies), then the aggregate read
 * back and its completion evaluated (evaluate.ts), or the replies settled as duplicates or late
 * when it is no longer open. The reply handler (replies.ts) and the consolidation of held replies
 * (held.ts) both record through here.
 */

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
 * The deadline's own handling (timers.ts, `deadlinePassed`), run when recorded replies find their
 * aggregate's decision time passed: handed in by the caller, so that recording, held replies and
 * the deadline, which call one another, do not import one another in a circle.
 */
export type AtDeadline = (ctx: FaninContext, aggregateId: string) => Promise<void>;

/** What a caller of {@link judgeAndRecord} adds to the recording. */
export interface RecordOptions {
  /** Called for each reply once it is settled: recorded, or routed to the error output. */
  readonly onSettled?: (reply: Reply) => Promise<void>;
  /**
   * What to do when the replies find the decision time passed. Needed unless every reply is a
   * held one (a batch of them is consolidated by the deadline's own handling).
   */
  readonly atDeadline?: AtDeadline;
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
  options: RecordOptions = {},
): Promise<void> {
  const { onSettled = async () => undefined, atDeadline } = options;
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
  // Failed replies whose recipients a round of retries asks again are kept, not recorded.
  const recorded = await keepRetriedFailures(ctx, header, accepted);
  if (recorded.length > 0) await recordAndEvaluate(ctx, definition, header, recorded, atDeadline);
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

function refusalOf(definition: Definition, header: AggregateHeader, reply: Reply): string | undefined {
  if (reply.claimed && reply.claimed.name !== header.definition) {
    return `reply names definition "${reply.claimed.name}" but aggregate "${header.aggregateId}" is of definition "${header.definition}"`;
  }
  const indexed = definition.fanOut?.type === 'splitter' || definition.fanOut?.type === 'recipient-list';
  if (indexed && header.expected !== undefined && !isRecipientIndex(reply.replyId, header.expected)) {
    return `reply id "${reply.replyId}" is not one of aggregate "${header.aggregateId}"'s reply ids (0 to ${header.expected - 1}; responders echo ${WireAttribute.REPLY_ID})`;
  }
  return undefined;
}

async function recordAndEvaluate(
  ctx: FaninContext,
  definition: Definition,
  header: AggregateHeader,
  batch: readonly Reply[],
  atDeadline: AtDeadline | undefined,
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
  await routePastOwnDeadline(ctx, definition, header, replies, records, fates);
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
  const decides = nextDueAt(header);
  if (decides !== undefined && ctx.clock() >= decides && !replies.some((r) => r.held)) {
    if (!atDeadline)
      throw new Error(`replies to ${header.aggregateId} found its deadline passed with no handling for it`);
    await atDeadline(ctx, header.aggregateId);
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
 * Replies this batch recorded that came at or after their recipient's own deadline (before the
 * aggregate's: engine/responders.ts, ownDeadline) are late at once, though the aggregate stays
 * open: marked late, owing their late output until it is sent (so that the completer sends it if
 * this invocation dies first, as it sends its own: late.ts, routeLate), and routed. Judged again
 * on a consistent read of the header when the one read before the put finds any: a heartbeat may
 * have moved a deadline since, and a deadline only moves later. A reply past the aggregate's own
 * deadline is left to the deadline's handling, and one to an aggregate no longer open to its seal.
 */
async function routePastOwnDeadline(
  ctx: FaninContext,
  definition: Definition,
  header: AggregateHeader,
  replies: readonly Reply[],
  records: readonly ReplyToRecord[],
  fates: readonly string[],
): Promise<void> {
  if (!hasRecipientDeadlines(header)) return;
  const past = (h: AggregateHeader, replyId: string, receivedAt: number) => {
    const own = ownDeadline(h, replyId);
    return own !== undefined && receivedAt >= own;
  };
  const candidates = replies.flatMap((reply, i) => {
    const record = records[i];
    return fates[i] === 'recorded' && record && past(header, reply.replyId, record.receivedAt)
      ? [{ reply, receivedAt: record.receivedAt }]
      : [];
  });
  if (candidates.length === 0) return;
  const current = await ctx.store.getHeader(header.aggregateId);
  if (!current || completionStageOf(current) !== 'open') return;
  for (const { reply, receivedAt } of candidates) {
    if (!past(current, reply.replyId, receivedAt)) continue;
    await routeLate(
      ctx,
      definition,
      current,
      reply.replyId,
      { messageId: reply.messageId, body: reply.raw.body, attributes: reply.raw.attributes },
      afterRecipientDeadline(current, { replyId: reply.replyId, receivedAt }),
      true,
    );
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
        afterDeadline.has(reply.replyId)
          ? AFTER_DEADLINE
          : ((reply.receivedAt !== undefined
              ? afterRecipientDeadline(header, { replyId: reply.replyId, receivedAt: reply.receivedAt })
              : undefined) ?? fixedReason(header, reply.receivedAt)),
      );
    }
  }
  if (completionStageOf(header) === 'completing') await resumeCompletion(ctx, header);
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
