import { CompletedBy } from './decision.ts';
import { countRuleOf } from './plan.ts';

/** A definition's completion, as the plan reads it. */
type Completion = Parameters<typeof countRuleOf>[0];
/** The request's own parameters that change a count (`parameters.count`). */
interface CountParameters {
  readonly count?: number | undefined;
}

/** What choosing a decision's members needs of a recorded reply. */
export interface RecordedReply {
  readonly replyId: string;
  /** When it was recorded: the recording invocation's clock (a copy's: the earliest, as the read resolves it). */
  readonly receivedAt: number;
  readonly failure?: string | undefined;
}

/**
 * How many successful replies the member set of a decision holds, when a count decided it: 1 for
 * `first`, N for `count` or an `any` whose `count` rule decided — the request's `parameters.count`
 * before the rule's own, as the rule counts (count.ts, countReached), the rule's N as the plan
 * knows it (plan.ts, countRuleOf). `undefined` for any other decision (all arrived, a score, a
 * predicate, the deadline, a command, failures): its set is every reply that may be a member.
 */
export function memberCapOf(
  completion: Completion,
  params: CountParameters,
  completedBy: CompletedBy,
): number | undefined {
  if (completedBy === CompletedBy.FIRST) return 1;
  if (completedBy !== CompletedBy.COUNT) return undefined;
  const count = countRuleOf(completion);
  return count === undefined ? undefined : (params.count ?? count);
}

/**
 * The order the store reproduces replies in: recorded time (`receivedAt`), then the reply id —
 * index ids numerically, before any other id, which compare by code unit. The replies of one
 * batch share their recorded time, so within a batch the reply id decides.
 */
export function byRecordedOrder(a: RecordedReply, b: RecordedReply): number {
  if (a.receivedAt !== b.receivedAt) return a.receivedAt - b.receivedAt;
  const na = Number(a.replyId);
  const nb = Number(b.replyId);
  const aIndex = a.replyId !== '' && Number.isInteger(na);
  const bIndex = b.replyId !== '' && Number.isInteger(nb);
  if (aIndex && bIndex && na !== nb) return na - nb;
  if (aIndex !== bIndex) return aIndex ? -1 : 1;
  return a.replyId < b.replyId ? -1 : a.replyId > b.replyId ? 1 : 0;
}

/**
 * The first `cap` successful replies in recorded order ({@link byRecordedOrder}), and every
 * failed one (failed replies never count toward a count, as the tally counts them), in the order
 * given. The rest are not members: the completer's read after the seal routes them late.
 */
export function firstSuccesses<R extends RecordedReply>(replies: readonly R[], cap: number): R[] {
  const successes = replies.filter((r) => r.failure === undefined);
  if (successes.length <= cap) return [...replies];
  const kept = new Set(successes.sort(byRecordedOrder).slice(0, Math.max(0, cap)));
  return replies.filter((r) => r.failure !== undefined || kept.has(r));
}

/**
 * The member set a decision seals, of the replies that may be members (valid, on time): when a
 * count decided it (`first`, `count`, an `any` whose `count` rule decided: {@link memberCapOf}),
 * its first N successes and every failure; for any other decision, every one of them.
 */
export function sealedMembers<R extends RecordedReply>(
  completion: Completion,
  params: CountParameters,
  completedBy: CompletedBy,
  replies: readonly R[],
): R[] {
  const cap = memberCapOf(completion, params, completedBy);
  return cap === undefined ? [...replies] : firstSuccesses(replies, cap);
}
