import { describe, expect, it } from 'vitest';
import { observeOutputs, startConsumers } from '../../../local/consumers.ts';
import { QueueDrainer } from '../../../local/drainer.ts';
import { LiveFigures, type OutputRecord } from '../../../local/live-figures.ts';
import { QueuePoller } from '../../../local/poller.ts';
import type { OutputMessage, OutputPublisher } from '../../../shared/ports.ts';
import { localWorld } from './world.ts';

/**
 * The local runtime's consumers over a topology provisioned on the simulation's models: one poller
 * per consumed queue and per reply partition, with the topology's event-source settings; a drainer
 * instead for a partition drained on a schedule. And the output observer the dashboard is fed by.
 */

describe('startConsumers', () => {
  it('starts a poller for the ingress, each reply partition, the timer and the control queue', async () => {
    const world = await localWorld();

    const consumers = startConsumers(world.topology, world.provisioned, world.context, world.clients.sqs, 0);
    try {
      expect(consumers.map((c) => [c.name, c.role])).toEqual([
        ['w-ingress', 'fan-out'],
        ['w-reply-0', 'reply'],
        ['w-reply-1', 'reply'],
        ['w-timer', 'timer'],
        ['w-control', 'control'],
      ]);
      for (const consumer of consumers) expect(consumer.poller).toBeInstanceOf(QueuePoller);
    } finally {
      await Promise.all(consumers.map((c) => c.poller.stop()));
    }
  });

  it('gives a partition drained on a schedule a drainer instead of a poller', async () => {
    const world = await localWorld({ replyDrainIntervalSeconds: 60 });

    const consumers = startConsumers(world.topology, world.provisioned, world.context, world.clients.sqs, 0);
    try {
      const replies = consumers.filter((c) => c.role === 'reply');
      expect(replies).toHaveLength(2);
      for (const consumer of replies) expect(consumer.poller).toBeInstanceOf(QueueDrainer);
    } finally {
      await Promise.all(consumers.map((c) => c.poller.stop()));
    }
  });
});

describe('observeOutputs', () => {
  const message = {
    id: 'o-1',
    type: 'fanin.aggregate.completed',
    aggregateId: 'a',
    definition: 'd',
  } as unknown as OutputMessage;

  it('records an output after it went out, and hands the record on', async () => {
    const published: string[] = [];
    const inner: OutputPublisher = { publish: async (_role, m) => void published.push(m.id) };
    const metrics = new LiveFigures({ prefix: 'p', watermarks: { low: 1, high: 2, highThreshold: 3 } });
    const records: OutputRecord[] = [];

    await observeOutputs(inner, metrics, (r) => records.push(r)).publish('completed', message);

    expect(published).toEqual(['o-1']);
    expect(records.map((r) => [r.role, r.id])).toEqual([['completed', 'o-1']]);
    expect(metrics.snapshot().aggregates.completed).toBe(1);
  });

  it('records nothing of an output that failed to go out, and hands a repeat on once', async () => {
    const metrics = new LiveFigures({ prefix: 'p', watermarks: { low: 1, high: 2, highThreshold: 3 } });
    const records: OutputRecord[] = [];
    const failing: OutputPublisher = {
      publish: async () => {
        throw new Error('throttled');
      },
    };
    const working: OutputPublisher = { publish: async () => undefined };

    await expect(
      observeOutputs(failing, metrics, (r) => records.push(r)).publish('completed', message),
    ).rejects.toThrow('throttled');
    expect(metrics.snapshot().totals.outputs).toBe(0);
    const observed = observeOutputs(working, metrics, (r) => records.push(r));
    await observed.publish('completed', message);
    await observed.publish('completed', message);
    expect(records).toHaveLength(1);
  });
});
