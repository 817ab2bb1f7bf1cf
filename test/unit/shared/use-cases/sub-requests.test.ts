import { describe, expect, it } from 'vitest';
import { subRequestMessage } from '../../../../shared/use-cases/sub-requests.ts';

/** The message of one sub-request (docs/wire-contract.md, "Sub-requests" and "Retried sub-requests"). */
describe('subRequestMessage', () => {
  const envelope = {
    aggregateId: 'order-1',
    definition: 'pickers',
    replyTo: 'https://q/reply-0',
    requestId: 'r-1',
  };

  it('names the aggregate, reply id, definition, reply queue and request, with no attempt on the first send', () => {
    const message = subRequestMessage(envelope, 2, 'pickers', '{"sku":"b"}');
    expect(message).toMatchObject({
      target: 'pickers',
      body: '{"sku":"b"}',
      attributes: {
        'fanin-aggregate-id': 'order-1',
        'fanin-reply-id': '2',
        'fanin-definition': 'pickers',
        'fanin-reply-to': 'https://q/reply-0',
        'fanin-request-id': 'r-1',
      },
      groupId: 'order-1',
    });
    expect(message.attributes['fanin-attempt']).toBeUndefined();
  });

  it('gives a retry its attempt number and a deduplication id of its own, the same on every send of that attempt', () => {
    const first = subRequestMessage(envelope, 2, 'pickers', '{}');
    const second = subRequestMessage(envelope, 2, 'pickers', '{}', 2);
    const again = subRequestMessage(envelope, 2, 'pickers', '{}', 2);
    const third = subRequestMessage(envelope, 2, 'pickers', '{}', 3);
    expect(second.attributes['fanin-attempt']).toBe('2');
    // (mutant killed: "a retry shares the first send's deduplication id" — a FIFO target drops the retry within 5 minutes)
    expect(new Set([first.deduplicationId, second.deduplicationId, third.deduplicationId]).size).toBe(3);
    expect(again.deduplicationId).toBe(second.deduplicationId);
  });
});
