import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FaninUnderTest } from '../../support/fanin.ts';

const DAY_MS = 24 * 3600 * 1000;
const DAY_S = 24 * 3600;

/**
 * An aggregate's items live as long as the aggregate can: a deadline from a request's
 * `parameters` or from `set-parameters` may lie far beyond the definition's own timeout and its
 * `maxOpenSeconds` (up to a year). DynamoDB Local never expires TTL, so the test deletes what TTL
 * would have deleted by then (`expireItems`) halfway through the aggregate's life, and the
 * aggregate must still end with every reply it recorded and the request it stored.
 */
describe('the state of an open aggregate outlives its real deadline', () => {
  let fanin: FaninUnderTest;

  beforeAll(async () => {
    fanin = await FaninUnderTest.start([
      {
        name: 'contract',
        fanOut: { type: 'none' },
        completion: { strategy: 'all' },
        timeoutSeconds: 60,
        requestParameters: { timeoutSeconds: { min: 10, max: 300 * DAY_S } },
        aggregation: { algorithm: 'custom', expression: '{ "ids": replyIds, "tag": request.body.tag }' },
      },
      {
        name: 'tender',
        mode: 'self-starting',
        correlation: { source: 'path', path: '$.tender' },
        completion: { strategy: 'timeout' },
        aggregation: { algorithm: 'collect' },
        timeoutSeconds: 60,
      },
    ]);
  });
  afterAll(() => fanin.stop());

  it('replies and the stored request of an aggregate whose request asked for a 200-day deadline survive TTL expiry at day 100', async () => {
    // Kills the mutant "reply expiry from the definition's own timeoutSeconds" (replyExpiry ignores the header).
    // Prepare: a request asking for 200 days; two of its three replies in
    const id = `contract-${Date.now().toString(36)}`;
    await fanin.sendRequest(
      {
        definition: 'contract',
        aggregateId: id,
        expected: 3,
        tag: 'kept',
        parameters: { timeoutSeconds: 200 * DAY_S },
      },
      { 'fanin-request-id': id },
    );
    await fanin.drain();
    for (const r of ['0', '1']) {
      await fanin.sendReply(
        { r },
        { 'fanin-aggregate-id': id, 'fanin-reply-id': r, 'fanin-definition': 'contract' },
      );
      await fanin.drain();
    }

    // Act: 100 days on, whatever TTL may delete is gone; the last reply comes
    fanin.clock.advance(100 * DAY_MS);
    await fanin.expireItems(fanin.clock.now);
    await fanin.sendReply(
      { r: 2 },
      { 'fanin-aggregate-id': id, 'fanin-reply-id': '2', 'fanin-definition': 'contract' },
    );
    await fanin.drain();

    // Assess: completed with all three replies and the request's field
    const { output } = fanin.expectExactlyOneTerminalOutput(id, 'strict');
    expect(output).toMatchObject({
      outcome: 'completed',
      counts: { expected: 3, received: 3 },
      result: { ids: ['0', '1', '2'], tag: 'kept' },
    });
  });

  it('an aggregate that asked for 200 days but completed at once keeps its tombstone as long as its last item', async () => {
    // Kills the mutant "tombstone expiresAt = close + retention" (its items outlive it by the unused 200 days).
    // Prepare
    const id = `early-${Date.now().toString(36)}`;
    await fanin.sendRequest(
      {
        definition: 'contract',
        aggregateId: id,
        expected: 2,
        tag: 't',
        parameters: { timeoutSeconds: 200 * DAY_S },
      },
      { 'fanin-request-id': id },
    );
    await fanin.drain();

    // Act: both replies come at once
    for (const r of ['0', '1'])
      await fanin.sendReply(
        { r },
        { 'fanin-aggregate-id': id, 'fanin-reply-id': r, 'fanin-definition': 'contract' },
      );
    await fanin.drain();

    // Assess: closed; no item of the aggregate expires after its tombstone
    fanin.expectExactlyOneTerminalOutput(id, 'strict');
    const items = (await fanin.scanState()).filter((i) => i.pk === `A#${id}`);
    const tombstone = items.find((i) => i.sk === 'H');
    expect(tombstone).toMatchObject({ status: 'closed' });
    const others = items.filter((i) => i !== tombstone && typeof i.expiresAt === 'number');
    expect(others.length).toBeGreaterThanOrEqual(2);
    for (const item of others)
      expect(Number(item.expiresAt), String(item.sk)).toBeLessThanOrEqual(Number(tombstone?.expiresAt));
  });

  it('bids of a self-starting aggregate opened after set-parameters gave it a 200-day deadline survive TTL expiry at day 100', async () => {
    // Kills the mutant "reply expiry from the definition's own timeoutSeconds" (replyExpiry ignores the header).
    // Prepare: the runtime timeout raised to 200 days, then a tender opened by its first bid
    await fanin.sendControl({
      command: 'set-parameters',
      definition: 'tender',
      parameters: { timeoutSeconds: 200 * DAY_S },
    });
    await fanin.drain();
    const key = `t-${Date.now().toString(36)}`;
    await fanin.sendReply({ tender: key, bid: 1 }, { 'fanin-definition': 'tender', 'fanin-reply-id': 'a' });
    await fanin.drain();
    await fanin.sendControl({ command: 'set-parameters', definition: 'tender', parameters: {} });
    await fanin.drain();

    // Act: TTL at day 100, a second bid, then the deadline
    fanin.clock.advance(100 * DAY_MS);
    await fanin.expireItems(fanin.clock.now);
    await fanin.sendReply({ tender: key, bid: 2 }, { 'fanin-definition': 'tender', 'fanin-reply-id': 'b' });
    await fanin.drain();
    fanin.clock.advance(100 * DAY_MS + 1000);
    await fanin.sweep();
    await fanin.drain();

    // Assess: completed at its deadline (strategy timeout) with both bids
    const { output } = fanin.expectExactlyOneTerminalOutput(`tender:${key}`, 'strict');
    expect(output).toMatchObject({ outcome: 'completed', counts: { received: 2 } });
    expect((output.result as { replyId: string }[]).map((r) => r.replyId)).toEqual(['a', 'b']);
  });
});
