import { CreateQueueCommand } from '@aws-sdk/client-sqs';
import { beforeEach, describe, expect, it } from 'vitest';
import { send } from '../../../../local/cli/commands/aggregates.ts';
import { purge } from '../../../../local/cli/commands/control.ts';
import {
  checkDefinition,
  findQueue,
  findRefusal,
  sendControl,
  waitClosed,
  when,
} from '../../../../local/cli/shared.ts';
import { args, capture, type LocalWorld, localWorld } from '../world.ts';

/**
 * What the CLI's commands share, over a local runtime in memory: a queue found by what a user
 * types, the definition check, waiting for aggregates to close, reading a refusal off the error
 * output without taking it, times as ISO 8601 with how long ago. The commands' own tests and the
 * integration tests use them through the commands; this pins each case directly.
 */

let world: LocalWorld;
beforeEach(async () => {
  world = await localWorld();
});

describe('when', () => {
  const now = Date.UTC(2026, 0, 1, 12);

  it('gives the ISO time with how long ago or ahead', () => {
    expect(when(now - 90_000, now)).toBe('2026-01-01T11:58:30.000Z (1 min 30 s ago)');
    expect(when(now + 2_000, now)).toBe('2026-01-01T12:00:02.000Z (in 2.0 s)');
  });

  it('gives a dash for a time not set', () => {
    expect(when(undefined, now)).toBe('-');
  });
});

describe('findQueue', () => {
  it.each([
    ['ingress', 'w-ingress'],
    ['reply-1', 'w-reply-1'],
    ['desk-a', 'w-desk-a'],
    ['w-desk-b', 'w-desk-b'],
    ['out-completed', 'w-out-completed.fifo'],
  ])('finds %s', async (typed, name) => {
    expect((await findQueue(world.target, typed)).name).toBe(name);
  });

  it('finds a queue by its URL', async () => {
    const url = world.provisioned.queueUrls.control;
    expect((await findQueue(world.target, url)).url).toBe(url);
  });

  it('finds any other queue by its name with or without the prefix, and its DLQ when there is one', async () => {
    await world.clients.sqs.send(new CreateQueueCommand({ QueueName: 'w-extra' }));
    await world.clients.sqs.send(new CreateQueueCommand({ QueueName: 'w-extra-dlq' }));

    const found = await findQueue(world.target, 'extra');

    expect(found).toMatchObject({ name: 'w-extra', dlqName: 'w-extra-dlq' });
    expect(found.dlqUrl).toMatch(/w-extra-dlq$/);
  });

  it('says what it takes when nothing has that name', async () => {
    await expect(findQueue(world.target, 'nope')).rejects.toThrow(
      /^no queue "nope": use a role \(ingress, .*\), reply-<n>, a responder queue or a queue name$/,
    );
  });
});

describe('checkDefinition', () => {
  it('passes a definition of the runtime and refuses another, naming them', () => {
    expect(() => checkDefinition(world.target, 'orders')).not.toThrow();
    expect(() => checkDefinition(world.target, 'x')).toThrow(
      'unknown definition "x" (this runtime has quotes, orders, survey, auction)',
    );
  });

  it('lets any name through when the target does not know its definitions (a stack)', () => {
    const { definitions: _d, ...stack } = world.target;
    expect(() => checkDefinition(stack, 'x')).not.toThrow();
  });
});

describe('waitClosed', () => {
  it('returns the closed headers, and what is still open when the time runs out, telling which never opened', async () => {
    await send.run(capture(world.target).io, args({ 'aggregate-id': 'o-1' }, 'orders'));
    await send.run(capture(world.target).io, args({ 'aggregate-id': 'o-2' }, 'orders'));
    await world.deliver('ingress');
    await purge.run(capture(world.target).io, args({ 'aggregate-id': 'o-1' }));
    await world.deliver('control');
    const { io, err } = capture(world.target);

    const result = await waitClosed(io, world.target, ['o-1', 'o-2', 'o-3'], 300, 'waiting');

    expect(result.closed.map((h) => [h.aggregateId, h.outcome])).toEqual([['o-1', 'purged']]);
    expect(result.open).toEqual(['o-2', 'o-3']);
    expect(result.neverOpened).toEqual(['o-3']);
    expect(err.at(-1)).toBe('waiting: 2 of 3 still open after 300 ms');
  });

  it('stops at the refusal the look-up finds', async () => {
    const { io, err } = capture(world.target);

    const result = await waitClosed(io, world.target, ['n-1'], 5_000, 'waiting', async () => 'no good');

    expect(result.refusal).toBe('no good');
    expect(err.at(-1)).toBe('waiting: refused');
  });
});

describe('findRefusal', () => {
  it('reads the reason of a refused control command and leaves the error output as it was', async () => {
    const messageId = await sendControl(world.target, { command: 'nonsense' });
    await world.deliver('control');

    const reason = await findRefusal(world.target, (m) => m.messageId === messageId);
    const again = await findRefusal(world.target, (m) => m.messageId === messageId);

    expect(reason).toEqual(expect.any(String));
    expect(again).toBe(reason);
  });

  it('finds nothing on an empty error output', async () => {
    expect(await findRefusal(world.target, () => true)).toBeUndefined();
  });
});
