import { byReplyOrder, type ReplyRecord } from '../aggregation.ts';
import { EXPRESSION_LIMITS } from '../constants.ts';
import type { EffectiveParameters } from '../effective-parameters.ts';
import { compileExpression, type ExpressionLimits } from '../expression.ts';

/**
 * What a completion predicate sees and whether it holds (the `predicate` rule, predicate.ts, and
 * an `any` rule's): evaluated by the use cases on the set they read, when the plan asks for it.
 */

/** A failed reply, as the predicate and the outputs list it. */
export interface FailedReply {
  readonly replyId: string;
  /** The responder's `fanin-failure` text. */
  readonly error: string;
  /** The reply's body: the failure's detail. */
  readonly body: unknown;
}

/** What a completion predicate sees besides the replies. */
export interface PredicateContext {
  readonly aggregateId: string;
  readonly definition: string;
  readonly expected?: number;
  readonly params: EffectiveParameters;
  /** The stored request (`{ body, labels }`), when the expression reads `request`. */
  readonly request?: unknown;
  readonly limits?: ExpressionLimits;
}

/**
 * The input of a completion predicate: the aggregate so far, as a `custom` aggregation sees it —
 * `replies` (successful bodies, in reply order), `replyIds`, `failures` (`{ replyId, error, body }`),
 * `received` (every distinct reply, failures included), `expected`, `parameters`, `request`,
 * `aggregateId` and `definition`.
 */
export function predicateInput(
  replies: readonly ReplyRecord[],
  failures: readonly FailedReply[],
  context: PredicateContext,
): Record<string, unknown> {
  const ordered = [...replies].sort(byReplyOrder);
  return {
    replies: ordered.map((r) => r.body),
    replyIds: ordered.map((r) => r.replyId),
    failures: failures.map(({ replyId, error, body }) => ({ replyId, error, body })),
    received: replies.length + failures.length,
    expected: context.expected ?? null,
    parameters: context.params,
    request: context.request ?? null,
    aggregateId: context.aggregateId,
    definition: context.definition,
  };
}

/**
 * Whether a completion predicate holds on the aggregate so far: its value, taken as JSONata's
 * `$boolean` takes it (false, 0, "", null, an empty array or object, nothing at all: no).
 * Bounded in time and depth like a `custom` aggregation; throws an ExpressionError when it fails
 * or exceeds its budget.
 *
 * @example
 * await predicateHolds('$count(replies[rate < 3]) >= 1', predicateInput(replies, [], context));
 */
export async function predicateHolds(
  expression: string,
  input: Record<string, unknown>,
  limits: ExpressionLimits = EXPRESSION_LIMITS,
): Promise<boolean> {
  return truthy(await compileExpression(expression, limits).evaluate(input));
}

/** JSONata's `$boolean` cast, on a plain JSON value. */
export function truthy(value: unknown): boolean {
  if (value === undefined || value === null) return false;
  if (typeof value === 'boolean') return value;
  if (typeof value === 'number') return value !== 0;
  if (typeof value === 'string') return value !== '';
  if (Array.isArray(value)) return value.some(truthy);
  if (typeof value === 'object') return Object.keys(value).length > 0;
  return false;
}

/** Whether an expression reads the request (only then is the stored request loaded for it). */
export function readsRequest(expression: string): boolean {
  return /\brequest\b/.test(expression);
}
