import { describe, expect, it } from 'vitest';
import { sqs, world } from '../fixtures.ts';

/**
 * SQS's batch rules as its API reference documents them: one to ten entries, ids distinct and of
 * letters, digits, hyphens and underscores (80 at most), the batch's messages at most the
 * message limit in all, and each entry that fails reported in `Failed` while the others succeed.
 * The conformance test checks a size boundary and per-entry results against fauxqs; this pins
 * each refusal.
 */

function queue() {
  const model = sqs(world());
  const { QueueUrl } = model.handle('CreateQueueCommand', { QueueName: 'q' });
  const send = (Entries: Record<string, unknown>[]) =>
    model.handle('SendMessageBatchCommand', { QueueUrl, Entries });
  return { model, QueueUrl, send };
}

const entry = (Id: string, MessageBody = 'm') => ({ Id, MessageBody });

describe('batches', () => {
  it('takes one to ten entries', () => {
    const { send } = queue();
    expect(() => send([])).toThrow(expect.objectContaining({ name: 'EmptyBatchRequest' }));
    expect(send(Array.from({ length: 10 }, (_, i) => entry(`e${i}`))).Successful).toHaveLength(10);
    expect(() => send(Array.from({ length: 11 }, (_, i) => entry(`e${i}`)))).toThrow(
      expect.objectContaining({ name: 'TooManyEntriesInBatchRequest' }),
    );
  });

  it('refuses repeated ids and ids SQS does not allow', () => {
    const { send } = queue();
    expect(() => send([entry('a'), entry('a')])).toThrow(
      expect.objectContaining({ name: 'BatchEntryIdsNotDistinct' }),
    );
    expect(() => send([entry('a b')])).toThrow(expect.objectContaining({ name: 'InvalidBatchEntryId' }));
    expect(() => send([entry('x'.repeat(81))])).toThrow(
      expect.objectContaining({ name: 'InvalidBatchEntryId' }),
    );
    expect(send([entry(`${'x'.repeat(79)}-`)]).Successful).toHaveLength(1);
  });

  it('refuses a batch over 1 MiB in all, though each message fits', () => {
    const { send } = queue();
    const half = 'x'.repeat(512 * 1024);
    expect(send([entry('a', half), entry('b', half)]).Successful).toHaveLength(2);
    expect(() => send([entry('a', half), entry('b', half), entry('c', 'x')])).toThrow(
      expect.objectContaining({ name: 'BatchRequestTooLong' }),
    );
  });

  it('fails a bad entry on its own and sends the others', () => {
    const { model, QueueUrl, send } = queue();
    const result = send([entry('good'), entry('empty', ''), entry('also', 'n')]);
    expect(result.Successful.map((s: { Id: string }) => s.Id)).toEqual(['good', 'also']);
    expect(result.Failed).toMatchObject([{ Id: 'empty', SenderFault: true }]);
    expect(model.messages(QueueUrl).map((m) => m.body)).toEqual(['m', 'n']);
  });
});
