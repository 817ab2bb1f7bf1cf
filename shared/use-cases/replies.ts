import { retainedBody } from '../engine/aggregation.ts';
import { deadlineOf, decide, scoreOf } from '../engine/completion.ts';
import { AggregateStatus } from '../engine/constants.ts';
import { correlationKey, type InboundMessage, replyIdOf, WireAttribute } from '../engine/correlation.ts';
import { type Definition, effectiveParameters } from '../engine/definition.ts';
import { CorrelationError, ExpressionError } from '../engine/errors.ts';
import type { AggregateHeader, HeldReply, RawMessage, ReplyToRecord, SelfStartSpec } from '../ports.ts';
import { QueueRole } from '../topology/topology.ts';
import { completeAggregate, resumeCompletion } from './complete.ts';
import {
  BadMessageError,
  type FaninContext,
  parseJsonBody,
  redact,
  resolvePayload,
  routeError,
  storable,
} from './context.ts';

/** A reply, interpreted. */
interface Reply {
  /** The message as it came, for routing it elsewhere unchanged (a claim-check pointer stays one). */
  readonly raw: RawMessage;
  /** The message with its payload resolved and parsed. */
  readonly inbound: InboundMessage;
  readonly aggregateId: string;
  readonly replyId: string;
  /** Known from the `fanin-definition` attribute (or, failing that, from the aggregate's header). */
  readonly definition?: Definition;
}

/**
 * Handles a batch of replies from one reply partition.
 *
 * Primary course:
 * 1. interpret each reply (definition, aggregate id, reply id); a bad one goes to the error output;
 * 2. group by aggregate and record each group in one transaction with the header's counter —
 *    duplicates are recognised by reply id and change nothing;
 * 3. unknown replies are held (or routed at once with an unknown timeout of 0); late ones go to
 *    the late output; accepted ones are evaluated for completion, which one invocation wins.
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
      if (
        !(
          error instanceof BadMessageError ||
          error instanceof CorrelationError ||
          error instanceof ExpressionError
        )
      ) {
        ctx.log.error('reply failed; it will be redelivered', {
          messageId: raw.messageId,
          error: describeError(error),
        });
        failed.add(raw.messageId);
        continue;
      }
      try {
        await routeError(ctx, 'reply', raw, error.message);
      } catch {
        failed.add(raw.messageId);
      }
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
        // A reply that can never be kept (too large, no payload bucket) is bad input, not a retry.
        for (const reply of replies) {
          if (error instanceof BadMessageError)
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
  const definition = name === undefined ? undefined : ctx.definitions.get(name);
  if (name !== undefined && !definition) throw new BadMessageError(`unknown definition "${name}"`);
  let aggregateId: string;
  if (definition?.mode === 'self-starting') {
    aggregateId = selfStartingId(definition, await correlationKey(definition, inbound));
  } else if (definition) {
    aggregateId = await correlationKey(definition, inbound);
  } else {
    const id = raw.attributes[WireAttribute.AGGREGATE_ID];
    if (!id) {
      throw new CorrelationError(
        `missing correlation: the reply has neither a ${WireAttribute.AGGREGATE_ID} nor a ${WireAttribute.DEFINITION} attribute`,
      );
    }
    aggregateId = id;
  }
  const replyId = await replyIdOf(definition, inbound);
  return { raw: original, inbound, aggregateId, replyId, ...(definition ? { definition } : {}) };
}

/**
 * A reply as the state store keeps it: the part of its body the algorithm needs. One too large
 * for a DynamoDB item is stored in S3 (under a key derived from its ids, so a retry writes the
 * same object) and referenced; without a payload bucket it is refused to the error output.
 */
async function recordable(
  ctx: FaninContext,
  definition: Definition,
  aggregateId: string,
  replyId: string,
  body: unknown,
  receivedAt: number,
): Promise<ReplyToRecord> {
  const json = JSON.stringify(retainedBody(definition, body) ?? null);
  return {
    replyId,
    receivedAt,
    ...(await storable(ctx, `reply\u0000${aggregateId}\u0000${replyId}`, json, 'reply body')),
  };
}

/** The aggregate id of a self-starting aggregate: its definition and correlation key. */
export function selfStartingId(definition: Definition, key: string): string {
  return `${definition.name}:${key}`;
}

async function handleGroup(ctx: FaninContext, aggregateId: string, replies: Reply[]): Promise<void> {
  let definition = replies.find((r) => r.definition)?.definition;
  if (!definition) {
    // Responders should echo fanin-definition; when one did not, the header says which it is.
    const header = await ctx.store.getHeader(aggregateId);
    if (!header) {
      for (const reply of replies) await handleUnknown(ctx, reply);
      return;
    }
    definition = ctx.definitions.get(header.definition);
    if (!definition)
      throw new Error(`aggregate ${aggregateId} names unknown definition ${header.definition}`);
  }
  const now = ctx.clock();
  let selfStart: SelfStartSpec | undefined;
  if (definition.mode === 'self-starting') {
    const params = effectiveParameters(definition, await ctx.store.getParameters(definition.name));
    const deadline = deadlineOf(params, now);
    selfStart = {
      definition: definition.name,
      openedAt: now,
      params,
      openedBy: replies[0]?.replyId ?? '',
      ...(deadline !== undefined ? { deadline } : {}),
    };
  }
  const toRecord = await Promise.all(
    replies.map((reply) => recordable(ctx, definition, aggregateId, reply.replyId, reply.inbound.body, now)),
  );
  const result = await ctx.store.recordReplies(aggregateId, toRecord, selfStart ? { selfStart } : {});
  if (result.missing) {
    for (const reply of replies) await handleUnknown(ctx, reply);
    return;
  }
  const header = result.header;
  if (!header) return;
  const settled = new Set([...result.accepted, ...result.duplicates]);
  if (header.status === AggregateStatus.OPEN && replies.some((r) => !settled.has(r.replyId))) {
    // Refused by an aggregate that is open now: the state moved under us; let SQS retry.
    throw new Error(`replies to ${aggregateId} were refused by an open aggregate; retrying`);
  }
  for (const reply of replies) {
    if (!settled.has(reply.replyId)) await handleLate(ctx, definition, header, reply);
  }
  if (
    selfStart &&
    header.deadline !== undefined &&
    header.openedBy !== undefined &&
    settled.has(header.openedBy)
  ) {
    await ctx.timers.arm({ kind: 'deadline', aggregateId, dueAt: header.deadline }, now);
  }
  await evaluate(
    ctx,
    definition,
    header,
    replies.filter((r) => settled.has(r.replyId)).map((r) => r.inbound),
  );
}

/**
 * Evaluates completion after replies were recorded (or recognised as duplicates: a retry after a
 * crash must still complete what the first attempt recorded).
 */
export async function evaluate(
  ctx: FaninContext,
  definition: Definition,
  header: AggregateHeader,
  replies: readonly InboundMessage[],
): Promise<boolean> {
  if (header.status === AggregateStatus.COMPLETING) {
    await resumeCompletion(ctx, header);
    return false;
  }
  if (header.status !== AggregateStatus.OPEN) return false;
  const state = {
    received: header.received,
    params: header.params,
    ...(header.expected !== undefined ? { expected: header.expected } : {}),
  };
  const events = replies.length > 0 ? replies : [undefined];
  for (const inbound of events) {
    const score = inbound ? await scoreOf(definition, inbound).catch(() => undefined) : undefined;
    const decision = decide(definition, state, { type: 'reply', score });
    if (decision.complete) return completeAggregate(ctx, header.aggregateId, decision.outcome);
  }
  return false;
}

async function handleLate(
  ctx: FaninContext,
  definition: Definition,
  header: AggregateHeader,
  reply: Reply,
): Promise<void> {
  if (definition.latePolicy === 'route') {
    await ctx.outputs.publish(
      QueueRole.LATE,
      {
        id: `${header.aggregateId}/late/${reply.replyId}`,
        type: 'fanin.reply.late',
        aggregateId: header.aggregateId,
        definition: definition.name,
        replyId: reply.replyId,
        aggregateStatus: header.status,
        aggregateOutcome: header.outcome ?? null,
        at: ctx.clock(),
        message: { messageId: reply.raw.messageId, body: reply.raw.body, attributes: reply.raw.attributes },
      },
      { eventBridge: definition.outputs.eventBridge },
    );
  }
  await ctx.store.countLate(header.aggregateId);
}

/**
 * A reply whose aggregate does not exist (IBM's unknown message timeout): with a timeout of 0 it
 * goes to the unknown output at once; otherwise it is held until its aggregate appears or its
 * own timeout expires.
 */
async function handleUnknown(ctx: FaninContext, reply: Reply): Promise<void> {
  const timeout = reply.definition?.unknownTimeoutSeconds ?? 0;
  const now = ctx.clock();
  if (timeout === 0) {
    await publishUnknown(ctx, reply.aggregateId, reply.replyId, reply.raw, reply.definition?.name);
    return;
  }
  const held: HeldReply = {
    aggregateId: reply.aggregateId,
    replyId: reply.replyId,
    ...(reply.definition ? { definition: reply.definition.name } : {}),
    body: reply.raw.body,
    attributes: reply.raw.attributes,
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
    message: raw,
  });
}

/**
 * Consolidates held replies into their aggregate once it exists: recorded like any reply (and
 * removed from the held set in the same transaction), then completion is evaluated. Held replies
 * of an aggregate that has closed are late.
 *
 * @returns true when the aggregate completed as a result.
 */
export async function consolidateHeld(ctx: FaninContext, aggregateId: string): Promise<boolean> {
  const held = await ctx.store.listHeld(aggregateId);
  if (held.length === 0) return false;
  const header = await ctx.store.getHeader(aggregateId);
  if (!header) return false;
  const definition = ctx.definitions.get(header.definition);
  if (!definition) return false;
  const inbound = await Promise.all(held.map(async (h) => ({ held: h, inbound: await toInbound(ctx, h) })));
  // Recorded like any reply; on a closed aggregate the transaction is refused, but it still tells
  // which held replies were already recorded (duplicates: dropped) from the late ones.
  const result = await ctx.store.recordReplies(
    aggregateId,
    await Promise.all(
      inbound.map(({ held: h, inbound: m }) =>
        recordable(ctx, definition, aggregateId, h.replyId, m.body, h.receivedAt),
      ),
    ),
    { consume: held.map((h) => h.replyId) },
  );
  const after = result.header;
  if (!after) return false;
  if (after.status === AggregateStatus.OPEN) {
    return evaluate(
      ctx,
      definition,
      after,
      inbound.map((i) => i.inbound),
    );
  }
  const duplicates = new Set(result.duplicates);
  for (const { held: h, inbound: m } of inbound) {
    if (!duplicates.has(h.replyId)) await handleLate(ctx, definition, after, heldAsReply(h, m, definition));
    await ctx.store.deleteHeld(aggregateId, h.replyId);
  }
  return false;
}

/** A held reply as a message again; a claim-check pointer is resolved now, as on first receipt. */
async function toInbound(ctx: FaninContext, held: HeldReply): Promise<InboundMessage> {
  const raw = await resolvePayload(ctx, heldAsRaw(held));
  let body: unknown = null;
  try {
    body = JSON.parse(raw.body);
  } catch {
    // Held replies were parsed once already; a body that no longer parses is kept as null.
  }
  return { body, attributes: held.attributes };
}

function heldAsRaw(held: HeldReply): RawMessage {
  return { messageId: `held/${held.replyId}`, body: held.body, attributes: held.attributes, receiveCount: 1 };
}

function heldAsReply(held: HeldReply, inbound: InboundMessage, definition: Definition): Reply {
  return {
    raw: heldAsRaw(held),
    inbound,
    aggregateId: held.aggregateId,
    replyId: held.replyId,
    definition,
  };
}

/** An error as one loggable line: its name and message, never the message body that caused it. */
export function describeError(error: unknown): string {
  return redact(error instanceof Error ? `${error.name}: ${error.message}` : String(error));
}
