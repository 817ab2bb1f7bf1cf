import { createHash } from 'node:crypto';
import { WireAttribute } from '../engine/correlation.ts';
import { ATTEMPT_ATTRIBUTE } from '../engine/retries.ts';
import type { SubRequest } from '../ports.ts';

/** What every sub-request of one aggregate carries alike. */
export interface SubRequestEnvelope {
  readonly aggregateId: string;
  readonly definition: string;
  /** The reply partition the aggregate has affinity with (ReplyRouting.replyTo). */
  readonly replyTo: string;
  readonly requestId: string;
}

/**
 * The message of the sub-request with reply id `index`: its attributes name the aggregate, the
 * reply id, the definition, the reply queue and the request; a retry (`attempt` 2 on) carries its
 * attempt number too, and a deduplication id of its own that is the same on every send of that
 * attempt (a FIFO queue keeps one copy of an attempt sent again after a crash, and does not take
 * a retry for a copy of the first send).
 */
export function subRequestMessage(
  envelope: SubRequestEnvelope,
  index: number,
  target: string,
  body: string,
  attempt = 1,
): SubRequest {
  const { aggregateId } = envelope;
  return {
    target,
    body,
    attributes: {
      [WireAttribute.AGGREGATE_ID]: aggregateId,
      [WireAttribute.REPLY_ID]: String(index),
      [WireAttribute.DEFINITION]: envelope.definition,
      [WireAttribute.REPLY_TO]: envelope.replyTo,
      [WireAttribute.REQUEST_ID]: envelope.requestId,
      ...(attempt > 1 ? { [ATTEMPT_ATTRIBUTE]: String(attempt) } : {}),
    },
    deduplicationId: createHash('sha256')
      .update(attempt > 1 ? `${aggregateId}/${index}/${attempt}` : `${aggregateId}/${index}`)
      .digest('hex'),
    groupId: aggregateId.slice(0, 128),
  };
}
