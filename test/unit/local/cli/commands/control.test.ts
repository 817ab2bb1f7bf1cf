import { beforeEach, describe, expect, it } from 'vitest';
import { send } from '../../../../../local/cli/commands/aggregates.ts';
import { complete, purge, setParameters } from '../../../../../local/cli/commands/control.ts';
import { CommandError, UsageError } from '../../../../../local/cli/io.ts';
import { args, capture, DEFINITIONS, type LocalWorld, localWorld } from '../../world.ts';

/**
 * The control commands' own fast test (`purge`, `complete`, `set-parameters`) over a local runtime
 * in memory, the control consumer delivering when the test says: which aggregates a command names,
 * what it refuses before sending anything, what it prints when it waits.
 * test/integration/tooling/cli.test.ts runs them as processes against the emulators.
 */

let world: LocalWorld;
beforeEach(async () => {
  world = await localWorld();
});

async function opened(aggregateId: string, definition = 'orders'): Promise<void> {
  await send.run(capture(world.target).io, args({ 'aggregate-id': aggregateId }, definition));
  await world.deliver('ingress');
}

/** Delivers the control queue (and what it sends on) while `run` waits. */
function serveControl(): () => void {
  const timer = setInterval(() => {
    void world.deliver('control').then(() => world.deliver('timer'));
  }, 100);
  return () => clearInterval(timer);
}

describe('fanin purge and complete', () => {
  it.each([[{}], [{ 'aggregate-id': 'a', all: true }], [{ definition: 'orders', all: true }]])(
    'need exactly one of --aggregate-id, --definition, --all (given %o)',
    async (values) => {
      for (const command of [purge, complete]) {
        const run = command.run(capture(world.target).io, args(values));
        await expect(run).rejects.toBeInstanceOf(UsageError);
        await expect(run).rejects.toThrow('give exactly one of --aggregate-id, --definition or --all');
      }
    },
  );

  it('refuse an aggregate fanin has no record of with exit 1, sending nothing', async () => {
    const run = purge.run(capture(world.target).io, args({ 'aggregate-id': 'ghost' }));

    await expect(run).rejects.toBeInstanceOf(CommandError);
    await expect(run).rejects.toThrow('no aggregate "ghost": it was never opened');
    expect(await world.deliver('control')).toBe(0);
  });

  it('purge sends the control command and says where its result goes', async () => {
    await opened('o-1');
    const { io, out } = capture(world.target);

    expect(await purge.run(io, args({ 'aggregate-id': 'o-1' }))).toBe(0);

    expect(out[0]).toMatch(/^sent purge to w-control \(.+\); the result goes to w-out-status\.fifo$/);
    await world.deliver('control');
    expect((await world.context().store.getHeader('o-1'))?.outcome).toBe('purged');
  });

  it('--json of a purge is the command sent, with its message id and the control queue', async () => {
    await opened('o-2');
    const { io, json } = capture(world.target, true);

    await purge.run(io, args({ definition: 'orders' }));

    expect(json[0]).toMatchObject({
      command: { command: 'purge', definition: 'orders' },
      controlQueue: world.provisioned.queueUrls.control,
    });
  });

  it('complete --wait prints each aggregate of the definition with its outcome', async () => {
    await opened('o-3');
    await opened('o-4');
    const { io, out } = capture(world.target);
    const stop = serveControl();

    try {
      expect(await complete.run(io, args({ definition: 'orders', wait: true, timeout: '20' }))).toBe(0);
    } finally {
      stop();
    }

    expect(out.sort()).toEqual(['o-3: completed', 'o-4: completed']);
  });

  it('--wait says so when nothing active matched', async () => {
    const { io, out } = capture(world.target);

    await purge.run(io, args({ all: true, wait: true }));

    expect(out).toEqual(['no active aggregates matched']);
  });

  it('--wait fails with exit 1 naming what is still open when the timeout runs out', async () => {
    await opened('o-5');

    await expect(
      purge.run(capture(world.target).io, args({ 'aggregate-id': 'o-5', wait: true, timeout: '0.3' })),
    ).rejects.toThrow('still open after 300 ms: o-5');
  });
});

describe('fanin complete by an external event', () => {
  it('builds an EventBridge event from --source, --detail-type and --detail', async () => {
    await opened('o-6');
    const { io, json } = capture(world.target, true);

    await complete.run(
      io,
      args({ source: 'example.orders', 'detail-type': 'OrderApproved', detail: '{"aggregateId":"o-6"}' }),
    );

    const sent = json[0] as { command: Record<string, unknown> };
    expect(sent.command).toMatchObject({
      version: '0',
      source: 'example.orders',
      'detail-type': 'OrderApproved',
      region: 'us-east-1',
      detail: { aggregateId: 'o-6' },
    });
  });

  it('--source needs --detail-type', async () => {
    await expect(complete.run(capture(world.target).io, args({ source: 'example.orders' }))).rejects.toThrow(
      '--source needs --detail-type',
    );
  });

  it('refuses an --event that is not an EventBridge event', async () => {
    await expect(complete.run(capture(world.target).io, args({ event: '{"detail":{}}' }))).rejects.toThrow(
      '--event must be an EventBridge event: an object with source and detail-type',
    );
  });

  it('refuses an event naming no aggregate for a definition not completed whole by one', async () => {
    const patterned = await localWorld({
      definitions: [
        {
          name: 'approvals',
          completion: { strategy: 'external' },
          timeoutSeconds: 60,
          externalEventPattern: { source: ['example.orders'] },
        },
      ],
    });

    await expect(
      complete.run(
        capture(patterned.target).io,
        args({ event: '{"source":"example.orders","detail-type":"X"}' }),
      ),
    ).rejects.toThrow('add --detail \'{"aggregateId":"<id>"}\'');
  });
});

describe('fanin set-parameters', () => {
  it.each([
    [{ 'timeout-seconds': '0' }, '--timeout-seconds must be an integer from 1 to 31536000'],
    [{ 'timeout-seconds': '31536001' }, '--timeout-seconds must be an integer from 1 to 31536000'],
    [{ count: '100001' }, '--count must be an integer from 1 to 100000'],
    [{ threshold: 'high' }, '--threshold must be a number (given "high")'],
    [
      { 'recipient-timeout-seconds': '0' },
      '--recipient-timeout-seconds must be an integer from 1 to 31536000',
    ],
    [{}, 'give --timeout-seconds, --threshold, --count, --recipient-timeout-seconds or --reset'],
  ])('refuses %o as a usage error, nothing sent', async (values, message) => {
    const run = setParameters.run(capture(world.target).io, args(values, 'orders'));

    await expect(run).rejects.toBeInstanceOf(UsageError);
    await expect(run).rejects.toThrow(message);
    expect(await world.deliver('control')).toBe(0);
  });

  it('waits until the control handler applied the parameters', async () => {
    const { io, out } = capture(world.target);
    const stop = serveControl();

    try {
      expect(await setParameters.run(io, args({ 'timeout-seconds': '90' }, 'orders'))).toBe(0);
    } finally {
      stop();
    }

    expect(out).toEqual(['orders: parameters {"timeoutSeconds":90} applied']);
    expect(await world.context().store.getParameters('orders')).toEqual({ timeoutSeconds: 90 });
  });

  it("sets each recipient's own deadline of a definition with responders, for the aggregates opened afterwards", async () => {
    world = await localWorld({
      definitions: [
        ...DEFINITIONS,
        {
          name: 'banks',
          fanOut: { type: 'recipient-list', recipients: ['w-desk-a', 'w-desk-b'] },
          completion: { strategy: 'all' },
          timeoutSeconds: 3600,
          responders: { timeoutSeconds: 60 },
        },
      ],
    });
    const stop = serveControl();

    try {
      expect(
        await setParameters.run(
          capture(world.target).io,
          args({ 'recipient-timeout-seconds': '30' }, 'banks'),
        ),
      ).toBe(0);
    } finally {
      stop();
    }
    await opened('b-1', 'banks');

    expect((await world.context().store.getHeader('b-1'))?.params.recipientTimeoutSeconds).toBe(30);
  });

  it('ends with exit 1 and the reason when a recipient deadline is set for a definition without responders', async () => {
    const stop = serveControl();

    try {
      await expect(
        setParameters.run(capture(world.target).io, args({ 'recipient-timeout-seconds': '30' }, 'orders')),
      ).rejects.toThrow(
        /^orders: parameters \{"recipientTimeoutSeconds":30\} refused to w-out-error\.fifo: .*"orders" has no responders, so no recipient deadline to set/,
      );
    } finally {
      stop();
    }
    expect(await world.context().store.getParameters('orders')).toEqual({});
  });

  it('ends with exit 1 and the reason from the error output when the control handler refuses it', async () => {
    const stop = serveControl();

    try {
      await expect(
        setParameters.run(capture(world.target).io, args({ count: '2' }, 'orders')),
      ).rejects.toThrow(/^orders: parameters \{"count":2\} refused to w-out-error\.fifo: .+/);
    } finally {
      stop();
    }
  });
});
