import { describe, expect, it } from 'vitest';
import { Queue, type StoredMessage } from '../../../../../sim/models/sqs/queue.ts';

/**
 * A queue's own bookkeeping: retention drops a message once its period from sending is over (not
 * before), a message is visible from its visibleAt on, and the counts tell visible, in-flight
 * (received, hidden) and delayed (never received, hidden) apart. The SQS model's tests reach these
 * through its commands; this pins each at its boundary.
 */

const settings = {
  visibilityTimeoutSeconds: 30,
  retentionSeconds: 60,
  delaySeconds: 0,
  maximumMessageSize: 1024,
  receiveWaitSeconds: 0,
  contentBasedDeduplication: false,
};

function message(body: string, fields: Partial<StoredMessage>): StoredMessage {
  return {
    messageId: body,
    body,
    md5OfBody: '',
    attributes: {},
    systemAttributes: {},
    sentAt: 0,
    visibleAt: 0,
    receiveCount: 0,
    received: false,
    handles: new Set(),
    ...fields,
  };
}

describe('Queue', () => {
  it('drops a message when its retention is over, and keeps it until then', () => {
    const queue = new Queue('q', 'url', 'arn', false, settings, {}, 0);
    queue.messages.push(message('old', { sentAt: 0 }), message('new', { sentAt: 1 }));
    queue.expire(59_999);
    expect(queue.messages.map((m) => m.body)).toEqual(['old', 'new']);
    queue.expire(60_000);
    expect(queue.messages.map((m) => m.body)).toEqual(['new']);
  });

  it('counts visible, in-flight and delayed messages, and removes one', () => {
    const queue = new Queue('q', 'url', 'arn', false, settings, {}, 0);
    const held = message('held', { visibleAt: 100, received: true });
    queue.messages.push(message('ready', { visibleAt: 10 }), held, message('later', { visibleAt: 100 }));
    expect(queue.visible(10).map((m) => m.body)).toEqual(['ready']);
    expect(queue.counts(10)).toEqual({ visible: 1, inFlight: 1, delayed: 1 });
    expect(queue.counts(100)).toEqual({ visible: 3, inFlight: 0, delayed: 0 });
    queue.remove(held);
    queue.remove(held);
    expect(queue.messages.map((m) => m.body)).toEqual(['ready', 'later']);
  });
});
