import type { Definition } from '../engine/definition.ts';
import { completionStageOf } from '../engine/lifecycle.ts';
import type { AggregateSnapshot } from '../ports.ts';
import { completeAggregate, resumeCompletion } from './complete.ts';
import type { FaninContext } from './context.ts';
import { decideCompletion } from './decide-completion.ts';
import { onTime } from './late.ts';

/**
 * Evaluates completion on an aggregate as read in one consistent query, after a batch of replies
 * is recorded and after a fan-out: on the replies that may be members (valid, and received before
 * the deadline in force: late.ts), decided by decide-completion.ts, and the attempt to complete it
 * (complete.ts) when that says so. The decision is taken on the whole set (a score threshold on
 * the best score so far), so it never depends on which invocation read last.
 */
export async function evaluate(
  ctx: FaninContext,
  definition: Definition,
  snapshot: AggregateSnapshot,
): Promise<'completed' | 'waiting' | 'lost'> {
  const header = snapshot.header;
  if (!header) return 'waiting';
  const stage = completionStageOf(header);
  if (stage === 'completing') {
    await resumeCompletion(ctx, header);
    return 'waiting';
  }
  if (stage !== 'open') return 'waiting';
  // Only replies received before the deadline in force may be members (late.ts).
  const decision = await decideCompletion(ctx, definition, header, onTime(snapshot).replies, 'reply');
  if (!decision.complete) return 'waiting';
  return (await completeAggregate(ctx, header.aggregateId, decision, snapshot)) ? 'completed' : 'lost';
}
