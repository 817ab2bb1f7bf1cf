import type { Prices } from './prices.ts';
import type { Bill } from './usage.ts';

/** What replies cost at the least, per million aggregates of `fanOut` replies, whatever the design. */
export function replyFloorPerMillion(fanOut: number, batching: ReplyFloorBatching, prices: Prices): number {
  return replyFloorBill(fanOut, batching, prices).total;
}

/** How the replies of {@link replyFloorPerMillion} are batched, received and stored. */
export interface ReplyFloorBatching {
  readonly repliesPerBatch: number;
  readonly messagesPerReceive?: number;
  readonly writeUnitsPerReply?: number;
}

/** {@link replyFloorPerMillion} by service: SQS (the responder's send, the receives and the delete). */
export function replyFloorBill(fanOut: number, batching: ReplyFloorBatching, prices: Prices): Bill {
  const perBatch = Math.min(10, batching.repliesPerBatch);
  const perReceive = Math.min(10, batching.messagesPerReceive ?? perBatch);
  const sqs = prices.sqs.standard_per_million_requests * (1 + 1 / perReceive + 1 / perBatch) * fanOut;
  const lambda = (prices.lambda.per_million_requests / batching.repliesPerBatch) * fanOut;
  const dynamodb =
    prices.dynamodb.write_request_unit_per_million * (batching.writeUnitsPerReply ?? 1) * fanOut;
  return { dynamodb, sqs, lambda, stepFunctions: 0, total: dynamodb + sqs + lambda };
}

/** The floor's batching for a phase as measured: its replies per batch and per receive. */
export function measuredFloorBatching(
  measured: {
    readonly replies_per_batch: number;
    readonly reply_receives: number;
    readonly replies_per_aggregate_per_batch: number;
  },
  fanOut: number,
  packedUnitsPerReply: number,
): ReplyFloorBatching {
  const ofOne = Math.min(fanOut, Math.max(1, measured.replies_per_aggregate_per_batch));
  const share = fanOut > 1 ? (ofOne - 1) / (fanOut - 1) : 1;
  return {
    repliesPerBatch: Math.max(1, measured.replies_per_batch),
    messagesPerReceive: measured.reply_receives > 0 ? Math.max(1, 1 / measured.reply_receives) : 1,
    writeUnitsPerReply: 1 - (1 - packedUnitsPerReply) * share,
  };
}
