import { randomUUID } from 'node:crypto';
import { aggregate, byReplyOrder, missingReplyIds, type ReplyRecord } from '../engine/aggregation.ts';
import { sealedMembers } from '../engine/completion/cap.ts';
import { CompletedBy } from '../engine/completion/decision.ts';
import { validReplies } from '../engine/completion/tally.ts';
import { AggregateStatus, EXPRESSION_LIMITS, Outcome } from '../engine/constants.ts';
import type { Definition } from '../engine/definition.ts';
import type { ExpressionLimits } from '../engine/expression.ts';
import { keepsRequest } from '../engine/keeps-request.ts';
import { completionStageOf } from '../engine/lifecycle.ts';
import { resultId } from '../engine/output-ids.ts';
import { ownDeadline, recipientFates } from '../engine/responders.ts';
import { ExpressionError, OutputChannelError, OutputTooLargeError } from '../errors.ts';
import { MetricName, OUTCOME_METRICS } from '../observability/metric-names.ts';
import { describeError } from '../observability/redaction.ts';
import {
  type AggregateHeader,
  type AggregateSnapshot,
  Alarm,
  type OutputMessage,
  type StoredReply,
} from '../ports.ts';
import { type OutputRole, QueueRole } from '../topology/topology.ts';
import { replyExpiry } from './aggregate-life.ts';
import { sendCancellations } from './cancel.ts';
import type { FaninContext } from './context.ts';
import { decideCompletion } from './decide-completion.ts';
import {
  AFTER_DEADLINE,
  afterRecipientDeadline,
  fixedReason,
  onTimeReplies,
  publishUnknownOutput,
  routeLate,
} from './late.ts';
import { loadStored } from './stored-payloads.ts';

/** The output each outcome goes to. */
export const OUTPUT_OF: Record<Outcome, OutputRole> = {
  [Outcome.COMPLETED]: QueueRole.COMPLETED,
  [Outcome.TIMED_OUT]: QueueRole.TIMED_OUT,
  [Outcome.PURGED]: QueueRole.STATUS,
  [Outcome.FAILED]: QueueRole.ERROR,
};

/** The largest output body sent inline when there is no payload bucket (SQS: 256 KiB, less attributes). */
const MAX_INLINE_OUTPUT_BYTES = 255 * 1024;

/**
 * A resumer rebuilds a result the first owner already built: its member set and outcome are fixed,
 * only a `custom` expression's wall-clock budget could differ, so it gets a generous one.
 */
const RESUME_LIMITS: ExpressionLimits = {
  timeoutMs: EXPRESSION_LIMITS.timeoutMs * 40,
  maxDepth: EXPRESSION_LIMITS.maxDepth,
};

/**
 * Completes an aggregate with an outcome, exactly once.
 *
 * Primary course:
 * 1. read the aggregate (or take the caller's consistent read) and build its result from the
 *    replies read — a `custom` expression that fails makes the outcome `failed`, here, once;
 * 2. seal it: the conditional transition open → completing that writes the member set, the
 *    outcome and a fencing lease; exactly one invocation wins, and every later attempt publishes
 *    what the seal fixed;
 * 3. route as late any reply recorded between the read and the seal;
 * 4. publish the result under the aggregate's deterministic output id, channel by channel;
 *    then, for a definition with `cancelOutstanding`, send each recipient asked and unanswered its
 *    cancellation notice (cancel.ts);
 * 5. close under the lease: the header becomes the tombstone, with its retention as TTL.
 *
 * A crash after step 2 leaves the header `completing` with a lease. The message that made it
 * complete comes back once its visibility timeout runs out, which every consumed queue sets past
 * the lease (a timer's or the sweeper's due entry is already due and is seen again); its handler
 * finds the aggregate completing and calls {@link resumeCompletion}, which takes the lease over
 * (compare-and-set) and redoes steps 3–5 from the sealed member set. A completer that fails
 * instead of crashing brings the `due` entry forward to its lease's end, for the sweeper.
 *
 * @returns true when this call sealed the aggregate.
 */
export async function completeAggregate(
  ctx: FaninContext,
  aggregateId: string,
  ending: Outcome | EndingOf,
  snapshot?: AggregateSnapshot,
): Promise<boolean> {
  const read = snapshot ?? (await ctx.store.readAggregate(aggregateId));
  const header = read.header;
  if (!header) return false;
  const stage = completionStageOf(header);
  if (stage === 'completing') {
    await resumeCompletion(ctx, header);
    return false;
  }
  if (stage !== 'open') return false;
  const definition = ctx.definitions.get(header.definition);
  // Never a reply received after the deadline in force (late.ts), whoever ends the aggregate.
  const valid = validReplies(header, read.replies);
  const members = onTimeReplies(header, valid);
  const decided =
    members.length < valid.length && definition
      ? await decidedOnMembers(ctx, definition, header, members, endingOf(ending))
      : endingOf(ending);
  if (!decided) return false;
  const { outcome, completedBy, reason } = decided;
  // The one place the member set is chosen: a count decision's first N successes in recorded
  // order (engine/completion/cap.ts), else every reply that may be a member. The read after the
  // seal (finishUnderLease) routes every other reply late.
  const chosen = definition
    ? sealedMembers(definition.completion, header.params ?? {}, completedBy, members)
    : members;
  const at = ctx.clock();
  const built = await buildOutput(
    ctx,
    {
      ...header,
      completingAt: at,
      completedBy,
      // A failure decided before the seal (failed replies, a predicate that failed) is built as such.
      ...(outcome === Outcome.FAILED && reason !== undefined ? { outcome, reason } : {}),
    },
    definition,
    chosen,
    outcome,
    EXPRESSION_LIMITS,
  );
  const lease = randomUUID();
  const sealed = await ctx.store.seal(aggregateId, {
    outcome: built.outcome,
    ...(built.reason !== undefined ? { reason: built.reason } : {}),
    completedBy,
    members: chosen.map((r) => r.replyId),
    sources: sourcesOf(chosen),
    at,
    lease,
    leaseUntil: at + ctx.completionLeaseMs,
  });
  if (!sealed) return false;
  ctx.metrics?.count(OUTCOME_METRICS[sealed.outcome ?? built.outcome], sealed.definition);
  ctx.metrics?.latency(MetricName.COMPLETION_LATENCY, sealed.definition, at - sealed.openedAt);
  if (header.askedUpTo !== undefined && header.expected !== undefined && header.askedUpTo < header.expected) {
    // Its fan-out may have raised askedUpTo since the read (it does only while the aggregate is
    // open): the result names the never-asked from the header as sealed, as any resumer does.
    const current = await ctx.store.getHeader(aggregateId);
    if (current?.lease !== lease) return true;
    if (current.askedUpTo !== header.askedUpTo) {
      await finish(ctx, current, definition);
      return true;
    }
  }
  await finish(ctx, sealed, definition, built);
  return true;
}

/**
 * The ending of an aggregate decided again on its members, when its caller decided on replies
 * that include some received after the deadline (which are never members): its completion rules
 * first, as after a reply, then — once the deadline has passed, or when the caller's was the
 * deadline's decision — the deadline's. A control command's ending (external, purge) stands.
 * `undefined` when the members decide nothing yet (a clock behind the recorder's): no seal.
 */
async function decidedOnMembers(
  ctx: FaninContext,
  definition: Definition,
  header: AggregateHeader,
  members: readonly StoredReply[],
  given: ReturnType<typeof endingOf>,
): Promise<ReturnType<typeof endingOf> | undefined> {
  if (given.completedBy === CompletedBy.EXTERNAL || given.completedBy === CompletedBy.PURGE) return given;
  const at = given.completedBy === CompletedBy.DEADLINE ? 'deadline' : 'due';
  const decision = await decideCompletion(ctx, definition, header, members, at);
  return decision.complete ? decision : undefined;
}

/** How a caller ends an aggregate: an outcome, what completed it, and why when it failed. */
export interface EndingOf {
  readonly outcome: Outcome;
  readonly completedBy?: CompletedBy;
  readonly reason?: string;
}

/**
 * An ending with what completed it. A bare outcome comes from a control command (a `complete`
 * command or an external event: `external`; a purge: `purge`) or from a deadline (`deadline`).
 */
function endingOf(
  ending: Outcome | EndingOf,
): Required<Pick<EndingOf, 'outcome' | 'completedBy'>> & EndingOf {
  const given = typeof ending === 'string' ? { outcome: ending } : ending;
  const byOutcome: Record<Outcome, CompletedBy> = {
    [Outcome.COMPLETED]: CompletedBy.EXTERNAL,
    [Outcome.PURGED]: CompletedBy.PURGE,
    [Outcome.TIMED_OUT]: CompletedBy.DEADLINE,
    [Outcome.FAILED]: CompletedBy.DEADLINE,
  };
  return { ...given, completedBy: given.completedBy ?? byOutcome[given.outcome] };
}

/**
 * Finishes a completion whose owner crashed or stalled, once its lease has run out: the lease is
 * taken over by compare-and-set, so of two resumers that read the same header only one goes on,
 * and a closed aggregate is never rebuilt. A no-op for an aggregate that is not completing, or
 * whose lease still runs.
 */
export async function resumeCompletion(ctx: FaninContext, header: AggregateHeader): Promise<void> {
  const now = ctx.clock();
  if (completionStageOf(header, now) !== 'resumable') return;
  const taken = await ctx.store.takeOver(
    header.aggregateId,
    header.lease as string,
    randomUUID(),
    now + ctx.completionLeaseMs,
  );
  if (!taken) return;
  ctx.metrics?.count(MetricName.COMPLETIONS_RESUMED, taken.definition);
  await finish(ctx, taken, ctx.definitions.get(taken.definition));
}

/**
 * Steps 3–5 under the lease. A completer that fails here (a channel down, a result that cannot be
 * rebuilt) brings its aggregate's `due` entry forward to its lease's end before the error goes
 * on, so the sweeper retries it then; one that crashes is retried by its message's redelivery.
 */
async function finish(
  ctx: FaninContext,
  header: AggregateHeader,
  definition: Definition | undefined,
  prebuilt?: Prebuilt,
): Promise<void> {
  try {
    await finishUnderLease(ctx, header, definition, prebuilt);
  } catch (error) {
    await ctx.store
      .recoverAt(header.aggregateId, header.lease as string, header.leaseUntil ?? ctx.clock())
      .catch(() => undefined);
    throw error;
  }
}

/** The owner's output, built before its seal, and the request it was built from. */
type Prebuilt = Pick<Built, 'message' | 'request'>;

async function finishUnderLease(
  ctx: FaninContext,
  header: AggregateHeader,
  definition: Definition | undefined,
  prebuilt?: Prebuilt,
): Promise<void> {
  const aggregateId = header.aggregateId;
  const members = new Set(header.members ?? []);
  // Replies recorded after the read the members came from, but whose own read saw the aggregate
  // still open: they are late by definition, and this is where they are told so.
  // Replies received after the deadline in force are never members: routed late here too.
  // The owner, with its result built, skips the read when no reply outside the member set can
  // exist (membersAreAll): the read would route nothing and rebuild nothing.
  // Every recipient replied then: no cancellation is owed either.
  if (prebuilt && membersAreAll(header, definition)) {
    await publishAndClose(ctx, header, definition, prebuilt.message);
    return;
  }
  const after = await ctx.store.readAggregate(aggregateId);
  if (definition) {
    const inTime = new Set(onTimeReplies(header, after.replies).map((r) => r.replyId));
    for (const reply of after.replies) {
      if (members.has(reply.replyId)) continue;
      // Reported unknown before the open, and recorded in a pack since (late.ts, publishUnknownOutput).
      if (reply.owes === 'unknown') {
        await publishUnknownOutput(ctx, {
          aggregateId,
          replyId: reply.replyId,
          message: {
            messageId: reply.messageId ?? '',
            body: reply.payloadRef ? '' : reply.payload,
            attributes: {},
            retained: true,
          },
          definition: reply.definition,
          shards: [header.shards ?? 1],
        });
        continue;
      }
      // Found late before: done, unless this completer's mark still owes its late output (the send
      // failed: its reply's message was acknowledged long before, nothing else sends it).
      if (reply.late && reply.owes !== 'late') continue;
      await routeLate(
        ctx,
        definition,
        header,
        reply.replyId,
        {
          ...(reply.messageId ? { messageId: reply.messageId } : {}),
          body: reply.payloadRef ? '' : reply.payload,
          retained: true,
        },
        inTime.has(reply.replyId)
          ? fixedReason(header)
          : (afterRecipientDeadline(header, reply) ?? AFTER_DEADLINE),
        true,
      );
    }
  }
  let message = prebuilt?.message;
  let request = prebuilt?.request;
  if (!message) {
    const found = after.replies.filter((r) => members.has(r.replyId));
    const built = await buildOutput(
      ctx,
      header,
      definition,
      found,
      header.outcome ?? Outcome.COMPLETED,
      RESUME_LIMITS,
    );
    // One copy per member id (the read resolves copies), so a count short of the sealed set means
    // a member's item is gone: the result would be another one under the same id.
    if (built.outcome !== header.outcome || found.length !== members.size) {
      // The sealed result cannot be reproduced (a stored body or a member is gone, a budget ran
      // out): never publish a different result under the same id. It stays completing and alarms.
      ctx.log.error('a sealed result cannot be rebuilt', {
        aggregateId,
        alarm: Alarm.COMPLETION_STUCK,
        sealed: header.outcome,
        rebuilt: built.outcome,
        reason: built.reason,
        members: members.size,
        found: found.length,
      });
      ctx.metrics?.count(MetricName.COMPLETIONS_STUCK, header.definition);
      throw new Error(`aggregate ${aggregateId}: sealed outcome ${header.outcome} could not be rebuilt`);
    }
    message = built.message;
    request = built.request;
  }
  // Every reply id recorded, failed or late included: the read above, no other.
  const replied = new Set(after.replies.map((r) => r.replyId));
  await publishAndClose(ctx, header, definition, message, () =>
    sendCancellations(ctx, header, definition, replied, request),
  );
}

/**
 * Whether a sealed aggregate's member set holds every reply id it can ever have recorded, so that
 * no reply item outside it exists: a fan-out's aggregate (`askedUpTo`, written only by its
 * fan-out's open) of a splitter or recipient list, whose replies are recorded only with an index
 * below `expected` (replies.ts, refusalOf), sealed with all `expected` of them. Then the read
 * after the seal would find only members: none late, and the owner's result already built.
 */
export function membersAreAll(header: AggregateHeader, definition: Definition | undefined): boolean {
  const expected = header.expected;
  const type = definition?.fanOut?.type;
  if (expected === undefined || header.askedUpTo === undefined) return false;
  if (type !== 'splitter' && type !== 'recipient-list') return false;
  const members = new Set(header.members ?? []);
  if (members.size !== expected) return false;
  for (let i = 0; i < expected; i += 1) if (!members.has(String(i))) return false;
  return true;
}

/**
 * Step 4 and 5: publishes the result under the lease, sends the cancellations (`cancel`, after the
 * terminal output and never before it), then closes the aggregate.
 */
async function publishAndClose(
  ctx: FaninContext,
  header: AggregateHeader,
  definition: Definition | undefined,
  message: OutputMessage,
  cancel?: () => Promise<unknown>,
): Promise<void> {
  const lease = header.lease as string;
  const aggregateId = header.aggregateId;
  // A paused owner may wake after its lease was taken over: check before publishing again.
  if (ctx.clock() >= (header.leaseUntil ?? 0) - ctx.completionLeaseMs / 2) {
    const current = await ctx.store.getHeader(aggregateId);
    if (current?.status !== AggregateStatus.COMPLETING || current.lease !== lease) return;
  }
  const outcome = header.outcome ?? Outcome.COMPLETED;
  try {
    await ctx.outputs.publish(OUTPUT_OF[outcome], message, {
      eventBridge: definition?.outputs.eventBridge ?? false,
      ...(header.emitted ? { skip: header.emitted } : {}),
    });
  } catch (error) {
    if (error instanceof OutputChannelError) {
      // Record what was delivered, so no retry sends it again; the failing channel alarms.
      if (error.delivered.length > 0) await ctx.store.markEmitted(aggregateId, lease, error.delivered);
      ctx.log.error('an output channel failed', {
        aggregateId,
        alarm: Alarm.OUTPUT_CHANNEL_FAILED,
        channel: error.channel,
        error: describeError(error.cause),
      });
    } else if (error instanceof OutputTooLargeError) {
      ctx.log.error('a sealed result is too large for its output', {
        aggregateId,
        alarm: Alarm.COMPLETION_STUCK,
      });
      ctx.metrics?.count(MetricName.COMPLETIONS_STUCK, header.definition);
    }
    throw error;
  }
  await cancel?.();
  const retention = definition?.tombstoneRetentionSeconds ?? 30 * 24 * 3600;
  // The tombstone outlives every item of its aggregate (they expire after the life the header
  // fixed at open): once TTL removes it, nothing of the aggregate is left for an aggregate opened
  // again under the same id to find.
  const expiresAt = Math.max(
    Math.floor(ctx.clock() / 1000) + retention,
    definition ? replyExpiry(ctx, definition, header) : 0,
  );
  const closed = await ctx.store.close(aggregateId, lease, expiresAt);
  ctx.log.info(closed ? 'aggregate closed' : 'aggregate closed by another invocation', {
    aggregateId,
    definition: header.definition,
    outcome,
  });
}

interface Built {
  readonly outcome: Outcome;
  readonly reason?: string;
  readonly message: OutputMessage & { outcome: Outcome };
  /** The stored request as read (kept requests only): what cancellations recompute recipients from. */
  readonly request?: unknown;
}

/**
 * The terminal output of an aggregate: a function of its header (completingAt included), its
 * member replies and the request, so the owner and any resumer build the same message.
 */
async function buildOutput(
  ctx: FaninContext,
  header: AggregateHeader,
  definition: Definition | undefined,
  members: readonly StoredReply[],
  outcome: Outcome,
  limits: ExpressionLimits,
): Promise<Built> {
  const base = {
    // One id per aggregate whatever the outcome: a rebuilt output can never be a second, different one.
    id: resultId(header.aggregateId),
    aggregateId: header.aggregateId,
    definition: header.definition,
    openedAt: header.openedAt,
    // The seal's time: the owner builds with the time it seals at, a resumer reads it back.
    closedAt: header.completingAt ?? ctx.clock(),
    counts: { expected: header.expected ?? null, received: members.length, failed: 0 },
    completedBy: header.completedBy ?? null,
    // Failed replies (within the tolerance, or the ones that failed it), beside the result.
    failures: [] as { replyId: string; error: string; body: unknown }[],
  };
  let request: unknown;
  const failed = (reason: string, missing: unknown[] = []): Built => ({
    outcome: Outcome.FAILED,
    reason,
    request,
    message: {
      ...base,
      type: 'fanin.aggregate.failed',
      outcome: Outcome.FAILED,
      reason,
      result: null,
      missing,
    },
  });
  let replies: ReplyRecord[];
  try {
    const storedRequest =
      header.requestId && definition && keepsRequest(definition)
        ? await ctx.store.getRequest(header.aggregateId)
        : undefined;
    request = storedRequest ? JSON.parse(await loadStored(ctx, storedRequest)) : undefined;
    replies = await Promise.all(members.map((r) => loadReply(ctx, r)));
  } catch (error) {
    if (!isGone(error)) throw error;
    return failed(`a stored body of the aggregate is gone (${describeError(error)})`);
  }
  const missing = missingOf(header, replies, request, base.closedAt);
  // Each recipient's fate, where the definition looks after its responders (engine/responders.ts).
  const recipients = definition?.responders ? recipientFates(header, members, base.closedAt) : undefined;
  if (recipients) Object.assign(base, { recipients });
  const split = separateFailures(members, replies);
  base.failures.push(...split.failures);
  base.counts.failed = base.failures.length;
  replies = split.successes;
  if (header.outcome === Outcome.FAILED && header.reason !== undefined) return failed(header.reason, missing);
  if (!definition) return failed(`unknown definition "${header.definition}"`, missing);
  if (outcome === Outcome.TIMED_OUT && definition.onTimeout === 'discard') {
    // The definition discards a timed-out aggregate's partial result (Camel's
    // discardOnCompletionTimeout): its outcome, counts and missing list only.
    const message = {
      ...base,
      type: `fanin.aggregate.${outcome}`,
      outcome,
      result: null,
      discarded: true,
      missing,
    };
    return { outcome, message, request };
  }
  let result: unknown;
  try {
    result = await aggregate(definition, replies, {
      aggregateId: header.aggregateId,
      definition: header.definition,
      ...(header.expected !== undefined ? { expected: header.expected } : {}),
      params: header.params,
      request,
      limits,
      // The seal's time, never the clock: a rebuilt result is the sealed one, byte for byte.
      at: base.closedAt,
    });
  } catch (error) {
    if (!(error instanceof ExpressionError)) throw error;
    return failed(error.message, missing);
  }
  const message = { ...base, type: `fanin.aggregate.${outcome}`, outcome, result, missing };
  if (!ctx.payloads && Buffer.byteLength(JSON.stringify(message)) > MAX_INLINE_OUTPUT_BYTES) {
    // Retrying cannot make it fit: decided here, before the seal, so every attempt agrees.
    return failed(
      `the result is ${Buffer.byteLength(JSON.stringify(message))} bytes, more than SQS takes, and no payload bucket is configured`,
      missing,
    );
  }
  return { outcome, message, request };
}

/** A stored body that no longer exists (an S3 object expired or deleted), however it was wrapped. */
function isGone(error: unknown): boolean {
  for (
    let e = error;
    e instanceof Error || (e && typeof e === 'object');
    e = (e as { cause?: unknown }).cause
  ) {
    const { name, message } = e as { name?: unknown; message?: unknown };
    if (name === 'NoSuchKey' || name === 'NotFound') return true;
    if (typeof message === 'string' && /NoSuchKey|does not exist/i.test(message)) return true;
    if (!(e as { cause?: unknown }).cause) break;
  }
  return false;
}

/** Missing reply ids, with the recipient or item label the request gave them when there is one. */
/**
 * Failed replies are listed beside a result (or a snapshot), in reply order, and never passed to
 * the aggregation algorithm as successes.
 */
export function separateFailures(
  members: readonly StoredReply[],
  replies: readonly ReplyRecord[],
): { failures: { replyId: string; error: string; body: unknown }[]; successes: ReplyRecord[] } {
  const failing = new Map(members.flatMap((r) => (r.failure === undefined ? [] : [[r.replyId, r.failure]])));
  const failures = [...replies].sort(byReplyOrder).flatMap((reply) => {
    const error = failing.get(reply.replyId);
    return error === undefined ? [] : [{ replyId: reply.replyId, error, body: reply.body }];
  });
  return { failures, successes: replies.filter((r) => !failing.has(r.replyId)) };
}

/** A stored reply as the aggregation algorithms take it: its body loaded and parsed. */
export async function loadReply(ctx: FaninContext, reply: StoredReply): Promise<ReplyRecord> {
  return {
    replyId: reply.replyId,
    body: JSON.parse(await loadStored(ctx, reply)),
    receivedAt: reply.receivedAt,
  };
}

/** The expected reply ids not among `replies`, labelled from the request (results and snapshots). */
export function missingOf(
  header: AggregateHeader,
  replies: readonly ReplyRecord[],
  request: unknown,
  at?: number,
): { replyId: string; label?: string; asked?: false; timedOut?: true }[] {
  if (header.expected === undefined || replies.length >= header.expected) return [];
  const missing = labelMissing(
    missingReplyIds(
      header.expected,
      replies.map((r) => r.replyId),
    ),
    request,
  );
  const asked = header.askedUpTo;
  // Sub-requests its fan-out never sent (it was stopped before them, and not yet resumed): said
  // so; recipients whose own deadline had passed by `at` (engine/responders.ts): timed out.
  return missing.map((m) => {
    if (asked !== undefined && Number(m.replyId) >= asked) return { ...m, asked: false as const };
    const due = at === undefined ? undefined : ownDeadline(header, m.replyId);
    return due !== undefined && at !== undefined && due <= at ? { ...m, timedOut: true as const } : m;
  });
}

export function labelMissing(ids: string[], request: unknown): { replyId: string; label?: string }[] {
  const labels = (request as { labels?: unknown } | undefined)?.labels;
  return ids.map((replyId) => {
    const label = Array.isArray(labels) ? labels[Number(replyId)] : undefined;
    return typeof label === 'string' ? { replyId, label } : { replyId };
  });
}

/** The packs the members of a seal are read from: pack key → member ids (absent: their own items). */
function sourcesOf(members: readonly StoredReply[]): Record<string, string[]> {
  const sources: Record<string, string[]> = {};
  for (const member of members) {
    if (member.pack === undefined) continue;
    sources[member.pack] = [...(sources[member.pack] ?? []), member.replyId];
  }
  return sources;
}
