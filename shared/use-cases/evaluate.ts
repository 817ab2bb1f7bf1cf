import { meetsThreshold } from '../engine/completion.ts';
import type { Definition } from '../engine/definition.ts';
import { completionStateOf } from '../engine/lifecycle.ts';
import { thresholdRuleOf } from '../engine/rules.ts';
import type { AggregateHeader, AggregateSnapshot, StoredReply } from '../ports.ts';
import { completeAggregate, resumeCompletion } from './complete.ts';
import { decideOnReplies } from './completion-rules.ts';
import type { FaninContext } from './context.ts';
import { onTime } from './late.ts';

/**
 * Completion evaluated on an aggregate as read: which of its replies count, the state they make,
 * and the attempt to complete it (complete.ts) when its rules say so. Evaluated after a batch of
 * replies is recorded and after a fan-out; the timers, snapshots and the completer count replies
 * the same way.
 */

/** The completion state of an aggregate as read: its valid replies counted, its best score. */
export function completionState(definition: Definition, snapshot: AggregateSnapshot) {
  const header = snapshot.header as AggregateHeader;
  const replies = validReplies(header, snapshot.replies);
  let best: number | undefined;
  const threshold = thresholdRuleOf(definition.completion);
  if (threshold !== undefined) {
    const { direction } = threshold;
    for (const reply of replies) {
      if (reply.score === undefined) continue;
      if (best === undefined || meetsThreshold(direction, reply.score, best)) best = reply.score;
    }
  }
  return {
    state: {
      received: replies.length,
      failed: replies.filter((r) => r.failure !== undefined).length,
      params: header.params,
      ...(header.expected !== undefined ? { expected: header.expected } : {}),
    },
    best,
  };
}

/** The replies that count toward an aggregate: not found late, and not naming another definition. */
export function validReplies(header: AggregateHeader, replies: readonly StoredReply[]): StoredReply[] {
  return replies.filter((r) => !r.late && (r.definition === undefined || r.definition === header.definition));
}

/**
 * Evaluates completion on an aggregate as read in one consistent query, on the replies that may
 * be members (valid, and received before the deadline in force: late.ts). The decision is taken on
 * the whole set (a score threshold on the best score so far), so it never depends on which
 * invocation read last.
 */
export async function evaluate(
  ctx: FaninContext,
  definition: Definition,
  snapshot: AggregateSnapshot,
): Promise<'completed' | 'waiting' | 'lost'> {
  const header = snapshot.header;
  if (!header) return 'waiting';
  const stage = completionStateOf(header);
  if (stage === 'completing') {
    await resumeCompletion(ctx, header);
    return 'waiting';
  }
  if (stage !== 'open') return 'waiting';
  // Only replies received before the deadline in force may be members (late.ts).
  const counted = onTime(snapshot);
  const { state, best } = completionState(definition, counted);
  const members = counted.replies;
  const decision = await decideOnReplies(ctx, definition, header, members, state, best);
  if (!decision.complete) return 'waiting';
  return (await completeAggregate(ctx, header.aggregateId, decision, snapshot)) ? 'completed' : 'lost';
}
