import type { Definition } from '../engine/definition.ts';
import { REPLY_BLOCK_SIZE } from '../engine/members.ts';
import type { AggregateHeader, ReplyToRecord } from '../ports.ts';
import { replyExpiry } from './aggregate-life.ts';
import type { FaninContext } from './context.ts';

/**
 * The reply path's look at a large splitter or recipient-list fan-out waiting for all its replies
 * (engine/completion/plan.ts, completionTrigger `blocks`; docs/hot-aggregates.md): its reply set is
 * read only once every block of reply ids is in, so reads grow with its fan-out instead of its
 * square.
 */

/**
 * Whether every block of a large fan-out's reply ids is in. Each batch reads only the blocks its
 * replies belong to (one range query each); a block found complete is marked with a tiny item,
 * and only then are the marks counted. Every reply's put comes before its own block read, so the
 * last reply of the last block always finds every block marked (or a racing handler does).
 */
export async function blocksComplete(
  ctx: FaninContext,
  definition: Definition,
  header: AggregateHeader,
  records: readonly ReplyToRecord[],
): Promise<boolean> {
  const expected = header.expected as number;
  const blocks = new Set(records.map((r) => Math.floor(Number(r.replyId) / REPLY_BLOCK_SIZE)));
  let marked = false;
  for (const block of blocks) {
    const first = block * REPLY_BLOCK_SIZE;
    const last = Math.min(expected, first + REPLY_BLOCK_SIZE) - 1;
    if ((await ctx.store.countRange(header.aggregateId, first, last, header.shards)) < last - first + 1)
      continue;
    await ctx.store.markBlockComplete(header.aggregateId, block, replyExpiry(ctx, definition, header));
    marked = true;
  }
  if (!marked) return false;
  return (await ctx.store.countCompleteBlocks(header.aggregateId)) >= Math.ceil(expected / REPLY_BLOCK_SIZE);
}
