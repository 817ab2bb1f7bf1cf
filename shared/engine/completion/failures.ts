import { MAX_FAILURE_TEXT_LENGTH } from '../limits.ts';

/**
 * The message attribute by which a responder answers with a failure instead of a result (Step
 * Functions' `SendTaskFailure`): its value is the error, one line of at most
 * {@link MAX_FAILURE_ERROR_LENGTH} characters kept; the body (any JSON) is kept as the failure's
 * detail. A failed reply is recorded like any reply (one conditional put, idempotent) and counts
 * toward "all arrived", but never toward a count, `first`, a score or the aggregation algorithm.
 */
export const FAILURE_ATTRIBUTE = 'fanin-failure';
/** The longest error text kept from a `fanin-failure` attribute (the bound in limits.ts). */
export const MAX_FAILURE_ERROR_LENGTH = MAX_FAILURE_TEXT_LENGTH;

/** The error of a failed reply, from its attributes; `undefined` for a reply that is a result. */
export function failureOf(attributes: Readonly<Record<string, string>>): string | undefined {
  const value = attributes[FAILURE_ATTRIBUTE];
  if (value === undefined) return undefined;
  const error = value.replace(/\s+/g, ' ').trim().slice(0, MAX_FAILURE_ERROR_LENGTH);
  return error === '' ? 'failed' : error;
}

/**
 * Why the failed replies of an aggregate are more than its definition tolerates, or `undefined`
 * when they are within it. Without `toleratedFailureCount` or `toleratedFailurePercentage` no
 * failure is tolerated; with both, exceeding either is too many (as Step Functions' Map does).
 *
 * The percentage is of the expected replies; an aggregate that expects no known number judges it
 * only on the set it would close with (`final`), since any first failure is 100% of what arrived.
 */
export function failuresBeyondTolerance(
  definition: {
    readonly toleratedFailureCount?: number | undefined;
    readonly toleratedFailurePercentage?: number | undefined;
  },
  state: { readonly expected?: number; readonly received: number; readonly failed?: number },
  final: boolean,
): string | undefined {
  const failed = state.failed ?? 0;
  if (failed === 0) return undefined;
  const { toleratedFailureCount: count, toleratedFailurePercentage: percentage } = definition;
  const replies = `${failed} ${failed === 1 ? 'reply' : 'replies'} failed`;
  if (count === undefined && percentage === undefined) return `${replies}; the definition tolerates none`;
  if (count !== undefined && failed > count)
    return `${replies}, more than the ${count} tolerated (toleratedFailureCount)`;
  if (percentage === undefined) return undefined;
  const total = state.expected ?? (final ? state.received : undefined);
  if (total === undefined || total === 0 || failed * 100 <= percentage * total) return undefined;
  const share = Math.round((failed * 10_000) / total) / 100;
  return `${failed} of ${total} replies failed (${share}%), more than the ${percentage}% tolerated (toleratedFailurePercentage)`;
}
