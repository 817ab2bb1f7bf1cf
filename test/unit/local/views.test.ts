import { beforeEach, describe, expect, it } from 'vitest';
import { send } from '../../../local/cli/commands/aggregates.ts';
import { listActive, listActivePage } from '../../../local/views.ts';
import { BadMessageError } from '../../../shared/errors.ts';
import { args, capture, type LocalWorld, localWorld } from './world.ts';

/**
 * The read-only views of the state table (the CLI's list, the dashboard) over a local runtime in
 * memory: the active aggregates oldest first, of one definition or all, a page at a time with a
 * cursor that ends where the next page starts.
 */

let world: LocalWorld;
beforeEach(async () => {
  world = await localWorld();
});

async function open(aggregateId: string, definition: string): Promise<void> {
  await send.run(capture(world.target).io, args({ 'aggregate-id': aggregateId }, definition));
  await world.deliver('ingress');
}

describe('listActive', () => {
  it('lists every active aggregate oldest first, or those of one definition', async () => {
    await open('a', 'orders');
    await open('b', 'quotes');
    await open('c', 'orders');
    const { dynamo } = world.clients;

    expect((await listActive(dynamo, 'w-state')).map((a) => a.aggregateId)).toEqual(['a', 'b', 'c']);
    expect((await listActive(dynamo, 'w-state', 'orders')).map((a) => [a.aggregateId, a.definition])).toEqual(
      [
        ['a', 'orders'],
        ['c', 'orders'],
      ],
    );
  });
});

describe('listActivePage', () => {
  it('pages through the active aggregates: each once, the last page without a cursor', async () => {
    for (const id of ['p1', 'p2', 'p3', 'p4', 'p5']) await open(id, 'orders');
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await listActivePage(world.clients.dynamo, 'w-state', {
        limit: 2,
        ...(cursor ? { cursor } : {}),
      });
      expect(page.aggregates.length).toBeLessThanOrEqual(2);
      seen.push(...page.aggregates.map((a) => a.aggregateId));
      cursor = page.next;
      pages += 1;
    } while (cursor !== undefined && pages < 10);

    expect(seen.sort()).toEqual(['p1', 'p2', 'p3', 'p4', 'p5']);
  });

  it('fills a page of one definition with its own aggregates', async () => {
    await open('x1', 'quotes');
    await open('o1', 'orders');
    await open('x2', 'quotes');

    const page = await listActivePage(world.clients.dynamo, 'w-state', { definition: 'quotes', limit: 2 });

    expect(page.aggregates.map((a) => a.aggregateId)).toEqual(['x1', 'x2']);
  });

  it('counts the replies each has so far', async () => {
    await open('r1', 'orders');
    const page = await listActivePage(world.clients.dynamo, 'w-state');
    expect(page.aggregates[0]).toMatchObject({ aggregateId: 'r1', status: 'open', received: 0 });
  });

  it('refuses a cursor no page returned', async () => {
    await expect(
      listActivePage(world.clients.dynamo, 'w-state', { cursor: 'nonsense' }),
    ).rejects.toBeInstanceOf(BadMessageError);
  });
});
