import { nextDueAt } from '../engine/completion/deadline.ts';
import type { Definition } from '../engine/definition.ts';
import { retriedAfter, retryRoundAt, retrySubRequests } from '../engine/retries.ts';
import { isUnfixable } from '../errors.ts';
import { MetricName } from '../observability/metric-names.ts';
import { describeError } from '../observability/redaction.ts';
import type { AggregateSnapshot, StoredReply } from '../ports.ts';
import type { FaninContext } from './context.ts';
import { openingRequestId } from './fan-out.ts';
import { loadStored } from './stored-payloads.ts';
import { subRequestMessage } from './sub-requests.ts';

/**
 * Takes the round of retries due on an open aggregate (engine/retries.ts), as read in `snapshot`
 * with its on-time replies `counted`: the sub-requests of the recipients it asks again are sent
 * to the queues they first went to, then the round is recorded on the header with each
 * recipient's count and the next due time (one conditional update, only while open and only from
 * the round read), and a timer is armed for that time.
 *
 * Sent before recorded: a crash between the two, or a look that loses the record to another one,
 * sends that round once more, with the same reply ids, attempt numbers and deduplication ids. A
 * queue that can no longer be sent to cannot be fixed by a retry: logged, and the round is
 * recorded as taken (its recipients are settled by their deadlines as if silent). A retry names
 * the reply queue the fan-out kept at open (`replyTo`): the one the first attempt named.
 *
 * @returns whether a round was due (taken by this look or another)
 */
export async function takeRetryRound(
  ctx: FaninContext,
  definition: Definition,
  snapshot: AggregateSnapshot,
  counted: readonly StoredReply[],
  now: number,
): Promise<boolean> {
  const header = snapshot.header;
  if (!header) return false;
  const round = retryRoundAt(header, new Set(counted.map((r) => r.replyId)), now);
  if (!round) return false;
  const replyTo = header.replyTo;
  let sent = 0;
  let sentTo: readonly { readonly replyId: string; readonly attempt: number }[] = [];
  if (round.recipients.length > 0 && replyTo !== undefined) {
    const stored = await ctx.store.getRequest(header.aggregateId);
    const request = stored ? JSON.parse(await loadStored(ctx, stored)) : undefined;
    const retries = retrySubRequests(definition, header, request, ctx.recipients, round);
    const envelope = {
      aggregateId: header.aggregateId,
      definition: header.definition,
      replyTo,
      requestId: openingRequestId(header) ?? '',
    };
    const texts = new Map<unknown, string>();
    const messages = retries.map((retry) => {
      let text = texts.get(retry.body);
      if (text === undefined) {
        text = JSON.stringify(retry.body);
        if (retry.body !== null && typeof retry.body === 'object') texts.set(retry.body, text);
      }
      return subRequestMessage(envelope, Number(retry.replyId), retry.target, text, retry.attempt);
    });
    try {
      if (messages.length > 0) await ctx.sender.send(messages);
      sent = messages.length;
      sentTo = retries;
    } catch (error) {
      if (!isUnfixable(error)) throw error;
      ctx.log.error('retries could not be sent', {
        aggregateId: header.aggregateId,
        definition: header.definition,
        round: round.round,
        error: describeError(error),
      });
    }
    if (sent > 0) ctx.metrics?.count(MetricName.RETRIES_SENT, header.definition, sent);
  }
  const retried = retriedAfter(header, { round: round.round, recipients: sentTo });
  const dueAt = nextDueAt({ ...header, retryRound: round.round });
  if (
    !(await ctx.store.recordRetries(header.aggregateId, header.retryRound ?? 0, round.round, retried, dueAt))
  )
    return true;
  if (sent > 0)
    ctx.log.info('retries sent', {
      aggregateId: header.aggregateId,
      definition: header.definition,
      round: round.round,
      retries: sent,
    });
  if (dueAt !== undefined)
    await ctx.timers.arm({ kind: 'deadline', aggregateId: header.aggregateId, dueAt }, now);
  return true;
}
