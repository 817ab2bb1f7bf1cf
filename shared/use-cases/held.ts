import { stateLifeSeconds } from '../engine/definition.ts';
import { completionStageOf } from '../engine/lifecycle.ts';
import type { HeldReply, RawMessage } from '../ports.ts';
import type { FaninContext } from './context.ts';
import { publishUnknownOutput } from './late.ts';
import { type AtDeadline, judgeAndRecord, type Reply } from './record-replies.ts';
import { loadStored, resolvePayload, storable } from './stored-payloads.ts';

/**
 * Held (unknown) replies: replies to an aggregate that does not exist yet (held until
 * the unknown message timeout). The reply handler holds them; the fan-out that opens their aggregate, its
 * deadline and their own timeout (timers.ts) consolidate them, each recorded like any reply.
 */

/**
 * A reply whose aggregate does not exist (IBM's unknown message timeout): with a timeout of 0 it
 * goes to the unknown output at once; otherwise it is held until its aggregate appears or its
 * own timeout expires.
 */
export async function handleUnknown(ctx: FaninContext, reply: Reply, atDeadline: AtDeadline): Promise<void> {
  const timeout = reply.claimed?.unknownTimeoutSeconds ?? 0;
  const now = ctx.clock();
  if (timeout === 0) {
    await publishUnknown(
      ctx,
      reply.aggregateId,
      reply.replyId,
      { ...reply.raw, messageId: reply.messageId },
      reply.claimed?.name,
      atDeadline,
      reply,
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

/**
 * Sends a reply nobody claimed to the unknown output. Its fate is fixed first: a late mark under
 * its own key in the aggregate it named, written only while that aggregate does not exist (one
 * transaction with the check), so a copy of it (a redelivery after a lost delete, a duplicate)
 * that arrives once the aggregate has opened is never also counted: a reply is counted or
 * reported unknown, never both. The mark lives as long as any aggregate of the definition it
 * named could (every definition's, when it named none), under the write shard that definition
 * gives the reply.
 *
 * The mark says whether the unknown output was sent (late.ts, publishUnknownOutput): a copy of the
 * reply put once the aggregate has opened that finds it still owed sends it, under the same id,
 * rather than being taken as a duplicate (the first send may have failed after the mark was
 * written: simulation seed 98), and never goes to the late output.
 *
 * When the aggregate has opened since the reply was found unknown (its first look and the mark
 * are separate calls, and the invocation may pause between them), nothing is marked or published:
 * the reply is recorded in it like any reply (counted, a duplicate of a member, or late), so a
 * member of its result is never also reported unknown (simulation seed 139).
 *
 * @param atDeadline the deadline's handling, for a reply recorded because its aggregate opened
 * @param reply the reply as interpreted, when the caller has it (else rebuilt from `raw`)
 */
export async function publishUnknown(
  ctx: FaninContext,
  aggregateId: string,
  replyId: string,
  raw: Pick<RawMessage, 'messageId' | 'body' | 'attributes'>,
  definition: string | undefined,
  atDeadline: AtDeadline,
  reply?: Reply,
): Promise<void> {
  const named = definition === undefined ? undefined : ctx.definitions.get(definition);
  const candidates = named ? [named] : [...ctx.definitions.values()];
  const leaseSeconds = Math.ceil(ctx.completionLeaseMs / 1000);
  const life = Math.max(0, ...candidates.map((d) => stateLifeSeconds(d, leaseSeconds)));
  const expiresAt = Math.ceil(ctx.clock() / 1000) + life;
  const shards = [...new Set(candidates.map((d) => d.writeShards ?? 1))];
  if (!(await ctx.store.markUnknown(aggregateId, replyId, expiresAt, shards))) {
    const header = await ctx.store.getHeader(aggregateId);
    if (header) {
      await judgeAndRecord(
        ctx,
        header,
        [reply ?? (await asReply(ctx, { aggregateId, replyId, raw, ...(definition ? { definition } : {}) }))],
        { atDeadline },
      );
      return;
    }
    // Gone again since the check (its tombstone expired): marked while it is absent, next time.
    throw new Error(`aggregate ${aggregateId} vanished while reply ${replyId} was being reported unknown`);
  }
  await publishUnknownOutput(ctx, { aggregateId, replyId, message: raw, definition, shards });
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
  // Held replies arrived before their aggregate existed, so before its deadline: recording them
  // never takes the deadline's path (the deadline's own handling consolidates them).
  await judgeAndRecord(ctx, header, replies, {
    onSettled: (reply) => ctx.store.deleteHeld(aggregateId, reply.replyId),
  });
  const after = await ctx.store.getHeader(aggregateId);
  return !after || completionStageOf(after) !== 'open';
}

/** A held reply as a reply again; a claim-check pointer is resolved now, as on first receipt. */
async function heldAsReply(ctx: FaninContext, held: HeldReply): Promise<Reply> {
  const body = held.bodyRef ? await loadStored(ctx, { payload: '', payloadRef: held.bodyRef }) : held.body;
  // It arrived when it was held: before its aggregate existed, so before its deadline.
  const reply = await asReply(ctx, {
    aggregateId: held.aggregateId,
    replyId: held.replyId,
    raw: { messageId: held.messageId, body, attributes: held.attributes },
    ...(held.definition ? { definition: held.definition } : {}),
  });
  return { ...reply, receivedAt: held.receivedAt, held: true };
}

/** A reply kept aside (held, or about to be reported unknown) as a reply again. */
async function asReply(
  ctx: FaninContext,
  kept: {
    readonly aggregateId: string;
    readonly replyId: string;
    readonly raw: Pick<RawMessage, 'messageId' | 'body' | 'attributes'>;
    readonly definition?: string;
  },
): Promise<Reply> {
  const { messageId } = kept.raw;
  const raw: RawMessage = {
    messageId,
    body: kept.raw.body,
    attributes: kept.raw.attributes,
    receiveCount: 1,
  };
  const resolved = await resolvePayload(ctx, raw);
  let parsed: unknown = null;
  try {
    parsed = JSON.parse(resolved.body);
  } catch {
    // Parsed once already, on first receipt; a body that no longer parses is kept as null.
  }
  const claimed = kept.definition ? ctx.definitions.get(kept.definition) : undefined;
  return {
    raw,
    inbound: { body: parsed, attributes: kept.raw.attributes, messageId },
    aggregateId: kept.aggregateId,
    replyId: kept.replyId,
    messageId,
    ...(claimed ? { claimed } : {}),
  };
}
