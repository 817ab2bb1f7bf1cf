import { describe, expect, it } from 'vitest';
import { continueOn, requeueTo } from '../../../../shared/adapters/sqs-own-queues.ts';
import { world } from './support.ts';

/**
 * fanin's sends to its own queues: a request put back on the ingress queue under the identity it
 * first came with, and a control command's continuation. The module's own test over the SQS model.
 */

const ORIGIN = 'fanin-origin-message-id';

function attributesOf(w: ReturnType<typeof world>, url: string) {
  return w.models.sqs.messages(url).map((m) => {
    const a = m.attributes as unknown as Record<string, { StringValue?: string }>;
    return Object.fromEntries(Object.entries(a).map(([k, v]) => [k, v.StringValue]));
  });
}

describe('requeueTo', () => {
  it('puts a request back with its body and attributes, naming the message it first came as', async () => {
    // Prepare
    const w = world();
    const ingress = w.storage.queueUrls.ingress;
    const requeue = requeueTo(w.clients.sqs, ingress);

    // Act
    await requeue({
      messageId: 'm-1',
      body: '{"r":1}',
      attributes: { 'fanin-definition': 'orders' },
      receiveCount: 1,
    });

    // Assess
    expect(w.models.sqs.messages(ingress).map((m) => m.body)).toEqual(['{"r":1}']);
    expect(attributesOf(w, ingress)).toEqual([{ 'fanin-definition': 'orders', [ORIGIN]: 'm-1' }]);
  });

  it('keeps the first identity of a request put back twice', async () => {
    // Prepare
    const w = world();
    const ingress = w.storage.queueUrls.ingress;

    // Act
    await requeueTo(
      w.clients.sqs,
      ingress,
    )({ messageId: 'm-2', body: '{}', attributes: { [ORIGIN]: 'm-1' }, receiveCount: 1 });

    // Assess
    expect(attributesOf(w, ingress)[0]?.[ORIGIN]).toBe('m-1');
  });
});

describe('continueOn', () => {
  it('sends the continuation to the control queue as it is', async () => {
    // Prepare
    const w = world();
    const control = w.storage.queueUrls.control;

    // Act
    await continueOn(w.clients.sqs, control)('{"command":"purge","cursor":"x"}');

    // Assess
    expect(w.models.sqs.messages(control).map((m) => m.body)).toEqual(['{"command":"purge","cursor":"x"}']);
  });
});
