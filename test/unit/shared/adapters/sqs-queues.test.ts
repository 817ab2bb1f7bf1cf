import { describe, expect, it } from 'vitest';
import { moveMessages, queueDepth, SQS_BATCH } from '../../../../shared/adapters/sqs-queues.ts';
import { T0, type WorldOptions, world } from './support.ts';

/**
 * Moving messages between queues at least once, identity kept: the origin message id and first
 * send time travel with each copy (a time only from a trusted mover), a FIFO target gets a group
 * and a per-hop deduplication id, a partly refused send stops the move with only what was sent
 * deleted, a delete SQS refuses is retried then reported. The module's own fast test over the SQS
 * model; the partition drain's integration tests move through fauxqs.
 */

const ORIGIN = 'fanin-origin-message-id';
const SENT_AT = 'fanin-origin-sent-at';

function setup(options: WorldOptions = {}) {
  const w = world(options);
  const create = (name: string) =>
    w.models.sqs.handle('CreateQueueCommand', {
      QueueName: name,
      ...(name.endsWith('.fifo') ? { Attributes: { FifoQueue: 'true' } } : {}),
    }).QueueUrl as string;
  const send = (url: string, body: string, attributes: Record<string, string> = {}) =>
    w.models.sqs.handle('SendMessageCommand', {
      QueueUrl: url,
      MessageBody: body,
      MessageAttributes: Object.fromEntries(
        Object.entries(attributes).map(([k, v]) => [k, { DataType: 'String', StringValue: v }]),
      ),
    }).MessageId as string;
  const attrs = (url: string) =>
    w.models.sqs
      .messages(url)
      .map((m) => m.attributes as unknown as Record<string, { StringValue?: string }>);
  return { w, create, send, attrs };
}

const move = (from: string, to: string, extra: Record<string, unknown> = {}) => ({
  from,
  to,
  max: 1000,
  visibilitySeconds: 30,
  ...extra,
});

describe('moveMessages', () => {
  it('moves every message, bodies and attributes as they were, and says the source is drained', async () => {
    // Prepare
    const { w, create, send, attrs } = setup();
    const from = create('src');
    const to = create('dst');
    for (let i = 0; i < 25; i += 1) send(from, `{"i":${i}}`, { 'fanin-reply-id': String(i) });

    // Act
    const result = await moveMessages(w.clients.sqs, move(from, to));

    // Assess
    expect(result).toMatchObject({
      moved: 25,
      drained: true,
      undeleted: [],
      withoutOrigin: 0,
      aborted: false,
    });
    expect(w.models.sqs.messages(from)).toEqual([]);
    expect(
      w.models.sqs
        .messages(to)
        .map((m) => m.body)
        .sort(),
    ).toEqual(Array.from({ length: 25 }, (_, i) => `{"i":${i}}`).sort());
    for (const a of attrs(to)) expect(a['fanin-reply-id']?.StringValue).toBeDefined();
  });

  it('gives each copy its source message id and the time SQS first accepted it', async () => {
    // Prepare
    const { w, create, send, attrs } = setup();
    const from = create('src');
    const to = create('dst');
    w.now = T0 + 1234;
    const id = send(from, 'x');
    w.now = T0 + 5000;

    // Act
    await moveMessages(w.clients.sqs, move(from, to));

    // Assess
    const [copy] = attrs(to);
    expect(copy?.[ORIGIN]?.StringValue).toBe(id);
    expect(copy?.[SENT_AT]?.StringValue).toBe(String(T0 + 1234));
  });

  it('keeps the first origin over a second move, and a trusted mover’s first send time', async () => {
    // Prepare
    const { w, create, send, attrs } = setup();
    const a = create('a');
    const b = create('b');
    const c = create('c');
    w.now = T0 + 10;
    const id = send(a, 'x');
    w.now = T0 + 20;
    await moveMessages(w.clients.sqs, move(a, b));
    w.now = T0 + 30;

    // Act
    await moveMessages(w.clients.sqs, move(b, c, { trustedSenders: ['000000000000'] }));

    // Assess
    const [copy] = attrs(c);
    expect(copy?.[ORIGIN]?.StringValue).toBe(id);
    expect(copy?.[SENT_AT]?.StringValue).toBe(String(T0 + 10));
  });

  it('replaces a send time any other sender put in the attribute with the message’s own', async () => {
    // Prepare
    const { w, create, send, attrs } = setup();
    const from = create('src');
    const to = create('dst');
    w.now = T0 + 500;
    send(from, 'x', { [SENT_AT]: '1' });

    // Act
    await moveMessages(w.clients.sqs, move(from, to));

    // Assess
    expect(attrs(to)[0]?.[SENT_AT]?.StringValue).toBe(String(T0 + 500));
  });

  it('counts a message with no room for the origin attribute (ten attributes already), and still moves it', async () => {
    // Prepare
    const { w, create, send, attrs } = setup();
    const from = create('src');
    const to = create('dst');
    send(from, 'x', Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`a${i}`, 'v'])));

    // Act
    const result = await moveMessages(w.clients.sqs, move(from, to));

    // Assess
    expect(result).toMatchObject({ moved: 1, withoutOrigin: 1 });
    expect(Object.keys(attrs(to)[0] ?? {})).toHaveLength(10);
  });

  it(`stops at max, receiving at most ${SQS_BATCH} at a time`, async () => {
    // Prepare
    const { w, create, send } = setup();
    const from = create('src');
    const to = create('dst');
    for (let i = 0; i < 30; i += 1) send(from, String(i));

    // Act
    const result = await moveMessages(w.clients.sqs, move(from, to, { max: 15 }));

    // Assess
    expect(result).toMatchObject({ moved: 15, drained: false });
    const receives = w.calls.filter((c) => c.command === 'ReceiveMessageCommand');
    for (const r of receives) expect(r.input.MaxNumberOfMessages).toBeLessThanOrEqual(SQS_BATCH);
    expect(receives.at(-1)?.input.MaxNumberOfMessages).toBe(5);
    expect(w.models.sqs.messages(from)).toHaveLength(15);
  });

  it('gives a FIFO target the group and a deduplication id of the prefix and the source message id', async () => {
    // Prepare
    const { w, create, send } = setup();
    const from = create('src');
    const to = create('dst.fifo');
    const id = send(from, 'x');

    // Act
    await moveMessages(w.clients.sqs, move(from, to, { deduplicationPrefix: 'hop-', defaultGroup: 'g0' }));

    // Assess
    const entry = w.calls.find((c) => c.command === 'SendMessageBatchCommand')?.input.Entries[0];
    expect(entry).toMatchObject({ MessageGroupId: 'g0', MessageDeduplicationId: `hop-${id}` });
    expect(w.models.sqs.messages(to)[0]?.groupId).toBe('g0');
  });

  it('stops at a partly refused send, deleting only what was sent, and says why', async () => {
    // Prepare: the target refuses the first entry of each batch
    const { w, create, send } = setup({
      intercept: (_s, command, input, call) => {
        if (command !== 'SendMessageBatchCommand') return call();
        // Nothing reaches the target: the answer alone says which entries SQS took.
        const [first, ...rest] = input.Entries;
        return {
          Successful: rest.map((e: { Id: string }) => ({ Id: e.Id, MessageId: `m-${e.Id}` })),
          Failed: [{ Id: first.Id, Code: 'KMS.Throttled', Message: 'slow down', SenderFault: false }],
        };
      },
    });
    const from = create('src');
    const to = create('dst');
    for (let i = 0; i < 3; i += 1) send(from, String(i));

    // Act
    const result = await moveMessages(w.clients.sqs, move(from, to));

    // Assess
    expect(result).toMatchObject({ moved: 2, failure: { code: 'KMS.Throttled', message: 'slow down' } });
    expect(w.models.sqs.messages(from)).toHaveLength(1);
  });

  it('retries a delete SQS refuses, and reports the message it still cannot delete', async () => {
    // Prepare: every delete of entry 0 refused
    let deletes = 0;
    const { w, create, send } = setup({
      intercept: (_s, command, input, call) => {
        if (command !== 'DeleteMessageBatchCommand') return call();
        deletes += 1;
        const kept = input.Entries.filter((e: { Id: string }) => e.Id === '0');
        return {
          Successful: [],
          Failed: kept.map((e: { Id: string }) => ({
            Id: e.Id,
            Code: 'ReceiptHandleIsInvalid',
            Message: 'no',
            SenderFault: true,
          })),
        };
      },
    });
    const from = create('src');
    const to = create('dst');
    const id = send(from, 'x');

    // Act
    const result = await moveMessages(w.clients.sqs, move(from, to, { deleteAttempts: 3 }));

    // Assess
    expect(deletes).toBe(3);
    expect(result.undeleted).toEqual([
      { messageId: id, originMessageId: id, code: 'ReceiptHandleIsInvalid', message: 'no' },
    ]);
  });

  it('stops when told to, and when its signal is aborted', async () => {
    // Prepare
    const { w, create, send } = setup();
    const from = create('src');
    const to = create('dst');
    for (let i = 0; i < 30; i += 1) send(from, String(i));
    let batches = 0;
    const aborted = new AbortController();
    aborted.abort();

    // Act
    const stopped = await moveMessages(
      w.clients.sqs,
      move(from, to, { stop: () => batches >= 1, onBatch: () => (batches += 1) }),
    );
    const cancelled = await moveMessages(w.clients.sqs, move(from, to, { signal: aborted.signal }));

    // Assess
    expect(stopped.moved).toBe(10);
    expect(cancelled).toMatchObject({ moved: 0, aborted: true });
  });
});

describe('queueDepth', () => {
  it('counts the visible and in-flight messages of a queue', async () => {
    // Prepare
    const { w, create, send } = setup();
    const url = create('q');
    for (let i = 0; i < 5; i += 1) send(url, String(i));
    w.models.sqs.handle('ReceiveMessageCommand', {
      QueueUrl: url,
      MaxNumberOfMessages: 2,
      VisibilityTimeout: 60,
    });

    // Act
    const depth = await queueDepth(w.clients.sqs, url);

    // Assess
    expect(depth).toEqual({ visible: 3, inFlight: 2, depth: 5 });
  });
});
