import { ReceiveMessageCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { send } from '../../../../../local/cli/commands/aggregates.ts';
import { purge } from '../../../../../local/cli/commands/control.ts';
import { redrive, tail } from '../../../../../local/cli/commands/queues.ts';
import { CommandError, UsageError } from '../../../../../local/cli/io.ts';
import { args, capture, type LocalWorld, localWorld } from '../../world.ts';

/**
 * `fanin tail` and `fanin redrive`'s own fast test over a local runtime in memory: what tail prints
 * of an output (a line, or one JSON object per line with `sentAt` in ISO 8601), that it leaves the
 * messages unless --consume, its option checks; redrive moving a DLQ back. The integration tests
 * run both as processes against the emulators.
 */

let world: LocalWorld;
let stdout: string[];
beforeEach(async () => {
  world = await localWorld();
  stdout = [];
  // `tail --json` writes its lines to stdout itself (one object per line).
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    stdout.push(String(chunk));
    return true;
  });
});
afterEach(() => vi.restoreAllMocks());

/** A purged aggregate: one message on the status output. */
async function onePurged(aggregateId: string): Promise<void> {
  await send.run(capture(world.target).io, args({ 'aggregate-id': aggregateId }, 'orders'));
  await world.deliver('ingress');
  await purge.run(capture(world.target).io, args({ 'aggregate-id': aggregateId }));
  await world.deliver('control');
}

async function waiting(queueUrl: string): Promise<number> {
  const { Messages = [] } = await world.clients.sqs.send(
    new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, VisibilityTimeout: 0 }),
  );
  return Messages.length;
}

describe('fanin tail', () => {
  it('refuses what is not an output, naming the outputs', async () => {
    const run = tail.run(capture(world.target).io, args({}, 'ingress'));
    await expect(run).rejects.toBeInstanceOf(UsageError);
    await expect(run).rejects.toThrow(
      'tail needs an output: completed, timed-out, unknown, late, error, status',
    );
  });

  it('prints one line per output message and leaves it on the queue', async () => {
    await onePurged('o-1');
    const { io, out } = capture(world.target);

    expect(await tail.run(io, args({}, 'status'))).toBe(0);

    expect(out.some((l) => /^\d\d:\d\d:\d\d\.\d{3} {2}status {2}purged orders o-1/.test(l))).toBe(true);
    expect(await waiting(world.provisioned.queueUrls.status)).toBeGreaterThan(0);
  });

  it('--consume deletes what it prints', async () => {
    await onePurged('o-2');

    await tail.run(capture(world.target).io, args({ consume: true }, 'status'));

    expect(await waiting(world.provisioned.queueUrls.status)).toBe(0);
  });

  it('--json prints one object per line: the output, its message id, sentAt in ISO 8601 and the body as sent', async () => {
    await onePurged('o-3');

    await tail.run(capture(world.target, true).io, args({}, 'status'));

    const lines = stdout
      .join('')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const purged = lines.find((l) => l.body.type === 'fanin.aggregate.purged');
    expect(purged).toMatchObject({ output: 'status', body: { aggregateId: 'o-3' } });
    expect(purged.sentAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(typeof purged.messageId).toBe('string');
  });

  it('says on stderr when the output is empty', async () => {
    const { io, err } = capture(world.target);
    await tail.run(io, args({}, 'late'));
    expect(err).toEqual(['w-out-late.fifo is empty']);
  });

  it('--count fails with exit 1 when fewer arrived within --timeout', async () => {
    const run = tail.run(capture(world.target).io, args({ count: '2', timeout: '0.2' }, 'completed'));
    await expect(run).rejects.toBeInstanceOf(CommandError);
    await expect(run).rejects.toThrow('0 of 2 message(s) arrived on w-out-completed.fifo within 0.2 s');
  });

  it('--peek still works with a deprecation warning, and contradicts --consume', async () => {
    const { io, err } = capture(world.target);
    await tail.run(io, args({ peek: true }, 'late'));
    expect(err[0]).toBe(
      'warning: --peek is deprecated: tail leaves the messages by default now (--consume deletes them)',
    );

    await expect(
      tail.run(capture(world.target).io, args({ peek: true, consume: true }, 'late')),
    ).rejects.toThrow('--peek and --consume contradict each other');
  });
});

describe('fanin redrive', () => {
  it("moves the messages of a queue's DLQ back to it, the queue named by its role", async () => {
    const dlq = world.state.queues.ingress.dlqUrl as string;
    for (const n of [1, 2])
      await world.clients.sqs.send(new SendMessageCommand({ QueueUrl: dlq, MessageBody: `{"n":${n}}` }));
    const { io, out } = capture(world.target);

    expect(await redrive.run(io, args({}, 'ingress'))).toBe(0);

    expect(out).toEqual(['moved 2 message(s) from w-ingress-dlq to w-ingress']);
    expect(await waiting(world.provisioned.queueUrls.ingress)).toBe(2);
  });

  it('finds a responder queue by its short name, and --max bounds what it moves', async () => {
    const ref = world.state.responderQueues[0];
    for (const n of [1, 2, 3])
      await world.clients.sqs.send(new SendMessageCommand({ QueueUrl: ref?.dlqUrl, MessageBody: `${n}` }));
    const { io, json } = capture(world.target, true);

    await redrive.run(io, args({ max: '2' }, 'desk-a'));

    expect(json[0]).toEqual({ queue: 'w-desk-a', dlq: 'w-desk-a-dlq', moved: 2 });
  });

  it('needs a queue, and names what it takes when there is none of that name', async () => {
    await expect(redrive.run(capture(world.target).io, args())).rejects.toThrow(
      'redrive needs a queue (e.g. reply-0, ingress, bank-1)',
    );
    await expect(redrive.run(capture(world.target).io, args({}, 'nowhere'))).rejects.toThrow(
      /^no queue "nowhere": use a role \(.*ingress.*\), reply-<n>, a responder queue or a queue name$/,
    );
  });
});
