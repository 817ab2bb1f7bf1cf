import { prose } from './format.ts';
import type { Results } from './schema.ts';

/** How the meter counts units and calls, with the run's calibration of DynamoDB Local. */
export function countingSection(r: Results): string[] {
  return [
    '## How units are counted',
    '',
    prose`- Every DynamoDB call of the benchmark's clients goes through SDK middleware that adds
      \`ReturnConsumedCapacity: 'INDEXES'\``,
    prose`  and counts the answer. DynamoDB Local applies DynamoDB's rules correctly to single-item writes, batch
      writes and reads`,
    prose`  (checked at the start of each run: ${r.calibration.agreeing} of ${r.calibration.probes} probe writes
      agree with the model, and a transaction of items of distinct sizes reports
      ${r.calibration.distinct_transaction.reported} for ${r.calibration.distinct_transaction.model}).`,
    prose`- For \`TransactWriteItems\` it does not: it counts items of equal cost once (ten 3 KB puts in one
      transaction: ${r.calibration.equal_transaction.reported} reported,
      ${r.calibration.equal_transaction.model} by the rules). Transactions are therefore costed by the
      rules: 2 units per KB of each item (the larger of before and after; the image before is the last one
      the meter saw), plus a standard write for each secondary-index entry that changes (index propagation
      follows the commit; if AWS billed it double, add the index units once more).`,
    prose`- A failed conditional write is charged like a write of the existing item, as AWS does. Cancelled
      transactions (conflicts) are not charged in these figures; AWS does not document their cost.`,
    prose`- SQS calls are counted per operation; billed requests count each 64 KB of payload (bodies and
      attributes) as one request. Empty receives are kept apart.`,
    '',
  ];
}
