import { retainedBody } from '../engine/aggregation.ts';
import { deadlineOf, meetsThreshold, scoreOf } from '../engine/completion.ts';
import { AggregateStatus, Strategy } from '../engine/constants.ts';
import { correlationKey, type InboundMessage, replyIdOf, WireAttribute } from '../engine/correlation.ts';
import { type Definition, effectiveParameters, stateLifeSeconds } from '../engine/definition.ts';
import { failureOf } from '../engine/failures.ts';
import { completionStateOf } from '../engine/lifecycle.ts';
import { REPLY_BLOCK_SIZE, replyShard } from '../engine/members.ts';
import { thresholdRuleOf } from '../engine/rules.ts';
import { BadMessageError, CorrelationError, isUnfixable } from '../errors.ts';
import { MetricName, REPLY_FATE_METRICS, UNKNOWN_DEFINITION } from '../observability/metric-names.ts';
import type {
  AggregateHeader,
  AggregateSnapshot,
  HeldReply,
  RawMessage,
  ReplyToRecord,
  StoredReply,
} from '../ports.ts';
import { QueueRole } from '../topology/topology.ts';
import { completeAggregate, resumeCompletion } from './complete.ts';
import { decideOnReplies } from './completion-rules.ts';
import {
  type FaninContext,
  loadStored,
  parseJsonBody,
  redact,
  resolvePayload,
  routeError,
  storable,
} from './context.ts';
import { openingDeadline } from './inactivity.ts';
import { armFirstSnapshot } from './snapshots.ts';

/** The longest aggregate id fanin accepts, in bytes (DynamoDB keys are at most 2,048). */
export const MAX_AGGREGATE_ID_BYTES = 1024;

/** A reply, interpreted. */
interface Reply {
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
}

/**
 * Handles a batch of replies from one reply partition.
 *
 * Primary course:
 * 1. interpret each reply (aggregate id, reply id, the definition it names); a bad one goes to
 *    the error output;
 * 2. per aggregate: read its header; judge every reply by the aggregate's *own* definition (a
 *    reply naming another, or a reply id the aggregate never asked for, is bad input);
 * 3. record each reply with one conditional put of its own item (a duplicate changes nothing),
 *    then read the aggregate back in one consistent query and evaluate completion on that set;
 * 4. unknown replies are held (or routed at once with an unknown timeout of 0); late ones — not in
 *    the member set the seal fixed — go to the late output.
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
  const messageId = raw.attributes[WireAttribute.ORIGIN_MESSAGE_ID] || raw.messageId;
  return { raw: original, inbound, aggregateId, replyId, messageId, ...(claimed ? { claimed } : {}) };
}

/** The aggregate id of a self-starting aggregate: its definition and correlation key. */
export function selfStartingId(definition: Definition, key: string): string {
  return `${definition.name}:${key}`;
}

/** Seconds from now after which a reply item may expire: beyond any life its aggregate can have. */
export function replyExpiry(ctx: FaninContext, definition: Definition): number {
  return (
    Math.ceil(ctx.clock() / 1000) + stateLifeSeconds(definition, Math.ceil(ctx.completionLeaseMs / 1000))
  );
}

/**
 * A reply as the state store keeps it: the part of its body the algorithm needs, and its score.
 * One too large for a DynamoDB item is stored in S3 (under a key derived from its ids, so a retry
 * writes the same object) and referenced; without a payload bucket it is refused to the error output.
 */
async function recordable(
  ctx: FaninContext,
  definition: Definition,
  aggregateId: string,
  reply: Reply,
  receivedAt: number,
): Promise<ReplyToRecord> {
  const failure = failureOf(reply.raw.attributes);
  // A failed reply keeps its whole body (the failure's detail) and has no score.
  const body = failure === undefined ? retainedBody(definition, reply.inbound.body) : reply.inbound.body;
  const json = JSON.stringify(body ?? null);
  const score =
    failure === undefined ? await scoreOf(definition, reply.inbound).catch(() => undefined) : undefined;
  return {
    replyId: reply.replyId,
    receivedAt,
    expiresAt: replyExpiry(ctx, definition),
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
    await ctx.timers.arm({ kind: 'deadline', aggregateId, dueAt: deadline }, now);
  if (opened.created) await armFirstSnapshot(ctx, definition, opened.header, now);
  return opened.header;
}

/** When the sweeper ends an aggregate whatever its strategy: its allowed life, and never before its deadline. */
export function closeByOf(definition: Definition, openedAt: number, deadline: number | undefined): number {
  return Math.max(deadline ?? 0, openedAt + definition.maxOpenSeconds * 1000);
}

/**
 * Judges replies by their aggregate's own definition, then records them. A reply that names
 * another definition, or a reply id the aggregate never asked for, goes to the error output:
 * counting it would let any sender complete any aggregate.
 */
async function judgeAndRecord(
  ctx: FaninContext,
  header: AggregateHeader,
  replies: readonly Reply[],
  onSettled: (reply: Reply) => Promise<void> = async () => undefined,
): Promise<void> {
  const definition = ctx.definitions.get(header.definition);
  if (!definition)
    throw new Error(`aggregate ${header.aggregateId} names unknown definition ${header.definition}`);
  const accepted: Reply[] = [];
  for (const reply of replies) {
    const refusal = refusalOf(definition, header, reply);
    if (refusal) {
      await routeError(ctx, 'reply', reply.raw, refusal);
      await onSettled(reply);
    } else accepted.push(reply);
  }
  if (accepted.length === 0) return;
  await recordAndEvaluate(ctx, definition, header, accepted);
  for (const reply of accepted) await onSettled(reply);
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
  replies: readonly Reply[],
): Promise<void> {
  if (completionStateOf(header) !== 'open') {
    const duplicates = replies.filter((r) => header.members?.includes(r.replyId)).length;
    ctx.metrics?.count(MetricName.REPLIES_DUPLICATE, definition.name, duplicates);
    await settle(ctx, definition, header, replies);
    return;
  }
  const now = ctx.clock();
  const records = await Promise.all(
    replies.map((r) => recordable(ctx, definition, header.aggregateId, r, now)),
  );
  await Promise.all(
    records.map((record) =>
      ctx.store
        .putReply(header.aggregateId, record, header.shards)
        .then((fate) => ctx.metrics?.count(REPLY_FATE_METRICS[fate], definition.name)),
    ),
  );
  // A failed reply can end any aggregate at once (beyond the tolerance): the set is read.
  const trigger = records.some((r) => r.failure !== undefined)
    ? 'read-all'
    : completionTrigger(definition, header);
  if (trigger !== 'read-all') {
    // The header read after the puts keeps the argument of the seal (docs/data-plane.md); the
    // reply set is read only when these replies could complete the aggregate.
    const current = await ctx.store.getHeader(header.aggregateId);
    if (!current) throw new Error(`aggregate ${header.aggregateId} vanished while open`);
    if (completionStateOf(current) !== 'open') {
      await settle(ctx, definition, current, replies);
      return;
    }
    if (trigger === 'never') return;
    if (trigger === 'blocks' && !(await blocksComplete(ctx, definition, current, records))) return;
    if (trigger === 'counter') {
      // One write per batch, not per reply: a trigger only (a redelivery may count twice, so the
      // read below decides); never under the truth, since every put is followed by its add.
      const total = await ctx.store.addToCounter(
        header.aggregateId,
        records.length,
        replyExpiry(ctx, definition),
        { shard: replyShard(records[0]?.replyId ?? '', header.shards ?? 1), shards: header.shards ?? 1 },
      );
      if (total < completionThreshold(definition, current)) return;
    }
  }
  // Read back after the puts: if the header is still open now, every reply above is in the set
  // any later seal fixes (the seal reads after it); if not, the member set says which are in.
  const snapshot = await ctx.store.readAggregate(header.aggregateId);
  const after = snapshot.header;
  if (!after) throw new Error(`aggregate ${header.aggregateId} vanished while open`);
  if (completionStateOf(after) !== 'open') {
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

/** Fan-outs above this many index replies detect "all arrived" by blocks instead of reading every reply. */
export const LARGE_FAN_OUT = 128;

/**
 * When a batch of replies needs the whole reply set read:
 * - `never`: no reply can complete the aggregate (strategy `external`, or `timeout` that waits
 *   for its deadline whatever arrives) — only the header is read;
 * - `blocks`: a large splitter or recipient-list fan-out waiting for all its replies — the set is
 *   read only once every block of reply ids is in (see {@link blocksComplete}), so reads stay
 *   proportional to the fan-out instead of growing with its square;
 * - `counter`: any other large aggregate completed by a count — one counter update per batch (not
 *   per reply) says when the set is worth reading;
 * - `read-all`: anything else.
 */
function completionTrigger(
  definition: Definition,
  header: AggregateHeader,
): 'never' | 'blocks' | 'counter' | 'read-all' {
  const completion = definition.completion;
  if (completion.strategy === Strategy.EXTERNAL) return 'never';
  if (completion.strategy === Strategy.TIMEOUT && !completion.completeWhenAllArrived) return 'never';
  const indexed = definition.fanOut?.type === 'splitter' || definition.fanOut?.type === 'recipient-list';
  const waitsForAll =
    completion.strategy === Strategy.ALL ||
    (completion.strategy === Strategy.TIMEOUT && completion.completeWhenAllArrived);
  const large = completionThreshold(definition, header) > LARGE_FAN_OUT;
  if (large && waitsForAll && indexed) return 'blocks';
  if (large && (waitsForAll || completion.strategy === Strategy.COUNT)) return 'counter';
  return 'read-all';
}

/** How many replies complete the aggregate by count (its expected count, or the strategy's N). */
function completionThreshold(definition: Definition, header: AggregateHeader): number {
  const expected = header.expected ?? Number.POSITIVE_INFINITY;
  if (definition.completion.strategy === Strategy.COUNT)
    return Math.min(expected, header.params.count ?? definition.completion.count);
  return header.expected ?? 0;
}

/**
 * Whether every block of a large fan-out's reply ids is in. Each batch reads only the blocks its
 * replies belong to (one range query each); a block found complete is marked with a tiny item,
 * and only then are the marks counted. Every reply's put comes before its own block read, so the
 * last reply of the last block always finds every block marked (or a racing handler does).
 */
async function blocksComplete(
  ctx: FaninContext,
  definition: Definition,
  header: AggregateHeader,
  records: readonly ReplyToRecord[],
): Promise<boolean> {
  const expected = header.expected as number;
  const blocks = new Set(records.map((r) => Math.floor(Number(r.replyId) / REPLY_BLOCK_SIZE)));
  let marked = false;
  for (const block of blocks) {
    const first = block * REPLY_BLOCK_SIZE;
    const last = Math.min(expected, first + REPLY_BLOCK_SIZE) - 1;
    if ((await ctx.store.countRange(header.aggregateId, first, last, header.shards)) < last - first + 1)
      continue;
    await ctx.store.markBlockComplete(header.aggregateId, block, replyExpiry(ctx, definition));
    marked = true;
  }
  if (!marked) return false;
  return (await ctx.store.countCompleteBlocks(header.aggregateId)) >= Math.ceil(expected / REPLY_BLOCK_SIZE);
}

/**
 * Replies to an aggregate that is no longer open: members of its sealed set are duplicates
 * (nothing to do), the others are late. A completing aggregate whose owner's lease ran out is
 * resumed on the way.
 */
async function settle(
  ctx: FaninContext,
  definition: Definition,
  header: AggregateHeader,
  replies: readonly Reply[],
): Promise<void> {
  const members = new Set(header.members ?? []);
  for (const reply of replies) {
    if (!members.has(reply.replyId)) {
      await routeLate(ctx, definition, header, reply.replyId, {
        messageId: reply.messageId,
        body: reply.raw.body,
        attributes: reply.raw.attributes,
      });
    }
  }
  if (completionStateOf(header) === 'completing') await resumeCompletion(ctx, header);
}

/** The completion state of an aggregate as read: its valid replies counted, its best score. */
export function completionState(definition: Definition, snapshot: AggregateSnapshot) {
  const header = snapshot.header as AggregateHeader;
  const replies = validReplies(header, snapshot.replies);
  let best: number | undefined;
  const threshold = thresholdRuleOf(definition.completion);
  if (threshold !== undefined) {
    const { direction } = threshold;
    for (const reply of replies) {
      if (reply.score === undefined) continue;
      if (best === undefined || meetsThreshold(direction, reply.score, best)) best = reply.score;
    }
  }
  return {
    state: {
      received: replies.length,
      failed: replies.filter((r) => r.failure !== undefined).length,
      params: header.params,
      ...(header.expected !== undefined ? { expected: header.expected } : {}),
    },
    best,
  };
}

/** The replies that count toward an aggregate: not found late, and not naming another definition. */
export function validReplies(header: AggregateHeader, replies: readonly StoredReply[]): StoredReply[] {
  return replies.filter((r) => !r.late && (r.definition === undefined || r.definition === header.definition));
}

/**
 * Evaluates completion on an aggregate as read in one consistent query. The decision is taken on
 * the whole set (a score threshold on the best score so far), so it never depends on which
 * invocation read last.
 */
export async function evaluate(
  ctx: FaninContext,
  definition: Definition,
  snapshot: AggregateSnapshot,
): Promise<'completed' | 'waiting' | 'lost'> {
  const header = snapshot.header;
  if (!header) return 'waiting';
  const stage = completionStateOf(header);
  if (stage === 'completing') {
    await resumeCompletion(ctx, header);
    return 'waiting';
  }
  if (stage !== 'open') return 'waiting';
  const { state, best } = completionState(definition, snapshot);
  const members = validReplies(header, snapshot.replies);
  const decision = await decideOnReplies(ctx, definition, header, members, state, best);
  if (!decision.complete) return 'waiting';
  return (await completeAggregate(ctx, header.aggregateId, decision, snapshot)) ? 'completed' : 'lost';
}

/**
 * Routes a late reply: marked on its item once (so the late count on the header counts it once),
 * published on every attempt (the output id is deterministic, so a retry after a crash between
 * the two is not lost and deduplicates).
 */
export async function routeLate(
  ctx: FaninContext,
  definition: Definition,
  header: AggregateHeader,
  replyId: string,
  message: {
    readonly messageId?: string;
    readonly body: string;
    readonly attributes?: Readonly<Record<string, string>>;
    readonly retained?: boolean;
  },
): Promise<void> {
  if (await ctx.store.markLate(header.aggregateId, replyId, replyExpiry(ctx, definition), header.shards))
    ctx.metrics?.count(MetricName.REPLIES_LATE, definition.name);
  if (definition.latePolicy !== 'route') return;
  await ctx.outputs.publish(
    QueueRole.LATE,
    {
      id: `${header.aggregateId}/late/${replyId}`,
      type: 'fanin.reply.late',
      aggregateId: header.aggregateId,
      definition: definition.name,
      replyId,
      reason: `aggregate is ${header.status}${header.outcome ? ` (${header.outcome})` : ''}: the reply came after its result was fixed`,
      aggregateStatus: header.status,
      aggregateOutcome: header.outcome ?? null,
      at: ctx.clock(),
      message,
    },
    { eventBridge: definition.outputs.eventBridge },
  );
}

/**
 * A reply whose aggregate does not exist (IBM's unknown message timeout): with a timeout of 0 it
 * goes to the unknown output at once; otherwise it is held until its aggregate appears or its
 * own timeout expires.
 */
async function handleUnknown(ctx: FaninContext, reply: Reply): Promise<void> {
  const timeout = reply.claimed?.unknownTimeoutSeconds ?? 0;
  const now = ctx.clock();
  if (timeout === 0) {
    await publishUnknown(
      ctx,
      reply.aggregateId,
      reply.replyId,
      { ...reply.raw, messageId: reply.messageId },
      reply.claimed?.name,
    );
    return;
  }
  const held: HeldReply = {
    aggregateId: reply.aggregateId,
    replyId: reply.replyId,
    ...(reply.claimed ? { definition: reply.claimed.name } : {}),
    // A body too large for an item is kept in S3, and the held item names it.
    ...(await heldBody(ctx, reply)),
    attributes: reply.raw.attributes,
    messageId: reply.messageId,
    receivedAt: now,
    dueAt: now + timeout * 1000,
  };
  await ctx.store.holdReply(held);
  await ctx.timers.arm(
    { kind: 'held', aggregateId: reply.aggregateId, replyId: reply.replyId, dueAt: held.dueAt },
    now,
  );
  // The aggregate may have been opened between our look and our hold: consolidate now if so.
  await consolidateHeld(ctx, reply.aggregateId);
}

async function heldBody(ctx: FaninContext, reply: Reply): Promise<Pick<HeldReply, 'body' | 'bodyRef'>> {
  const stored = await storable(
    ctx,
    `held\u0000${reply.aggregateId}\u0000${reply.replyId}`,
    reply.raw.body,
    'held reply body',
  );
  return { body: stored.payload, ...(stored.payloadRef ? { bodyRef: stored.payloadRef } : {}) };
}

/** Sends a reply nobody claimed to the unknown output. */
export async function publishUnknown(
  ctx: FaninContext,
  aggregateId: string,
  replyId: string,
  raw: Pick<RawMessage, 'messageId' | 'body' | 'attributes'>,
  definition: string | undefined,
): Promise<void> {
  await ctx.outputs.publish(QueueRole.UNKNOWN, {
    id: `${aggregateId}/unknown/${replyId}`,
    type: 'fanin.reply.unknown',
    aggregateId,
    ...(definition ? { definition } : {}),
    replyId,
    reason: 'no such aggregate',
    at: ctx.clock(),
    message: { messageId: raw.messageId, body: raw.body, attributes: raw.attributes },
  });
  ctx.metrics?.count(MetricName.REPLIES_UNKNOWN, definition ?? UNKNOWN_DEFINITION);
}

/**
 * Consolidates held replies into their aggregate once it exists. Each held reply's fate is
 * claimed first (`counted`), so one whose unknown timeout claimed it (`unknown`) is never also
 * counted; then it is judged and recorded like any reply, and its held item removed.
 *
 * @returns true when the aggregate completed as a result.
 */
export async function consolidateHeld(ctx: FaninContext, aggregateId: string): Promise<boolean> {
  const held = await ctx.store.listHeld(aggregateId);
  if (held.length === 0) return false;
  const header = await ctx.store.getHeader(aggregateId);
  if (!header) return false;
  const claimed: HeldReply[] = [];
  for (const h of held) if (await ctx.store.claimHeld(aggregateId, h.replyId, 'counted')) claimed.push(h);
  if (claimed.length === 0) return false;
  const replies = await Promise.all(claimed.map((h) => heldAsReply(ctx, h)));
  await judgeAndRecord(ctx, header, replies, (reply) => ctx.store.deleteHeld(aggregateId, reply.replyId));
  const after = await ctx.store.getHeader(aggregateId);
  return !after || completionStateOf(after) !== 'open';
}

/** A held reply as a reply again; a claim-check pointer is resolved now, as on first receipt. */
async function heldAsReply(ctx: FaninContext, held: HeldReply): Promise<Reply> {
  const body = held.bodyRef ? await loadStored(ctx, { payload: '', payloadRef: held.bodyRef }) : held.body;
  const raw: RawMessage = { messageId: held.messageId, body, attributes: held.attributes, receiveCount: 1 };
  const resolved = await resolvePayload(ctx, raw);
  let parsed: unknown = null;
  try {
    parsed = JSON.parse(resolved.body);
  } catch {
    // Held replies were parsed once already; a body that no longer parses is kept as null.
  }
  const claimed = held.definition ? ctx.definitions.get(held.definition) : undefined;
  return {
    raw,
    inbound: { body: parsed, attributes: held.attributes, messageId: held.messageId },
    aggregateId: held.aggregateId,
    replyId: held.replyId,
    messageId: held.messageId,
    ...(claimed ? { claimed } : {}),
  };
}

/** An error as one loggable line: its name and message, never the message body that caused it. */
export function describeError(error: unknown): string {
  return redact(error instanceof Error ? `${error.name}: ${error.message}` : String(error));
}
