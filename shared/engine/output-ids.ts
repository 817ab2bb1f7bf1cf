/**
 * The ids of fanin's outputs: `<aggregate>/result`, `<aggregate>/late/<reply>`,
 * `<aggregate>/unknown/<reply>`, `<aggregate>/snapshot/<period>`. An output id is what consumers
 * (and SQS FIFO, by its SHA-256) deduplicate on, so two different outputs must never share one.
 * Aggregate and reply ids are chosen by messages and may hold `/`: joined as they are, aggregate
 * `p` with late reply `q/late/r` and aggregate `p/late/q` with late reply `r` would both be
 * `p/late/q/late/r`. Each id is therefore written with `%` and `/` percent-encoded, which leaves
 * every id without them unchanged and makes the parts of an output id unambiguous.
 */

/** An aggregate or reply id as it stands in an output id: `%` → `%25`, `/` → `%2F`. */
export function outputIdPart(id: string): string {
  return id.replace(/%/g, '%25').replace(/\//g, '%2F');
}

/** The id of an aggregate's result (one per aggregate, whatever its outcome). */
export function resultId(aggregateId: string): string {
  return `${outputIdPart(aggregateId)}/result`;
}

/** The id of a reply's late or unknown output. */
export function replyOutputId(aggregateId: string, kind: 'late' | 'unknown', replyId: string): string {
  return `${outputIdPart(aggregateId)}/${kind}/${outputIdPart(replyId)}`;
}

/** The id of an open aggregate's snapshot `period`. */
export function snapshotId(aggregateId: string, period: number): string {
  return `${outputIdPart(aggregateId)}/snapshot/${period}`;
}
