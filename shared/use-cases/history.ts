import type { Definition } from '../engine/definition.ts';
import { assembleHistory, type History } from '../engine/history.ts';
import type { AggregateRecords, StateStore } from '../ports.ts';
import { OUTPUT_OF } from './complete.ts';
import { openingRequestId } from './fan-out.ts';

/**
 * The history of one aggregate (`fanin history`, the dashboard): its items read once, read-only,
 * and assembled into a timeline by the engine (shared/engine/history.ts). A store that reads an
 * aggregate's items whole (`readHistory`: DynamoDB) gives every copy and mark; any other gives
 * its reply set and held replies, and the history says what that leaves out.
 */
export async function aggregateHistory(
  store: Pick<StateStore, 'readHistory' | 'readAggregate' | 'listHeld'>,
  aggregateId: string,
  options: {
    readonly definitions?: ReadonlyMap<string, Definition>;
    /** The items already read ({@link readAggregateRecords} of the same store), not read again. */
    readonly records?: AggregateRecords;
  } = {},
): Promise<History> {
  const records = options.records ?? (await readAggregateRecords(store, aggregateId));
  const { header } = records;
  return assembleHistory({
    aggregateId,
    ...(header ? { header } : {}),
    ...(header && openingRequestId(header) ? { requestId: openingRequestId(header) } : {}),
    ...(records.kept ? { kept: records.kept } : {}),
    ...(records.request ? { request: records.request } : {}),
    copies: records.copies,
    marks: records.marks,
    held: records.held,
    ...(header && options.definitions?.get(header.definition)
      ? { definition: options.definitions.get(header.definition) }
      : {}),
    resultOutputs: OUTPUT_OF,
    whole: store.readHistory !== undefined,
  });
}

/** An aggregate's items as a history reads them: whole (`readHistory`), else from its reply set. */
export async function readAggregateRecords(
  store: Pick<StateStore, 'readHistory' | 'readAggregate' | 'listHeld'>,
  aggregateId: string,
): Promise<AggregateRecords> {
  return store.readHistory ? await store.readHistory(aggregateId) : await fromReplySet(store, aggregateId);
}

/** The records a store without `readHistory` can give: one copy per reply, marks only on recorded replies. */
async function fromReplySet(
  store: Pick<StateStore, 'readAggregate' | 'listHeld'>,
  aggregateId: string,
): Promise<AggregateRecords> {
  const [snapshot, held] = await Promise.all([store.readAggregate(aggregateId), store.listHeld(aggregateId)]);
  return {
    ...(snapshot.header ? { header: snapshot.header } : {}),
    copies: snapshot.replies.map((r) => ({
      replyId: r.replyId,
      receivedAt: r.receivedAt,
      ...(r.messageId ? { messageId: r.messageId } : {}),
      ...(r.failure !== undefined ? { failure: r.failure } : {}),
      ...(r.pack ? { pack: r.pack } : {}),
    })),
    marks: snapshot.replies
      .filter((r) => r.late)
      .map((r) => ({ replyId: r.replyId, ...(r.owes ? { owes: r.owes } : {}) })),
    held,
  };
}
