import { describe, expect, it } from 'vitest';
import { type FateRecords, recipientsView } from '../../../local/fates.ts';
import { AggregateStatus } from '../../../shared/engine/constants.ts';
import { aDefinition } from '../shared/engine/factories.ts';

/** local/fates.ts: each recipient's fate as `fanin show` and the dashboard give it, from an aggregate's items. */

const OPENED = Date.UTC(2026, 11, 2, 12, 0, 0);
const SPLITTER = aDefinition({
  name: 'stock',
  fanOut: { type: 'splitter', itemsPath: '$.items', target: 'warehouse', labelPath: '$.sku' },
  timeoutSeconds: 600,
  responders: { timeoutSeconds: 30 },
});

function records(
  overrides: Partial<NonNullable<FateRecords['header']>> = {},
  more: Partial<FateRecords> = {},
) {
  return {
    header: {
      aggregateId: 'a-1',
      definition: 'stock',
      status: AggregateStatus.OPEN,
      expected: 3,
      received: 0,
      lateCount: 0,
      openedAt: OPENED,
      params: { timeoutSeconds: 600, recipientTimeoutSeconds: 30 },
      ...overrides,
    },
    copies: [],
    marks: [],
    ...more,
  } satisfies FateRecords;
}

describe('recipientsView', () => {
  it("labels a splitter's recipients with the item labels the request kept, and marks a failed reply failed", () => {
    const view = recipientsView(
      records(
        {},
        {
          request: { labels: ['SKU-1', 'SKU-2', null] },
          copies: [{ replyId: '1', receivedAt: OPENED + 10, failure: 'out of stock' }],
        },
      ),
      SPLITTER,
      OPENED + 1000,
    );

    expect(view?.recipients).toEqual([
      { replyId: '0', label: 'SKU-1', fate: 'no-reply', deadline: OPENED + 30_000 },
      { replyId: '1', label: 'SKU-2', fate: 'failed', deadline: OPENED + 30_000 },
      { replyId: '2', fate: 'no-reply', deadline: OPENED + 30_000 },
    ]);
  });

  it('never counts a late or unknown reply of an open aggregate as replied', () => {
    const view = recipientsView(
      records(
        {},
        {
          copies: [{ replyId: '0', receivedAt: OPENED + 31_000 }],
          marks: [{ replyId: '0' }],
        },
      ),
      SPLITTER,
      OPENED + 40_000,
    );

    expect(view?.recipients.map((r) => r.fate)).toEqual(['timed-out', 'timed-out', 'timed-out']);
  });

  it('a sealed aggregate counts its member set only, at the seal, with the parameters the seal kept', () => {
    const view = recipientsView(
      records(
        {
          status: AggregateStatus.CLOSED,
          params: {},
          completingAt: OPENED + 20_000,
          members: ['0'],
          askedUpTo: 2,
        },
        {
          kept: { params: { timeoutSeconds: 600, recipientTimeoutSeconds: 10 } },
          copies: [
            { replyId: '0', receivedAt: OPENED + 5_000 },
            { replyId: '1', receivedAt: OPENED + 25_000 },
          ],
        },
      ),
      SPLITTER,
      OPENED + 3_600_000,
    );

    expect(view).toEqual({
      at: OPENED + 20_000,
      soFar: false,
      recipients: [
        { replyId: '0', fate: 'replied', deadline: OPENED + 10_000 },
        { replyId: '1', fate: 'timed-out', deadline: OPENED + 10_000 },
        { replyId: '2', fate: 'not-asked', deadline: OPENED + 10_000 },
      ],
    });
  });

  it('gives nothing for a definition without responders', () => {
    expect(recipientsView(records(), aDefinition({ name: 'stock' }), OPENED)).toBeUndefined();
  });

  it('without the definition, takes the recipients to be looked after when the parameters give them deadlines', () => {
    expect(recipientsView(records(), undefined, OPENED)?.recipients).toHaveLength(3);
    expect(recipientsView(records({ params: { timeoutSeconds: 600 } }), undefined, OPENED)).toBeUndefined();
  });
});
