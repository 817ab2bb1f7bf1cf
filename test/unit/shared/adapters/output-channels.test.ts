import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  EVENT_SOURCE,
  fitCarried,
  OutputChannelPublisher,
} from '../../../../shared/adapters/output-channels.ts';
import { OutputChannelError, OutputTooLargeError } from '../../../../shared/errors.ts';
import type { OutputMessage } from '../../../../shared/ports.ts';
import { awsError, type WorldOptions, world } from './support.ts';

/**
 * The output publisher: each output on its FIFO queue grouped by aggregate and deduplicated by a
 * hash of its deterministic id (a retry within SQS's window is dropped by SQS), on the bus when
 * asked, a failed channel reported with what was delivered, and an input carried too large cut to
 * fit, saying so. The module's own fast test over the SQS and EventBridge models.
 */

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const result: OutputMessage = {
  id: 'out-1',
  type: 'aggregate.completed',
  aggregateId: 'a-1',
  result: [1, 2],
};

function setup(options: WorldOptions = {}) {
  const w = world(options);
  const publisher = new OutputChannelPublisher({
    sqs: w.clients.sqs,
    queueUrls: w.storage.queueUrls,
    ...(w.clients.eventBridge ? { eventBridge: w.clients.eventBridge } : {}),
    eventBusName: w.storage.eventBusName,
  });
  const queue = (role: 'completed' | 'unknown') => w.models.sqs.messages(w.storage.queueUrls[role]);
  return { w, publisher, queue };
}

describe('OutputChannelPublisher.publish', () => {
  it('sends an output to its role’s queue, grouped by its aggregate, deduplicated by its id, with its attributes', async () => {
    // Prepare
    const { w, publisher, queue } = setup();

    // Act
    await publisher.publish('completed', result);

    // Assess
    const [message] = queue('completed');
    expect(JSON.parse(message?.body ?? '')).toEqual(result);
    expect(message?.groupId).toBe(sha256('a-1').slice(0, 64));
    const send = w.calls.find((c) => c.command === 'SendMessageCommand')?.input;
    expect(send.MessageDeduplicationId).toBe(sha256('out-1'));
    const attributes = Object.fromEntries(
      Object.entries(send.MessageAttributes as Record<string, { StringValue: string }>).map(([k, v]) => [
        k,
        v.StringValue,
      ]),
    );
    expect(attributes).toEqual({
      'fanin-output': 'completed',
      'fanin-type': 'aggregate.completed',
      'fanin-aggregate-id': 'a-1',
    });
  });

  it('is delivered once when retried: SQS drops the copy by its deduplication id', async () => {
    // Prepare
    const { publisher, queue } = setup();

    // Act
    await publisher.publish('completed', result);
    await publisher.publish('completed', result);

    // Assess
    expect(queue('completed')).toHaveLength(1);
  });

  it('puts the output on the bus when asked, from fanin, typed by the output', async () => {
    // Prepare
    const { w, publisher } = setup();

    // Act
    await publisher.publish('completed', result, { eventBridge: true });
    await publisher.publish('completed', { ...result, id: 'out-2' });

    // Assess
    const events = w.models.eventBridge?.events(w.storage.eventBusName) ?? [];
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ source: EVENT_SOURCE, detailType: 'aggregate.completed' });
  });

  it('skips a channel delivered already', async () => {
    // Prepare
    const { w, publisher, queue } = setup();

    // Act
    await publisher.publish('completed', result, { eventBridge: true, skip: ['queue'] });

    // Assess
    expect(queue('completed')).toEqual([]);
    expect(w.models.eventBridge?.events(w.storage.eventBusName)).toHaveLength(1);
  });

  it('reports a failed bus with the queue delivered, whether the call fails or the entry is refused', async () => {
    // Prepare
    const failing = setup({
      intercept: (service, _c, _i, call) => {
        if (service === 'eventbridge') throw awsError('InternalException');
        return call();
      },
    });
    const refusing = setup({
      intercept: (service, _c, _i, call) =>
        service === 'eventbridge'
          ? { FailedEntryCount: 1, Entries: [{ ErrorCode: 'ThrottlingException', ErrorMessage: 'slow' }] }
          : call(),
    });

    // Act
    const failed = await failing.publisher
      .publish('completed', result, { eventBridge: true })
      .catch((e: unknown) => e);
    const refused = await refusing.publisher
      .publish('completed', result, { eventBridge: true })
      .catch((e: unknown) => e);

    // Assess
    for (const error of [failed, refused]) {
      expect(error).toBeInstanceOf(OutputChannelError);
      expect(error).toMatchObject({ channel: 'events', delivered: ['queue'] });
    }
    expect(String((refused as Error).cause)).toContain('ThrottlingException');
  });

  it('cuts an input carried too large for the queue, saying so, and refuses a result too large', async () => {
    // Prepare: no bucket, a 300 KB body carried by an unknown output
    const { publisher, queue } = setup();
    const body = 'b'.repeat(300_000);
    const unknown: OutputMessage = { id: 'u-1', type: 'reply.unknown', message: { body, attributes: {} } };

    // Act
    await publisher.publish('unknown', unknown);
    const tooLarge = await publisher
      .publish('completed', { ...result, id: 'big', result: 'r'.repeat(300_000) })
      .catch((e: unknown) => e);

    // Assess
    const [message] = queue('unknown');
    const sent = JSON.parse(message?.body ?? '') as {
      message: { body: string; truncated: boolean; bytes: number };
    };
    expect(sent.message).toMatchObject({ truncated: true, bytes: 300_000 });
    expect(body.startsWith(sent.message.body)).toBe(true);
    expect(Buffer.byteLength(message?.body ?? '')).toBeLessThanOrEqual(262_144);
    expect(tooLarge).toBeInstanceOf(OutputTooLargeError);
    expect(queue('completed')).toEqual([]);
  });
});

describe('fitCarried', () => {
  it('cuts a carried body so the whole output fits, the same way every time, JSON escapes counted', () => {
    // Prepare: quotes and control characters escape to more bytes than they take
    const body = '"\n\u0001a'.repeat(5_000);
    const message: OutputMessage = { id: 'e-1', type: 'error', message: { body, attributes: { a: 'x' } } };

    // Act
    const fit = fitCarried(message, 4_000);
    const again = fitCarried(message, 4_000);

    // Assess
    expect(Buffer.byteLength(JSON.stringify(fit))).toBeLessThanOrEqual(4_000);
    expect(fit).toEqual(again);
    const carried = fit?.message as {
      body: string;
      bytes: number;
      truncated: boolean;
      truncatedReason: string;
    };
    expect(body.startsWith(carried.body)).toBe(true);
    expect(carried.bytes).toBe(Buffer.byteLength(body));
    expect(carried.truncatedReason).toContain(String(Buffer.byteLength(body)));
  });

  it('leaves the attributes out when even an empty body does not fit, and gives nothing for a result', () => {
    // Prepare
    const message: OutputMessage = {
      id: 'e-1',
      type: 'error',
      message: { body: 'x'.repeat(1000), attributes: { big: 'y'.repeat(2000) } },
    };

    // Act
    const fit = fitCarried(message, 1_000);

    // Assess
    expect(fit?.message).toMatchObject({ attributes: {}, attributesOmitted: true });
    expect(Buffer.byteLength(JSON.stringify(fit))).toBeLessThanOrEqual(1_000);
    expect(fitCarried(result, 10)).toBeUndefined();
    expect(fitCarried(message, 10)).toBeUndefined();
  });
});

describe('fitCarried on a multi-byte body (a cut never splits a character)', () => {
  it('keeps a beginning of the body that is a prefix of it (no replacement character at the cut)', () => {
    const body = 'é'.repeat(5_000);
    const message: OutputMessage = { id: 'e-1', type: 'error', message: { body, attributes: {} } };
    for (let max = 3_000; max < 3_010; max += 1) {
      const carried = fitCarried(message, max)?.message as { body: string };
      expect(carried.body.includes('\ufffd')).toBe(false);
      expect(body.startsWith(carried.body)).toBe(true);
    }
  });
});
