import { decide } from '../engine/completion.ts';
import { AggregateStatus } from '../engine/constants.ts';
import type { RawMessage, TimerMessage } from '../ports.ts';
import { completeAggregate, resumeCompletion } from './complete.ts';
import { BadMessageError, type FaninContext, parseJsonBody, routeError } from './context.ts';
import { consolidateHeld, publishUnknown } from './replies.ts';

/**
 * Handles a timer message. Timers are hints: every action re-reads state and is a no-op when the
 * item is gone, already closed, or not yet due (then the timer is re-armed, for deadlines beyond
 * SQS's 15-minute delay).
 */
export async function handleTimer(ctx: FaninContext, raw: RawMessage): Promise<void> {
  let timer: TimerMessage;
  try {
    timer = parseTimer(raw);
  } catch (error) {
    if (!(error instanceof BadMessageError)) throw error;
    await routeError(ctx, 'timer', raw, error.message);
    return;
  }
  if (timer.kind === 'deadline') await expireAggregate(ctx, timer.aggregateId, true);
  else await expireHeld(ctx, timer.aggregateId, timer.replyId, true);
}

function parseTimer(raw: RawMessage): TimerMessage {
  const body = parseJsonBody(raw) as Partial<Record<string, unknown>> | null;
  const valid =
    body !== null &&
    typeof body === 'object' &&
    typeof body.aggregateId === 'string' &&
    typeof body.dueAt === 'number' &&
    (body.kind === 'deadline' || (body.kind === 'held' && typeof body.replyId === 'string'));
  if (!valid)
    throw new BadMessageError('not a timer message: expected { kind, aggregateId, dueAt[, replyId] }');
  return body as unknown as TimerMessage;
}

/**
 * The deadline of an aggregate: held replies are consolidated first (IBM: replies that arrive
 * before the timeout count), then the strategy decides the outcome at the deadline.
 */
export async function expireAggregate(ctx: FaninContext, aggregateId: string, rearm: boolean): Promise<void> {
  const header = await ctx.store.getHeader(aggregateId);
  if (!header) return;
  if (header.status === AggregateStatus.COMPLETING) {
    await resumeCompletion(ctx, header);
    return;
  }
  if (header.status !== AggregateStatus.OPEN || header.deadline === undefined) return;
  const now = ctx.clock();
  if (now < header.deadline) {
    if (rearm) await ctx.timers.arm({ kind: 'deadline', aggregateId, dueAt: header.deadline }, now);
    return;
  }
  if (await consolidateHeld(ctx, aggregateId)) return;
  const latest = await ctx.store.getHeader(aggregateId);
  const definition = latest && ctx.definitions.get(latest.definition);
  if (!latest || latest.status !== AggregateStatus.OPEN) return;
  const state = {
    received: latest.received,
    params: latest.params,
    ...(latest.expected !== undefined ? { expected: latest.expected } : {}),
  };
  const decision = definition
    ? decide(definition, state, { type: 'deadline' })
    : ({ complete: true, outcome: 'failed' } as const);
  if (decision.complete) await completeAggregate(ctx, aggregateId, decision.outcome);
}

/**
 * The unknown-reply timeout of a held reply: consolidated when its aggregate has appeared, late
 * when it has closed, otherwise routed to the unknown output.
 */
export async function expireHeld(
  ctx: FaninContext,
  aggregateId: string,
  replyId: string,
  rearm: boolean,
): Promise<void> {
  const held = await ctx.store.getHeld(aggregateId, replyId);
  if (!held) return;
  const now = ctx.clock();
  if (now < held.dueAt) {
    if (rearm) await ctx.timers.arm({ kind: 'held', aggregateId, replyId, dueAt: held.dueAt }, now);
    return;
  }
  const header = await ctx.store.getHeader(aggregateId);
  if (header) {
    await consolidateHeld(ctx, aggregateId);
    return;
  }
  await publishUnknown(
    ctx,
    aggregateId,
    replyId,
    { messageId: `held/${replyId}`, body: held.body, attributes: held.attributes },
    held.definition,
  );
  await ctx.store.deleteHeld(aggregateId, replyId);
}

/**
 * The safety net (an EventBridge schedule in AWS, a timer locally): everything due in the `due`
 * index — open aggregates past their deadline, completions whose lease ran out, held replies past
 * their unknown timeout — is acted on as its timer would have. Lost timers therefore cannot leave
 * an aggregate open forever.
 *
 * @returns how many due items were examined.
 */
export async function sweep(ctx: FaninContext, limit = 500): Promise<number> {
  const due = await ctx.store.dueItems(ctx.clock(), limit);
  const errors: unknown[] = [];
  for (const item of due) {
    // One item that fails (throttling, a poison state) must not stop the sweep of the others.
    try {
      if (item.kind === 'aggregate') await expireAggregate(ctx, item.aggregateId, false);
      else await expireHeld(ctx, item.aggregateId, item.replyId, false);
    } catch (error) {
      errors.push(error);
    }
  }
  if (errors.length > 0)
    throw new AggregateError(errors, `${errors.length} of ${due.length} due items failed`);
  return due.length;
}
