import { describe, expect, it } from 'vitest';
import { SendFailedError, SqsRequestSender } from '../../../../shared/adapters/sqs-sender.ts';
import type { SubRequest } from '../../../../shared/ports.ts';
import { world } from './support.ts';

/**
 * The sub-request sender: batches of ten and at most 256 KiB per target, every target resolved
 * once per process through the configured endpoint (a URL's host is never used), a queue that does
 * not exist failing the whole call before anything is sent, unfixably, and a batch's partial
 * failure reported. The module's own fast test over the SQS model; the integration tests run one
 * fan-out against fauxqs.
 */

const ACCOUNT = '000000000000';

function request(target: string, i: number, body = `{"i":${i}}`): SubRequest {
  return {
    target,
    body,
    attributes: { 'fanin-reply-id': String(i) },
    deduplicationId: `d-${i}`,
    groupId: 'g',
  };
}

function setup(queues: readonly string[]) {
  const w = world();
  for (const name of queues)
    w.models.sqs.handle('CreateQueueCommand', {
      QueueName: name,
      ...(name.endsWith('.fifo') ? { Attributes: { FifoQueue: 'true' } } : {}),
    });
  const sender = new SqsRequestSender({ sqs: w.clients.sqs });
  const messages = (name: string) => w.models.sqs.messages(w.models.sqs.urlOf(name));
  const sends = () => w.calls.filter((c) => c.command === 'SendMessageBatchCommand');
  const lookups = () => w.calls.filter((c) => c.command === 'GetQueueUrlCommand');
  return { w, sender, messages, sends, lookups };
}

describe('SqsRequestSender.send', () => {
  it('sends 25 sub-requests to one queue in batches of at most ten, every one delivered once', async () => {
    // Prepare
    const { sender, messages, sends } = setup(['bank-1']);

    // Act
    await sender.send(Array.from({ length: 25 }, (_, i) => request('bank-1', i)));

    // Assess
    expect(sends().map((c) => c.input.Entries.length)).toEqual([10, 10, 5]);
    for (const call of sends())
      expect(new Set(call.input.Entries.map((e: { Id: string }) => e.Id)).size).toBe(
        call.input.Entries.length,
      );
    expect(
      messages('bank-1')
        .map((m) => m.body)
        .sort(),
    ).toEqual(Array.from({ length: 25 }, (_, i) => `{"i":${i}}`).sort());
  });

  it('keeps each batch within 256 KiB in all', async () => {
    // Prepare: six bodies of 100 KB
    const { sender, messages, sends } = setup(['bank-1']);

    // Act
    await sender.send(Array.from({ length: 6 }, (_, i) => request('bank-1', i, 'x'.repeat(100_000))));

    // Assess
    expect(sends().length).toBeGreaterThanOrEqual(3);
    for (const call of sends()) {
      const bytes = call.input.Entries.reduce(
        (sum: number, e: { MessageBody: string }) => sum + e.MessageBody.length,
        0,
      );
      expect(bytes).toBeLessThanOrEqual(262_144);
    }
    expect(messages('bank-1')).toHaveLength(6);
  });

  it('carries the attributes as strings, and a FIFO queue’s group and deduplication ids', async () => {
    // Prepare
    const { sender, messages } = setup(['bank-1.fifo']);

    // Act
    await sender.send([request('bank-1.fifo', 1)]);

    // Assess
    const [message] = messages('bank-1.fifo');
    expect(message?.groupId).toBe('g');
    expect(JSON.stringify(message?.attributes)).toContain('fanin-reply-id');
  });

  it('resolves a target once while warm, however many sends go to it', async () => {
    // Prepare
    const { sender, lookups } = setup(['bank-1']);

    // Act
    await sender.send([request('bank-1', 1)]);
    await sender.send([request('bank-1', 2), request('bank-1', 3)]);

    // Assess
    expect(lookups()).toHaveLength(1);
  });

  it("resolves a URL target by its account and name on the configured endpoint, never the URL's own host", async () => {
    // Prepare
    const { sender, messages, lookups } = setup(['bank-1']);

    // Act
    await sender.send([request(`https://attacker.example/${ACCOUNT}/bank-1`, 1)]);

    // Assess
    expect(lookups()[0]?.input).toEqual({ QueueName: 'bank-1', QueueOwnerAWSAccountId: ACCOUNT });
    expect(messages('bank-1')).toHaveLength(1);
  });

  it('sends nothing when one target does not exist, and fails unfixably naming it', async () => {
    // Prepare
    const { sender, messages, sends } = setup(['bank-1']);

    // Act
    const error = await sender.send([request('bank-1', 1), request('bank-404', 2)]).catch((e: unknown) => e);

    // Assess
    expect(error).toBeInstanceOf(SendFailedError);
    expect(error).toMatchObject({ queue: 'bank-404', retryable: false });
    expect((error as Error).message).toContain('does not exist');
    expect(sends()).toEqual([]);
    expect(messages('bank-1')).toEqual([]);
  });

  it('refuses a target that is neither a queue name nor a queue URL', async () => {
    // Prepare
    const { sender, lookups } = setup([]);

    // Act
    const error = await sender.send([request('ftp://host/000000000000/q', 1)]).catch((e: unknown) => e);

    // Assess
    expect(error).toBeInstanceOf(SendFailedError);
    expect(lookups()).toEqual([]);
  });

  it('reports a batch that SQS partly refused, with the count and the first reason', async () => {
    // Prepare: SQS answers one entry of each batch Failed
    const w = world({
      intercept: (_s, command, input, call) => {
        const answer = call();
        if (command !== 'SendMessageBatchCommand') return answer;
        return {
          Successful: [],
          Failed: [
            { Id: input.Entries[0].Id, Code: 'InternalError', Message: 'try again', SenderFault: false },
          ],
        };
      },
    });
    w.models.sqs.handle('CreateQueueCommand', { QueueName: 'bank-1' });
    const sender = new SqsRequestSender({ sqs: w.clients.sqs });

    // Act
    const error = await sender.send([request('bank-1', 1), request('bank-1', 2)]).catch((e: unknown) => e);

    // Assess
    expect(error).toBeInstanceOf(SendFailedError);
    expect((error as Error).message).toContain('1 of 2 refused (InternalError: try again)');
  });

  it('asks again for a queue deleted since it was resolved', async () => {
    // Prepare
    const { w, sender, lookups } = setup(['bank-1']);
    await sender.send([request('bank-1', 1)]);
    w.models.sqs.handle('DeleteQueueCommand', { QueueUrl: w.models.sqs.urlOf('bank-1') });

    // Act
    const first = await sender.send([request('bank-1', 2)]).catch((e: unknown) => e);
    w.models.sqs.handle('CreateQueueCommand', { QueueName: 'bank-1' });
    await sender.send([request('bank-1', 3)]);

    // Assess
    expect(first).toMatchObject({ retryable: false });
    expect(lookups()).toHaveLength(2);
  });
});

describe('SqsRequestSender.check', () => {
  it('stops looking up after the first ten when one of them does not exist', async () => {
    // Prepare: a thousand targets, none of which exists
    const { sender, lookups } = setup([]);
    const targets = Array.from({ length: 1000 }, (_, i) => `missing-${i}`);

    // Act
    const error = await sender.check(targets).catch((e: unknown) => e);

    // Assess
    expect(error).toMatchObject({ queue: 'missing-0', retryable: false });
    expect(lookups()).toHaveLength(10);
  });

  it('passes for targets that all exist, looking each up once', async () => {
    // Prepare
    const { sender, lookups } = setup(['a', 'b']);

    // Act
    await sender.check(['a', 'b', 'a']);

    // Assess
    expect(lookups()).toHaveLength(2);
  });
});
