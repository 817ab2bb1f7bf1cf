/**
 * The output collector: consumes fanin's output queues as a downstream consumer would, keeping the first
 * result of each aggregate and counting every output by type. The SQS client is a stand-in.
 */
import type { SQSClient } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { OutputCollector } from '../../../../bench/rig/collector.ts';

/** A client whose queues hold `bodies` (delivered ten at a time); records what was deleted. */
function queues(bodies: Record<string, object[]>, failFirst = 0) {
  const deleted: string[] = [];
  let failures = failFirst;
  const client = {
    send: async (command: { constructor: { name: string }; input: Record<string, unknown> }) => {
      const url = String(command.input.QueueUrl);
      if (command.constructor.name === 'DeleteMessageBatchCommand') {
        for (const e of command.input.Entries as { ReceiptHandle: string }[]) deleted.push(e.ReceiptHandle);
        return {};
      }
      if (failures > 0) {
        failures -= 1;
        throw new Error('unavailable');
      }
      await new Promise((resolve) => setTimeout(resolve, 2));
      const batch = (bodies[url] ?? []).splice(0, 10);
      return {
        Messages: batch.map((body, i) => ({ Body: JSON.stringify(body), ReceiptHandle: `${url}-${i}` })),
      };
    },
  } as unknown as SQSClient;
  return { client, deleted };
}

const output = (type: string, aggregateId: string, n = 0) => ({
  type: `fanin.aggregate.${type}`,
  aggregateId,
  n,
});

describe('the output collector', () => {
  it('keeps the first result of each aggregate, completed or timed out, and counts every output by type', async () => {
    const { client, deleted } = queues({
      completed: [output('completed', 'a', 1), output('completed', 'a', 2)],
      'timed-out': [output('timed-out', 'b')],
      error: [output('error', 'c')],
    });
    const collector = new OutputCollector(client, ['completed', 'timed-out', 'error']);
    collector.start();
    await collector.waitFor(['a', 'b'], 5_000);
    await collector.stop();
    expect(collector.results.get('a')?.body).toEqual(output('completed', 'a', 1));
    expect(collector.results.get('b')?.type).toBe('fanin.aggregate.timed-out');
    expect(collector.results.has('c')).toBe(false);
    expect(Object.fromEntries(collector.types)).toEqual({
      'fanin.aggregate.completed': 2,
      'fanin.aggregate.timed-out': 1,
      'fanin.aggregate.error': 1,
    });
    expect(deleted.sort()).toEqual(['completed-0', 'completed-1', 'error-0', 'timed-out-0']);
  });

  it('counts a failed receive as an error and carries on', async () => {
    const { client } = queues({ completed: [output('completed', 'a')] }, 1);
    const collector = new OutputCollector(client, ['completed']);
    collector.start();
    await collector.waitFor(['a'], 5_000);
    await collector.stop();
    expect(collector.errors).toBe(1);
  });

  it('gives up on a wait after its timeout, naming how many results are missing', async () => {
    const { client } = queues({ completed: [output('completed', 'a')] });
    const collector = new OutputCollector(client, ['completed']);
    collector.start();
    await expect(collector.waitFor(['a', 'x', 'y'], 100)).rejects.toThrow(
      /2 of 3 aggregates have no result after 100 ms \(e\.g\. x, y\)/,
    );
    await collector.stop();
  });
});
