import { z } from 'zod';
import { decisionDueAt, nextDueAt } from '../engine/completion/deadline.ts';
import { Outcome } from '../engine/constants.ts';
import type { Definition } from '../engine/definition.ts';
import { inactivityDeadline } from '../engine/inactivity.ts';
import { parseJsonBody } from '../engine/json-body.ts';
import { completionStageOf } from '../engine/lifecycle.ts';
import { settlementAt } from '../engine/responders.ts';
import { nextRetryAt } from '../engine/retry-times.ts';
import { BadMessageError, FaninError } from '../errors.ts';
import { MetricName } from '../observability/metric-names.ts';
import { describeError } from '../observability/redaction.ts';
import {
  type AggregateSnapshot,
  Alarm,
  type DueItem,
  type RawMessage,
  type StoredReply,
  type TimerMessage,
} from '../ports.ts';
import { completeAggregate, resumeCompletion } from './complete.ts';
import type { FaninContext } from './context.ts';
import { decideCompletion } from './decide-completion.ts';
import { routeIfUnfixable } from './error-output.ts';
import { consolidateHeld, publishUnknown } from './held.ts';
import { onTime } from './late.ts';
import type { AtDeadline } from './record-replies.ts';
import { takeRetryRound } from './retry.ts';
import { sweepSnapshot, takeSnapshot } from './snapshots.ts';
import { loadStored } from './stored-payloads.ts';

/**
 * Handles a timer message. Timers are hints: every action re-reads state and is a no-op when the
 * item is gone, already closed, or not yet due (then the timer is armed again for its due time,
 * which the scheduler sends only when it is within its horizon: beyond it, the sweep arms it
 * when it enters the horizon, so a timer delivered twice can never start two chains of hops).
 */
export async function handleTimer(ctx: FaninContext, raw: RawMessage): Promise<void> {
  let timer: TimerMessage;
  try {
    timer = parseTimer(raw);
  } catch (error) {
    await routeIfUnfixable(ctx, 'timer', raw, error);
    return;
  }
  if (timer.kind === 'deadline') await expireAggregate(ctx, timer.aggregateId, true, timer.dueAt);
  else if (timer.kind === 'snapshot') await takeSnapshot(ctx, timer, raw.receiveCount);
  else await expireHeld(ctx, timer.aggregateId, timer.replyId, true);
}

/** The three timers: an aggregate's deadline, a held reply's unknown timeout, a periodic snapshot. */
const TimerSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('deadline'), aggregateId: z.string(), dueAt: z.number() }),
  z.object({ kind: z.literal('held'), aggregateId: z.string(), replyId: z.string(), dueAt: z.number() }),
  z.object({
    kind: z.literal('snapshot'),
    aggregateId: z.string(),
    dueAt: z.number(),
    // Absent on a timer the sweep armed from the `due` index (snapshots.ts).
    period: z.int().min(1).optional(),
  }),
]);

function parseTimer(raw: RawMessage): TimerMessage {
  const timer = TimerSchema.safeParse(parseJsonBody(raw));
  if (!timer.success)
    throw new BadMessageError(
      'not a timer message: expected { kind, aggregateId, dueAt[, replyId | period] } with kind deadline, held or snapshot',
    );
  return timer.data;
}

/**
 * The deadline of an aggregate (or the end of its allowed life, `closeBy`): held replies are
 * consolidated first (IBM: replies that arrive before the timeout count), then the strategy
 * decides the outcome at the deadline on the aggregate as read.
 *
 * With an inactivity timeout the deadline moves lazily (engine/inactivity.ts): when a reply was recorded
 * since it was set, the deadline and its `due` entry move forward (one conditional update, only
 * while open) and a timer is armed for the new one, by the timer and the sweeper alike; a timer
 * that finds its deadline already moved by someone else (`firedFor` earlier than the header's)
 * does not re-arm, since the mover did.
 *
 * @param rearm re-arm a timer that fired before its deadline (timers; the sweeper only acts on due items)
 * @param firedFor the deadline the firing timer was armed for
 */
export async function expireAggregate(
  ctx: FaninContext,
  aggregateId: string,
  rearm: boolean,
  firedFor?: number,
): Promise<void> {
  const header = await ctx.store.getHeader(aggregateId);
  if (!header) return;
  const stage = completionStageOf(header, ctx.clock());
  if (stage === 'completing' || stage === 'resumable') {
    // The sweeper (no re-arming) found a completion whose owner's lease ran out: it resumes it.
    if (!rearm && stage === 'resumable')
      ctx.metrics?.count(MetricName.COMPLETIONS_LEASE_EXPIRED, header.definition);
    await resumeCompletion(ctx, header);
    return;
  }
  const due = nextDueAt(header);
  if (stage !== 'open' || due === undefined) return;
  const now = ctx.clock();
  if (now < due) {
    // Fired early (a clock behind, a second's rounding): armed again for its due time — by the
    // scheduler only when that is within its horizon (beyond it, the sweep arms it on entering).
    if (rearm && (firedFor === undefined || firedFor >= due))
      await ctx.timers.arm({ kind: 'deadline', aggregateId, dueAt: due }, now);
    return;
  }
  if (await consolidateHeld(ctx, aggregateId)) return;
  const snapshot = await ctx.store.readAggregate(aggregateId);
  const latest = snapshot.header;
  if (!latest || completionStageOf(latest) !== 'open') return;
  // Only replies received before the deadline in force count or move it (late.ts, onTimeReplies).
  const counted = onTime(snapshot);
  const decisionDue = decisionDueAt(latest);
  const moved = inactivityDeadline(latest, counted.replies);
  const deadlineDue =
    decisionDue !== undefined && now >= decisionDue && !(moved !== undefined && moved > now);
  const definition = ctx.definitions.get(latest.definition);
  const retryDue = nextRetryAt(latest);
  if (definition && retryDue !== undefined && now >= retryDue && !deadlineDue) {
    // A round of retries is due (engine/retries.ts): taken, then looked at again for the rest (a
    // recipient deadline or an inactivity deadline due as well).
    await takeRetryRound(ctx, definition, snapshot, counted.replies, now);
    await expireAggregate(ctx, aggregateId, rearm, firedFor);
    return;
  }
  if (definition && latest.recipientsDue !== undefined && !deadlineDue) {
    const recipientsDue = nextDueAt({ recipientsDue: latest.recipientsDue, params: latest.params });
    if (recipientsDue !== undefined && now >= recipientsDue) {
      await lookAtRecipients(ctx, definition, snapshot, counted.replies, now);
      // Its inactivity deadline fell due as well, to be moved on: read again for it.
      if (decisionDue !== undefined && now >= decisionDue)
        await expireAggregate(ctx, aggregateId, rearm, firedFor);
      return;
    }
  }
  if (moved !== undefined && moved > now) {
    // Replies came since the deadline was set: it moves on instead of timing the aggregate out.
    if (
      latest.deadline !== undefined &&
      (await ctx.store.moveDeadline(
        aggregateId,
        latest.deadline,
        moved,
        nextDueAt({ ...latest, deadline: moved }) ?? moved,
      ))
    ) {
      await ctx.timers.arm({ kind: 'deadline', aggregateId, dueAt: moved }, now);
      return;
    }
    // Moved or sealed by another invocation meanwhile: look again (a move only goes forward).
    await expireAggregate(ctx, aggregateId, rearm, firedFor);
    return;
  }
  if (!definition) {
    await completeAggregate(ctx, aggregateId, Outcome.FAILED, snapshot);
    return;
  }
  // The replies as read decide first, by the completion rules, as after a reply (evaluate.ts): a
  // reply recorded whose evaluation never ran (its invocation died between the write and the
  // read) completes the aggregate by its rule, never as timed out.
  const decision = await decideCompletion(ctx, definition, latest, counted.replies, 'deadline');
  if (decision.complete) await completeAggregate(ctx, aggregateId, decision, snapshot);
}

/**
 * A recipient's own deadline has passed (engine/responders.ts) before the aggregate's: the
 * aggregate is decided as after a reply, recipients past their deadlines settled as timed out (it
 * completes when its rule is met or every recipient is settled: use-cases/decide-completion.ts);
 * otherwise its next recipient deadline, and its `due` entry with it, moves on to the next one of
 * a recipient that has not replied (one conditional update, only while open), and a timer is
 * armed for it. A move lost to another invocation leaves the look to it.
 */
async function lookAtRecipients(
  ctx: FaninContext,
  definition: Definition,
  snapshot: AggregateSnapshot,
  counted: readonly StoredReply[],
  now: number,
): Promise<void> {
  const header = snapshot.header;
  if (!header || header.recipientsDue === undefined) return;
  const decision = await decideCompletion(ctx, definition, header, counted, 'reply');
  if (decision.complete) {
    await completeAggregate(ctx, header.aggregateId, decision, snapshot);
    return;
  }
  const next = settlementAt(header, new Set(counted.map((r) => r.replyId)), now).nextDue;
  const { recipientsDue: _, ...rest } = header;
  const moved = next === undefined ? rest : { ...rest, recipientsDue: next };
  const dueAt = nextDueAt(moved);
  if (!(await ctx.store.moveRecipientsDue(header.aggregateId, header.recipientsDue, next, dueAt))) return;
  // Armed for what is next due, a recipient's deadline or else the aggregate's own: with no
  // recipient deadline left, the aggregate's deadline still needs its timer.
  if (dueAt !== undefined)
    await ctx.timers.arm({ kind: 'deadline', aggregateId: header.aggregateId, dueAt }, now);
}

/**
 * The deadline's handling when replies find it passed (the reply path does what the timer would):
 * as the sweeper's, it never re-arms.
 */
export const deadlinePassed: AtDeadline = (ctx, aggregateId) => expireAggregate(ctx, aggregateId, false);

/**
 * The unknown-reply timeout of a held reply: consolidated when its aggregate has appeared (late
 * when it has closed), otherwise claimed for the unknown output — claimed *before* it is
 * published, so a consolidation racing it can never count it too.
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
  if (held.claimed !== 'unknown' && (await ctx.store.getHeader(aggregateId))) {
    await consolidateHeld(ctx, aggregateId);
    return;
  }
  // `counted` already: a consolidation owns it and finishes it (the sweeper retries that).
  if (!(await ctx.store.claimHeld(aggregateId, replyId, 'unknown'))) {
    await consolidateHeld(ctx, aggregateId);
    return;
  }
  const body = held.bodyRef ? await loadStored(ctx, { payload: '', payloadRef: held.bodyRef }) : held.body;
  await publishUnknown(
    ctx,
    aggregateId,
    replyId,
    { messageId: held.messageId, body, attributes: held.attributes },
    held.definition,
    deadlinePassed,
  );
  await ctx.store.deleteHeld(aggregateId, replyId);
}

/** What a sweep reads of the invocation it runs in. */
export interface SweepOptions {
  /**
   * The invocation's time left (Lambda's `getRemainingTimeInMillis`). Without it (the local
   * runtime, tests) a sweep has {@link SWEEP_DEFAULT_TIME_MS}.
   */
  readonly remainingTimeMs?: () => number;
}

/**
 * The most one due item may take before the sweep gives up on it, defers it and goes on: an item
 * that hangs (a call that never answers, a pathological expression) must not hold the items
 * behind it until the invocation times out, sweep after sweep.
 */
export const DUE_ITEM_BUDGET_MS = 10_000;
/**
 * Time a sweep keeps back at the end of its invocation: no item is started with less left, and
 * an item still running this close to the end is deferred, so the deferral itself (one write) is
 * made before the invocation is cut off.
 */
export const SWEEP_MARGIN_MS = 2_000;
/** A sweep's time without an invocation to ask (the local runtime's sweeper, tests): a Lambda's default. */
export const SWEEP_DEFAULT_TIME_MS = 30_000;

/**
 * The safety net (an EventBridge schedule in AWS, a timer locally): everything due in the `due`
 * index — open aggregates past their deadline or allowed life, completions whose lease ran out,
 * held replies past their unknown timeout — is acted on as its timer would have. Lost timers
 * therefore cannot leave an aggregate open forever.
 *
 * An item that fails, or takes longer than its budget (at most {@link DUE_ITEM_BUDGET_MS}, and at
 * most half the invocation's time left less {@link SWEEP_MARGIN_MS}), is logged with an alarm and moved
 * later in the index, so items that always fail or hang can never starve the others, in its
 * shard or any other. Once the invocation's time is nearly spent, no further item is started:
 * what is left is still due, and the next sweep takes it.
 *
 * @returns how many due items were examined.
 * @throws AggregateError when some items failed or ran out of their budget (each was deferred)
 */
export async function sweep(ctx: FaninContext, limit = 500, options: SweepOptions = {}): Promise<number> {
  const started = Date.now();
  const remaining = options.remainingTimeMs ?? (() => SWEEP_DEFAULT_TIME_MS - (Date.now() - started));
  const now = ctx.clock();
  const errors: unknown[] = [];
  // The timers entering the horizon first: they are cheap and each is a precise deadline.
  try {
    await armEntering(ctx, now);
  } catch (error) {
    errors.push(error);
    ctx.log.error('arming the timers entering the horizon failed; the next sweep arms them', {
      alarm: Alarm.DUE_ITEM_FAILED,
      error: describeError(error),
    });
  }
  const due = await ctx.store.dueItems(now, limit);
  const running: Promise<unknown>[] = [];
  let examined = 0;
  for (const item of due) {
    const left = remaining() - SWEEP_MARGIN_MS;
    if (left <= 0) {
      ctx.log.info('sweep stopped for time: the rest is left for the next sweep', {
        examined,
        left: due.length - examined,
      });
      break;
    }
    examined += 1;
    try {
      // At most half of what is left, so an item that hangs leaves time for the ones behind it.
      const task = dueItemTask(ctx, item);
      running.push(task.catch(() => undefined));
      await withinBudget(task, Math.min(DUE_ITEM_BUDGET_MS, left / 2));
    } catch (error) {
      errors.push(error);
      ctx.metrics?.count(MetricName.DUE_ITEMS_FAILED);
      ctx.log.error('a due item failed; it is retried later', {
        alarm: Alarm.DUE_ITEM_FAILED,
        kind: item.kind,
        aggregateId: item.aggregateId,
        error: describeError(error),
      });
      await ctx.store.deferDue(item, now + DEFER_FAILED_MS).catch(() => undefined);
    }
  }
  // An item given up on is only slow, perhaps: it goes on while time is left (an invocation that
  // returns is frozen, so work left running would wait for the next one, or never run).
  await settledWithin(running, remaining() - SWEEP_MARGIN_MS);
  if (errors.length > 0) throw new AggregateError(errors, `${errors.length} of ${examined} due items failed`);
  return examined;
}

/**
 * How far before the end of the timers' horizon the sweep arms: a writer arms its own timer when it
 * is due within the horizon by its clock, so the sweep's window ends this much earlier — more than
 * any clock skew and the `due` index's propagation — and no item falls between the two.
 */
export const ARMING_MARGIN_MS = 60_000;
/** Index entries a sweep arms at most from each shard of the `due` index (the rest: the next sweep). */
export const ARMING_LIMIT_PER_SHARD = 250;

/**
 * Arms the timers of the due items entering the horizon of the timers: those due from the arming
 * watermark (every item before it was armed by an earlier sweep; `now` the first time) to `now`
 * plus the horizon less {@link ARMING_MARGIN_MS}. The watermark moves only after the timers are
 * sent, so a sweep that crashes or fails in between leaves them to the next one (armed twice at
 * worst, never lost), and a sweep that did not run is caught up by the next (the window starts
 * where the last one ended). Items due until `now` are the sweep's own (due items).
 *
 * @returns how many timers were armed
 */
export async function armEntering(ctx: FaninContext, now: number): Promise<number> {
  const { store, timers } = ctx;
  const horizon = timers.horizonMs;
  if (horizon === undefined || !store.dueBetween || !store.armedUntil || !store.markArmedUntil) return 0;
  const from = Math.max((await store.armedUntil()) ?? 0, now + 1);
  const to = now + horizon - ARMING_MARGIN_MS;
  if (to < from) return 0;
  const window = await store.dueBetween(from, to, ARMING_LIMIT_PER_SHARD);
  const armed = window.items.map(timerOf);
  const failed = await timers.armAll(armed, now);
  if (failed.length > 0)
    throw new FaninError(`${failed.length} of ${armed.length} timers entering the horizon were not armed`);
  await store.markArmedUntil(window.next ?? to + 1, now);
  return armed.length;
}

/** The timer of a due item, for its due time. */
function timerOf(item: DueItem): TimerMessage {
  if (item.kind === 'aggregate')
    return { kind: 'deadline', aggregateId: item.aggregateId, dueAt: item.dueAt };
  if (item.kind === 'held')
    return { kind: 'held', aggregateId: item.aggregateId, replyId: item.replyId, dueAt: item.dueAt };
  return { kind: 'snapshot', aggregateId: item.aggregateId, dueAt: item.dueAt };
}

/** What the sweeper does with one due item, as its timer would have. */
function dueItemTask(ctx: FaninContext, item: DueItem): Promise<void> {
  if (item.kind === 'aggregate') return expireAggregate(ctx, item.aggregateId, false);
  if (item.kind === 'held') return expireHeld(ctx, item.aggregateId, item.replyId, false);
  return sweepSnapshot(ctx, item.aggregateId, item.dueAt);
}

/** Waits for `tasks` to settle, at most `ms`. */
async function settledWithin(tasks: readonly Promise<unknown>[], ms: number): Promise<void> {
  if (tasks.length === 0 || ms <= 0) return;
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    Promise.allSettled(tasks),
    new Promise<void>((resolve) => {
      timer = setTimeout(resolve, ms);
    }),
  ]);
  clearTimeout(timer);
}

/**
 * `task`, or a {@link FaninError} saying so once `budgetMs` have passed. A task given up on goes
 * on beside the items after it (the sweep waits for it at its end while time is left); every
 * step of it is safe beside a later sweep's (conditional writes), and its late failure is
 * dropped (it was already counted as timed out).
 */
async function withinBudget(task: Promise<void>, budgetMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new FaninError(`the due item took more than its ${Math.round(budgetMs)} ms budget`)),
      budgetMs,
    );
  });
  task.catch(() => undefined);
  try {
    await Promise.race([task, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * How far a failed due item moves back in the index: behind everything due before the next
 * sweep, so items that keep failing rotate to the back instead of filling every sweep's share.
 */
const DEFER_FAILED_MS = 60_000;
