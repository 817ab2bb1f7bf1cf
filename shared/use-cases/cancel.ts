import { createHash } from 'node:crypto';
import {
  CANCELLATION_TYPE,
  type Cancellation,
  CancellationAttribute,
  cancellationsOf,
} from '../engine/cancellation.ts';
import { Outcome } from '../engine/constants.ts';
import { WireAttribute } from '../engine/correlation.ts';
import type { Definition } from '../engine/definition.ts';
import { isUnfixable } from '../errors.ts';
import { MetricName } from '../observability/metric-names.ts';
import { describeError } from '../observability/redaction.ts';
import type { AggregateHeader, SubRequest } from '../ports.ts';
import type { FaninContext } from './context.ts';

/**
 * The message that cancels one recipient's sub-request: sent to the queue the sub-request went
 * to, in the sub-request's message group, with a deduplication id of its own that is the same
 * on every attempt (a FIFO queue keeps one copy of a notice sent again after a crash).
 */
export function cancellationNotice(header: AggregateHeader, notice: Cancellation): SubRequest {
  const outcome = header.outcome ?? Outcome.COMPLETED;
  const completedBy = header.completedBy ?? '';
  return {
    target: notice.target,
    body: JSON.stringify({
      type: CANCELLATION_TYPE,
      aggregateId: header.aggregateId,
      replyId: notice.replyId,
      definition: header.definition,
      outcome,
      completedBy: header.completedBy ?? null,
    }),
    attributes: {
      [WireAttribute.AGGREGATE_ID]: header.aggregateId,
      [WireAttribute.REPLY_ID]: notice.replyId,
      [WireAttribute.DEFINITION]: header.definition,
      [CancellationAttribute.CANCELLED]: outcome,
      ...(completedBy !== '' ? { [CancellationAttribute.COMPLETED_BY]: completedBy } : {}),
    },
    deduplicationId: createHash('sha256')
      .update(`${header.aggregateId}/${notice.replyId}/cancelled`)
      .digest('hex'),
    groupId: header.aggregateId.slice(0, 128),
  };
}

/**
 * Sends the cancellation notices of an aggregate that has ended, after its terminal output and
 * before its close (so a completer that crashes between the two leaves it `completing`, and the
 * resumer publishes the same output and sends them). `replied` is every reply id the completer's
 * read after the seal found. A definition that does not opt in returns at once, sending nothing.
 *
 * A queue that no longer exists, or may no longer be used, cannot be fixed by a retry: logged,
 * and the aggregate closes. Any other failure goes on (the completion is retried from its lease).
 *
 * @returns how many notices were sent.
 */
export async function sendCancellations(
  ctx: FaninContext,
  header: AggregateHeader,
  definition: Definition | undefined,
  replied: ReadonlySet<string>,
  request: unknown,
): Promise<number> {
  const notices = cancellationsOf(definition, header, replied, request, ctx.recipients);
  if (notices.length === 0) return 0;
  try {
    await ctx.sender.send(notices.map((notice) => cancellationNotice(header, notice)));
  } catch (error) {
    if (!isUnfixable(error)) throw error;
    ctx.log.error('cancellation notices could not be sent', {
      aggregateId: header.aggregateId,
      definition: header.definition,
      error: describeError(error),
    });
    return 0;
  }
  ctx.metrics?.count(MetricName.CANCELLATIONS_SENT, header.definition, notices.length);
  ctx.log.info('cancellation notices sent', {
    aggregateId: header.aggregateId,
    definition: header.definition,
    notices: notices.length,
  });
  return notices.length;
}
