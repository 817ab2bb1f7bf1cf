import { Strategy } from '../engine/constants.ts';
import type { Definition } from '../engine/definition.ts';
import { REPLY_BLOCK_SIZE } from '../engine/members.ts';
import type { AggregateHeader, ReplyToRecord } from '../ports.ts';
import { replyExpiry } from './aggregate-life.ts';
import type { FaninContext } from './context.ts';

/**
 * When a batch of recorded replies is worth reading the whole reply set for (docs/hot-aggregates.md):
 * a large aggregate is looked at through block marks or a per-batch counter until the set can be
 * complete, so reads grow with its fan-out instead of its square.
 */

/** Fan-outs above this many index replies detect "all arrived" by blocks instead of reading every reply. */
export const LARGE_FAN_OUT = 128;

/**
 * When a batch of replies needs the whole reply set read:
 * - `never`: no reply can complete the aggregate (strategy `external`, or `timeout` that waits
 *   for its deadline whatever arrives) — only the header is read;
 * - `blocks`: a large splitter or recipient-list fan-out waiting for all its replies — the set is
 *   read only once every block of reply ids is in (see {@link blocksComplete}), so reads stay
 *   proportional to the fan-out instead of growing with its square;
 * - `counter`: any other large aggregate completed by a count — one counter update per batch (not
 *   per reply) says when the set is worth reading;
 * - `read-all`: anything else.
 */
export function completionTrigger(
  definition: Definition,
  header: AggregateHeader,
): 'never' | 'blocks' | 'counter' | 'read-all' {
  const completion = definition.completion;
  if (completion.strategy === Strategy.EXTERNAL) return 'never';
  if (completion.strategy === Strategy.TIMEOUT && !completion.completeWhenAllArrived) return 'never';
  const indexed = definition.fanOut?.type === 'splitter' || definition.fanOut?.type === 'recipient-list';
  const waitsForAll =
    completion.strategy === Strategy.ALL ||
    (completion.strategy === Strategy.TIMEOUT && completion.completeWhenAllArrived);
  const large = completionThreshold(definition, header) > LARGE_FAN_OUT;
  if (large && waitsForAll && indexed) return 'blocks';
  if (large && (waitsForAll || completion.strategy === Strategy.COUNT)) return 'counter';
  return 'read-all';
}

/** How many replies complete the aggregate by count (its expected count, or the strategy's N). */
export function completionThreshold(definition: Definition, header: AggregateHeader): number {
  const expected = header.expected ?? Number.POSITIVE_INFINITY;
  if (definition.completion.strategy === Strategy.COUNT)
    return Math.min(expected, header.params.count ?? definition.completion.count);
  return header.expected ?? 0;
}

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
