import { describe, expect, it, vi } from 'vitest';
import { AggregateStatus } from '../../../../shared/engine/constants.ts';
import type { AggregateHeader, ReplyToRecord } from '../../../../shared/ports.ts';
import { blocksComplete } from '../../../../shared/use-cases/completion-trigger.ts';
import { memoryContext } from '../../../support/memory-store.ts';
import { aDefinition } from '../engine/factories.ts';

/**
 * The reply path's look at a large fan-out waiting for all its replies (docs/hot-aggregates.md):
 * reply ids in blocks of 32; a batch reads only its own blocks, marks each it finds complete, and
 * only then counts the marks, so the last reply of the last block finds every block marked.
 */
const BLOCK = 32;
const SPLIT = aDefinition({
  name: 'split',
  fanOut: { type: 'splitter', itemsPath: '$.items', target: 'worker' },
  completion: { strategy: 'all' },
});

function aHeader(expected: number): AggregateHeader {
  return {
    aggregateId: 'big',
    definition: 'split',
    status: AggregateStatus.OPEN,
    expected,
    received: 0,
    lateCount: 0,
    openedAt: 1_000_000,
    closeBy: 2_000_000,
    params: {},
  };
}

const records = (ids: readonly number[]): ReplyToRecord[] =>
  ids.map((i) => ({ replyId: String(i), payload: '{}', receivedAt: 1_000_500, expiresAt: 0 }));
const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);

describe('whether every block of a large fan-out is in', () => {
  it('is false while a block is short, and marks and counts nothing then', async () => {
    const { ctx, ports } = memoryContext([SPLIT]);
    const header = aHeader(BLOCK + 8);
    await ports.store.openAggregate(header);
    const batch = records(range(0, BLOCK - 1));
    await ports.store.putReplies('big', batch);
    const mark = vi.spyOn(ports.store, 'markBlockComplete');
    const counted = vi.spyOn(ports.store, 'countCompleteBlocks');
    expect(await blocksComplete(ctx, SPLIT, header, batch)).toBe(false);
    expect(mark).not.toHaveBeenCalled();
    expect(counted).not.toHaveBeenCalled();
  });

  it('marks a full block, and is true only with the last block, whose size is what remains', async () => {
    const { ctx, ports } = memoryContext([SPLIT]);
    const header = aHeader(BLOCK + 8);
    await ports.store.openAggregate(header);
    const first = records(range(0, BLOCK));
    await ports.store.putReplies('big', first);
    expect(await blocksComplete(ctx, SPLIT, header, first)).toBe(false);
    expect(await ports.store.countCompleteBlocks('big')).toBe(1);

    const last = records(range(BLOCK, BLOCK + 8));
    await ports.store.putReplies('big', last);
    expect(await blocksComplete(ctx, SPLIT, header, last)).toBe(true);
    expect(await ports.store.countCompleteBlocks('big')).toBe(2);
  });

  it('reads only the blocks its replies belong to', async () => {
    const { ctx, ports } = memoryContext([SPLIT]);
    const header = aHeader(3 * BLOCK);
    await ports.store.openAggregate(header);
    const count = vi.spyOn(ports.store, 'countRange');
    await blocksComplete(ctx, SPLIT, header, records([0, 1, 2 * BLOCK]));
    expect(count.mock.calls.map(([, first, last]) => [first, last])).toEqual([
      [0, BLOCK - 1],
      [2 * BLOCK, 3 * BLOCK - 1],
    ]);
  });

  it('after a crash between the mark and the count, the redelivered batch finds every block in', async () => {
    const { ctx, ports } = memoryContext([SPLIT]);
    const header = aHeader(BLOCK);
    await ports.store.openAggregate(header);
    const batch = records(range(0, BLOCK));
    await ports.store.putReplies('big', batch);
    vi.spyOn(ports.store, 'countCompleteBlocks').mockRejectedValueOnce(new Error('injected: crash'));
    await expect(blocksComplete(ctx, SPLIT, header, batch)).rejects.toThrow('injected');
    expect(await blocksComplete(ctx, SPLIT, header, batch)).toBe(true);
  });
});
