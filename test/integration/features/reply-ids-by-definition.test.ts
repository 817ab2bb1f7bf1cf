import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FaninUnderTest } from '../../support/fanin.ts';

/**
 * definitions.md: `replyId` says "where a reply's id is, for deduplication"; data-plane.md: "the
 * aggregate's own definition judges it". A reply may find its aggregate by `fanin-aggregate-id`
 * alone (wire-contract.md) — the same bid sent twice that way must still count once, by the id its
 * definition reads, as it does when the bid names its definition.
 */
describe('reply ids read by the aggregate definition', () => {
  let fanin: FaninUnderTest;

  beforeAll(async () => {
    fanin = await FaninUnderTest.start([
      {
        name: 'lot',
        mode: 'self-starting',
        correlation: { source: 'path', path: '$.k' },
        replyId: { source: 'path', path: '$.id' },
        completion: { strategy: 'count', count: 3 },
        timeoutSeconds: 600,
      },
    ]);
  });
  afterAll(() => fanin.stop());

  it('a bid sent twice naming only its aggregate counts once, by the id its definition reads', async () => {
    // Prepare: the lot opened by bid 1, which names its definition
    await fanin.sendReply({ k: 'd1', id: '1' }, { 'fanin-definition': 'lot' });
    await fanin.drain();

    // Act: bid 2 twice (two SQS messages, two message ids), each naming only the aggregate
    await fanin.sendReply({ k: 'd1', id: '2' }, { 'fanin-aggregate-id': 'lot:d1' });
    await fanin.sendReply({ k: 'd1', id: '2' }, { 'fanin-aggregate-id': 'lot:d1' });
    await fanin.drain();

    // Assess: 2 of the 3 counted, so still open (mutant killed: "a reply naming only its
    // aggregate keeps its transport id" — the two copies complete the count)
    fanin.expectNoTerminalOutput('lot:d1');
    await fanin.sendReply({ k: 'd1', id: '3' }, { 'fanin-aggregate-id': 'lot:d1' });
    await fanin.drain();
    const { output } = fanin.expectExactlyOneTerminalOutput('lot:d1');
    const members = (output.result as { replyId: string }[]).map((r) => r.replyId).sort();
    expect(members).toEqual(['1', '2', '3']);
  });

  it('a reply naming only its aggregate without the id its definition reads goes to the error output', async () => {
    // Prepare
    await fanin.sendReply({ k: 'd2', id: '1' }, { 'fanin-definition': 'lot' });
    await fanin.drain();

    // Act: no $.id in the body
    await fanin.sendReply({ k: 'd2', bid: 5 }, { 'fanin-aggregate-id': 'lot:d2' });
    await fanin.drain();

    // Assess
    const errors = await fanin.outputs('error');
    expect(errors.some((e) => JSON.stringify(e).includes('reply id (body path $.id)'))).toBe(true);
    fanin.expectNoTerminalOutput('lot:d2');
  });
});
