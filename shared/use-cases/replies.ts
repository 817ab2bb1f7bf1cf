import { deadlineOf, decisionDueAt } from '../engine/completion/deadline.ts';
import { AggregateStatus } from '../engine/constants.ts';
import {
  correlationKey,
  type InboundMessage,
  replyIdOf,
  replyIdSource,
  WireAttribute,
} from '../engine/correlation.ts';
import { type Definition, effectiveParameters } from '../engine/definition.ts';
import { openingDeadline } from '../engine/inactivity.ts';
import { parseJsonBody } from '../engine/json-body.ts';
import {
  assertCarried,
  identifierProblem,
  MAX_AGGREGATE_ID_BYTES,
  MAX_KEY_LENGTH,
} from '../engine/limits.ts';
import { isRecipientIndex } from '../engine/members.ts';
import { HEARTBEAT_ATTRIBUTE, heartbeatExtends } from '../engine/responders.ts';
import { BadMessageError, CorrelationError, isUnfixable } from '../errors.ts';
import { MetricName } from '../observability/metric-names.ts';
import { describeError } from '../observability/redaction.ts';
import type { AggregateHeader, RawMessage } from '../ports.ts';
import { closeByOf } from './aggregate-life.ts';
import type { FaninContext } from './context.ts';
import { routeError } from './error-output.ts';
import { handleUnknown } from './held.ts';
import { judgeAndRecord, type Reply } from './record-replies.ts';
import { armFirstSnapshot } from './snapshots.ts';
import { resolvePayload } from './stored-payloads.ts';
import { deadlinePassed } from './timers.ts';

/** The two characters JSON.stringify leaves as they are and SQS refuses in a message. */
const NONCHARACTER = /[\ufffe\uffff]/;

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

async function handleGroup(ctx: FaninContext, aggregateId: string, messages: Reply[]): Promise<void> {
  // What is judged before recording (definition, expected ids, shards) never changes once the
  // header exists, and the status is read again, consistently, after the puts: an eventually
  // consistent read is enough here unless it finds nothing.
  let header =
    (await ctx.store.getHeader(aggregateId, { consistent: false })) ??
    (await ctx.store.getHeader(aggregateId));
  const beats = messages.filter((m) => m.raw.attributes[HEARTBEAT_ATTRIBUTE] !== undefined);
  for (const beat of beats) await handleHeartbeat(ctx, header, beat);
  const replies = beats.length === 0 ? messages : messages.filter((m) => !beats.includes(m));
  if (replies.length === 0) return;
  if (!header) {
    const starter = replies.find((r) => r.claimed?.mode === 'self-starting')?.claimed;
    if (!starter) {
      for (const reply of replies) await handleUnknown(ctx, reply, deadlinePassed);
      return;
    }
    header = await openSelfStarting(ctx, starter, aggregateId, replies[0]?.replyId ?? '');
  }
  await judgeAndRecord(ctx, header, replies, { atDeadline: deadlinePassed });
}

/**
 * A heartbeat (attribute `fanin-heartbeat` on a message to a reply queue: docs/wire-contract.md,
 * "Heartbeats"): never a reply. Received before its recipient's deadline, it is kept on the
 * header and extends that deadline (engine/responders.ts); after it, or once the aggregate is no
 * longer open, it changes nothing (counted, logged). One that names no aggregate, a definition
 * that takes none, another definition, or a reply id the aggregate never asked for is bad input:
 * the error output, with the reason.
 */
async function handleHeartbeat(
  ctx: FaninContext,
  header: AggregateHeader | undefined,
  beat: Reply,
): Promise<void> {
  const refuse = (reason: string) => routeError(ctx, 'reply', beat.raw, `heartbeat: ${reason}`);
  if (!header) return refuse(`no aggregate ${beat.aggregateId} exists`);
  const definition = ctx.definitions.get(header.definition);
  if (beat.claimed && beat.claimed.name !== header.definition)
    return refuse(`it names definition "${beat.claimed.name}", not the aggregate's "${header.definition}"`);
  if (definition?.responders?.heartbeatSeconds === undefined || header.params.heartbeatSeconds === undefined)
    return refuse(`definition "${header.definition}" takes no heartbeats (responders.heartbeatSeconds)`);
  // A recipient's reply id is its index as the fan-out wrote it: `01` names no recipient (and
  // would otherwise be a key of its own in the header's heartbeats).
  if (header.expected === undefined || !isRecipientIndex(beat.replyId, header.expected))
    return refuse(`reply id "${beat.replyId}" is not a recipient of aggregate ${header.aggregateId}`);
  const at = beat.receivedAt ?? ctx.clock();
  const kept =
    header.status === AggregateStatus.OPEN &&
    heartbeatExtends(header, beat.replyId, at) &&
    (await ctx.store.keepHeartbeat(header.aggregateId, beat.replyId, at));
  ctx.metrics?.count(kept ? MetricName.HEARTBEATS_KEPT : MetricName.HEARTBEATS_IGNORED, header.definition);
  if (!kept)
    ctx.log.info(
      'heartbeat changed nothing: after its recipient deadline, not newer, or the aggregate is no longer open',
      {
        aggregateId: header.aggregateId,
        replyId: beat.replyId,
        status: header.status,
      },
    );
}

/** Opens a self-starting aggregate with its first reply; the deadline timer is armed once. */
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
