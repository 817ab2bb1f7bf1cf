import { CompletedBy, type CompletionState, type Decision, decide } from '../engine/completion.ts';
import { Outcome } from '../engine/constants.ts';
import type { Definition } from '../engine/definition.ts';
import { failuresBeyondTolerance } from '../engine/failures.ts';
import { predicateHolds, predicateInput, readsRequest } from '../engine/predicate.ts';
import { predicateOf } from '../engine/rules.ts';
import { ExpressionError } from '../errors.ts';
import type { AggregateHeader, StoredReply } from '../ports.ts';
import { type FaninContext, keepsRequest, loadStored } from './context.ts';

/**
 * Decides completion after replies were recorded, on the aggregate exactly as read: the members
 * `replies` of `header`. A definition with a completion predicate has it evaluated on that set
 * (bounded like a `custom` aggregation), so the set that satisfied it is the set the seal fixes.
 *
 * A predicate that fails or exceeds its budget decides the aggregate `failed`, with the reason,
 * at that reply — once, before the seal, like a failing `custom` aggregation; it is never retried.
 * Failures beyond the tolerance end the aggregate before the predicate is evaluated.
 */
export async function decideOnReplies(
  ctx: FaninContext,
  definition: Definition,
  header: AggregateHeader,
  replies: readonly StoredReply[],
  state: CompletionState,
  score: number | undefined,
): Promise<Decision> {
  const event = { type: 'reply', score } as const;
  const expression = predicateOf(definition.completion);
  if (expression === undefined || failuresBeyondTolerance(definition, state, false) !== undefined)
    return decide(definition, state, event);
  let holds: boolean;
  try {
    holds = await predicateHolds(expression, await inputOf(ctx, definition, header, replies, expression));
  } catch (error) {
    if (!(error instanceof ExpressionError)) throw error;
    return {
      complete: true,
      outcome: Outcome.FAILED,
      completedBy: CompletedBy.PREDICATE,
      reason: `completion predicate: ${error.message}`,
    };
  }
  return decide(definition, { ...state, predicate: holds }, event);
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
