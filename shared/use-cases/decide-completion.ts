import { decisionDueAt } from '../engine/completion/deadline.ts';
import type { Decision } from '../engine/completion/decision.ts';
import { decide, tallyOf } from '../engine/completion/plan.ts';
import { predicateHolds, predicateInput, readsRequest } from '../engine/completion/predicate-evaluation.ts';
import type { ReplyTally } from '../engine/completion/tally.ts';
import type { Definition } from '../engine/definition.ts';
import { keepsRequest } from '../engine/keeps-request.ts';
import { settlementAt } from '../engine/responders.ts';
import { ExpressionError } from '../errors.ts';
import type { AggregateHeader, StoredReply } from '../ports.ts';
import type { FaninContext } from './context.ts';
import { loadStored } from './stored-payloads.ts';

/**
 * When a decision is taken on an aggregate's members:
 * - `reply`: after replies were recorded (or a fan-out), by its completion rule;
 * - `deadline`: its deadline's decision time has passed (a timer, the sweeper) — its rule first,
 *   as after a reply (a reply recorded whose evaluation never ran completes it by its rule, never
 *   as timed out), then the deadline's;
 * - `due`: as `deadline` once its deadline's decision time (decisionDueAt) has passed by the
 *   clock, else as `reply` (a completer deciding again on the members of another caller's ending).
 */
export type DecisionTime = 'reply' | 'deadline' | 'due';

/**
 * The one place the use cases decide completion (the engine's plan, engine/completion/plan.ts),
 * on the aggregate exactly as read: the `members` of `header`, the replies that may be members
 * (valid, received before the deadline in force: late.ts). A definition with a completion
 * predicate has it evaluated on that set (bounded like a `custom` aggregation) when the plan asks
 * for it, so the set that satisfied it is the set the seal fixes.
 *
 * Recipients past their own deadlines with no reply (engine/responders.ts) are settled as timed
 * out by the clock of this decision: they count toward "all arrived" (`all-settled`), and once
 * every recipient is settled a rule not met ends the aggregate as its deadline would
 * (`responders-settled`).
 *
 * A predicate that fails or exceeds its budget decides the aggregate `failed`, with the reason,
 * at that reply — once, before the seal, like a failing `custom` aggregation; it is never retried.
 * Failures beyond the tolerance end the aggregate before the predicate is evaluated.
 */
export async function decideCompletion(
  ctx: FaninContext,
  definition: Definition,
  header: AggregateHeader,
  members: readonly StoredReply[],
  at: DecisionTime,
): Promise<Decision> {
  const counted = tallyOf(definition, header, members);
  const best = counted.best;
  // Recipients past their own deadlines with no reply are settled (engine/responders.ts).
  const settlement = settlementAt(header, new Set(members.map((r) => r.replyId)), ctx.clock());
  const tally =
    settlement.timedOut.length > 0
      ? { ...counted.tally, timedOut: settlement.timedOut.length }
      : counted.tally;
  const reply = { type: 'reply', score: best } as const;
  const asked = decide(definition, { ...tally, predicate: 'unevaluated' }, reply);
  const byRule =
    'evaluate' in asked
      ? decide(
          definition,
          { ...tally, predicate: await predicateOn(ctx, definition, header, members, asked.evaluate) },
          reply,
        )
      : asked;
  if (byRule.complete) return byRule;
  const due = decisionDueAt(header);
  const deadlineDue = at !== 'reply' && due !== undefined && ctx.clock() >= due;
  if (settlement.allSettled && !deadlineDue) return decide(definition, tally, { type: 'settled' });
  if (at === 'reply' || (at === 'due' && !deadlineDue)) return byRule;
  return decide(definition, tally, { type: 'deadline' });
}

/** The completion predicate on the members: whether it holds, or why it failed. */
async function predicateOn(
  ctx: FaninContext,
  definition: Definition,
  header: AggregateHeader,
  members: readonly StoredReply[],
  expression: string,
): Promise<Exclude<ReplyTally['predicate'], 'unevaluated' | undefined>> {
  try {
    return await predicateHolds(expression, await inputOf(ctx, definition, header, members, expression));
  } catch (error) {
    if (!(error instanceof ExpressionError)) throw error;
    return { error: error.message };
  }
}

async function inputOf(
  ctx: FaninContext,
  definition: Definition,
  header: AggregateHeader,
  members: readonly StoredReply[],
  expression: string,
): Promise<Record<string, unknown>> {
  const loaded = await Promise.all(
    members.map(async (r) => ({
      replyId: r.replyId,
      body: JSON.parse(await loadStored(ctx, r)) as unknown,
      receivedAt: r.receivedAt,
      failure: r.failure,
    })),
  );
  const stored =
    readsRequest(expression) && header.requestId && keepsRequest(definition)
      ? await ctx.store.getRequest(header.aggregateId)
      : undefined;
  const request = stored ? (JSON.parse(await loadStored(ctx, stored)) as unknown) : undefined;
  return predicateInput(
    loaded.filter((r) => r.failure === undefined),
    loaded.flatMap((r) =>
      r.failure === undefined ? [] : [{ replyId: r.replyId, error: r.failure, body: r.body }],
    ),
    {
      aggregateId: header.aggregateId,
      definition: header.definition,
      ...(header.expected !== undefined ? { expected: header.expected } : {}),
      params: header.params,
      ...(request !== undefined ? { request } : {}),
    },
  );
}
