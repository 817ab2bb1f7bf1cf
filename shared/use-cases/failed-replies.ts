import { failureOf } from '../engine/completion/failures.ts';
import { completionStageOf } from '../engine/lifecycle.ts';
import { attemptOf, failedReplyCourse } from '../engine/retries.ts';
import { MetricName } from '../observability/metric-names.ts';
import type { AggregateHeader, RawMessage } from '../ports.ts';
import type { FaninContext } from './context.ts';

/** What of a reply (record-replies.ts, `Reply`) its course is judged on. */
export interface FailedReplyLike {
  readonly raw: Pick<RawMessage, 'attributes'>;
  readonly replyId: string;
  /** When it arrived; else now. */
  readonly receivedAt?: number;
}

/** How many times a failed reply's course is judged again after its keep lost to a round or a copy. */
const KEEP_LOOKS = 3;

/**
 * Failed replies a round of retries will answer (a definition's `responders.retry.failedReplies`,
 * engine/retries.ts): each failed reply of an open aggregate whose recipient still has a retry
 * ahead of it (or a later attempt out already) is kept on the header (`failedAttempts`, one
 * conditional update, only while open, only from the round read, only for a later attempt than
 * the one kept) instead of recorded, and logged; a copy of a kept one changes nothing. Both are
 * settled here: the caller records only the replies returned. A failure with no retry ahead is
 * returned, to be recorded as its recipient's reply.
 *
 * Judged on a consistent read of the header (the eventually consistent one the reply path read
 * first may miss a round or a kept failure). A keep that loses to a round recorded meanwhile, or
 * to a copy kept meanwhile, is judged again on the header read again. Nothing here costs anything
 * for a definition that does not retry failures, or for a batch without a failed reply.
 */
export async function keepRetriedFailures<R extends FailedReplyLike>(
  ctx: FaninContext,
  header: AggregateHeader,
  replies: readonly R[],
): Promise<readonly R[]> {
  if (header.params.retry?.failedReplies !== true || completionStageOf(header) !== 'open') return replies;
  const failed = replies.filter((r) => failureOf(r.raw.attributes) !== undefined);
  if (failed.length === 0) return replies;
  let current = await ctx.store.getHeader(header.aggregateId);
  const settled = new Set<R>();
  for (const reply of failed) {
    for (let look = 1; ; look += 1) {
      if (!current || completionStageOf(current) !== 'open') return replies.filter((r) => !settled.has(r));
      const attempt = attemptOf(reply.raw.attributes, current.params.retry);
      const course = failedReplyCourse(current, reply.replyId, attempt, reply.receivedAt ?? ctx.clock());
      if (course === 'record') break;
      const fields = {
        aggregateId: current.aggregateId,
        definition: current.definition,
        replyId: reply.replyId,
        attempt,
      };
      if (course === 'copy') {
        settled.add(reply);
        ctx.log.info('failed reply changed nothing: a failure of this attempt is kept already', fields);
        break;
      }
      const round = current.retryRound ?? 0;
      if (await ctx.store.keepFailedAttempt(current.aggregateId, reply.replyId, attempt, round)) {
        current = {
          ...current,
          failedAttempts: { ...(current.failedAttempts ?? {}), [reply.replyId]: attempt },
        };
        settled.add(reply);
        ctx.metrics?.count(MetricName.FAILED_REPLIES_RETRIED, current.definition);
        ctx.log.info('failed reply kept: its recipient is asked again', fields);
        break;
      }
      if (look >= KEEP_LOOKS)
        throw new Error(
          `the failed reply ${reply.replyId} of aggregate ${current.aggregateId} could not be kept after ${look} looks`,
        );
      current = await ctx.store.getHeader(current.aggregateId);
    }
  }
  return replies.filter((r) => !settled.has(r));
}
